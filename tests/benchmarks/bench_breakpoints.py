"""Continuing to a breakpoint that is never hit: sys.monitoring (Python 3.12+) against sys.settrace and plain python.

Run: ``python tests/benchmarks/bench_breakpoints.py`` (with Python 3.12 or later; on 3.11 it
measures sys.settrace alone and fails, as the targets are the monitoring backend's). Each
lesson times its own work and prints it, so start-up and ``import torch`` are not counted.
Plain, monitored and traced (``GRADSTEP_TRACER=settrace``) runs alternate in one invocation
and each keeps its best time, so a burst of load does not land on one side only.
Targets (issue 29): a 3-layer ``nn.Sequential`` training loop of 200 iterations at most
1.10x plain python; a loop calling a small lesson function each iteration at most 1.5x.
Then every lesson runs from breakpoint to breakpoint (one on every 4th executable line)
under both backends, which must pause at the same places.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _common import ROOT, Driver, line_of, m, plain_output, seconds_printed, write
from bench_stepping import CALLS  # a lesson function called 300,000 times

from app.code_lines import executable_lines
from app.lesson.breakpoint_monitor import BACKEND_VARIABLE

TRAINING = write("training_loop.py", """
    import time
    import torch

    def never_called():
        return 0                    # breakpoint elsewhere

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 64), torch.randn(256, 1)
    start = time.perf_counter()
    for step in range(200):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    print("elapsed", time.perf_counter() - start)
""")


LESSONS = sorted((ROOT / "lessons").glob("[0-9]*.py"))
#: Every this many executable lines of a lesson holds a breakpoint in the agreement run.
EVERY = 4
#: Pauses followed per lesson and backend, at most.
MAX_PAUSES = 400

TARGETS = {TRAINING: 1.10, CALLS: 1.5}
NAMES = {TRAINING: "nn.Sequential training loop, 200 iterations", CALLS: "lesson function called 300,000 times"}


def timed_run(path: str, backend: str | None) -> float:
    """One run to the end with a breakpoint that is never hit, in a fresh interpreter of the given backend."""
    if backend is None:
        os.environ.pop(BACKEND_VARIABLE, None)
    else:
        os.environ[BACKEND_VARIABLE] = backend
    driver = Driver()  # a fresh spawn reads the variable
    try:
        return seconds_printed(driver.run_to_end(path, {line_of(path, "breakpoint elsewhere"): None}))
    finally:
        driver.close()
        os.environ.pop(BACKEND_VARIABLE, None)


def breakpoint_pauses(path: str, backend: str | None) -> list[tuple[str, int]]:
    """Where a run that continues from breakpoint to breakpoint pauses, with every ``EVERY``-th line one."""
    source = Path(path).read_text(encoding="utf-8")
    lines = sorted(line for line in executable_lines(compile(source, path, "exec")) if line > 0)[::EVERY]
    if backend is None:
        os.environ.pop(BACKEND_VARIABLE, None)
    else:
        os.environ[BACKEND_VARIABLE] = backend
    driver = Driver()
    try:
        driver.session.breakpoints[path] = {line: None for line in lines}
        driver.session.start(path, stop_on_entry=False)
        where = []
        while isinstance(message := driver.next((m.Paused, m.Ended), timeout=300), m.Paused):
            where.append((message.snapshot["function"], message.snapshot["line"]))
            if len(where) >= MAX_PAUSES:
                break
            driver.session.resume()
        return where
    finally:
        driver.close()
        os.environ.pop(BACKEND_VARIABLE, None)


def agreement() -> tuple[int, int, list[str]]:
    """(pauses that match, pauses in all, lessons that differ) between sys.monitoring and sys.settrace."""
    matched = total = 0
    differ = []
    for lesson in LESSONS:
        monitored, traced = breakpoint_pauses(str(lesson), None), breakpoint_pauses(str(lesson), "settrace")
        total += max(len(monitored), len(traced))
        matched += sum(a == b for a, b in zip(monitored, traced, strict=False))
        if monitored != traced:
            differ.append(lesson.name)
    return matched, total, differ


def main() -> int:
    monitored = hasattr(sys, "monitoring")
    print(f"Python {sys.version.split()[0]}; sys.monitoring backend: {'yes' if monitored else 'no (needs 3.12+)'}")
    passed = monitored
    for path, target in TARGETS.items():
        plain, monitor, trace = [], [], []
        for _ in range(4):
            plain.append(seconds_printed(plain_output(path)))
            trace.append(timed_run(path, "settrace"))
            if monitored:
                monitor.append(timed_run(path, None))
        base = min(plain)
        line = f"{NAMES[path]}: plain {base * 1000:.0f} ms, settrace {min(trace) / base:.2f}x"
        if monitored:
            ratio = min(monitor) / base
            line += f", sys.monitoring {ratio:.2f}x (target <= {target:.2f}x)"
            passed = passed and ratio <= target
        print(line)
    if monitored:
        matched, total, differ = agreement()
        print(f"breakpoints on every {EVERY}th line of {len(LESSONS)} lessons, continued to the end: "
              f"{matched} of {total} pauses the same under sys.monitoring and sys.settrace"
              + (f" (differ: {', '.join(differ)})" if differ else ""))
        passed = passed and not differ
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
