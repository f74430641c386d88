"""The sys.monitoring backend (Python 3.12+) against sys.settrace and plain python.

Run: ``python tests/benchmarks/bench_monitoring.py`` (with Python 3.12 or later; on 3.11 it
measures sys.settrace alone and fails, as the targets are the monitoring backend's). With
``BENCH_PYTHON_311`` naming a Python 3.11 that has GradStep installed, the same run also measures
sys.settrace on 3.11 there and prints it beside. Each lesson times its own work and prints it, so
start-up and ``import torch`` are not counted. Plain, monitored and traced
(``GRADSTEP_TRACER=settrace``) runs alternate in one invocation and each keeps its best time, so a
burst of load does not land on one side only. The training loop runs its 200 iterations five times
in each process and reports its best pass: one pass of it is 0.15 to 0.3 s, and on this shared
2-core machine the same pass, run cold in a fresh process, varied by 70 % between runs (192 to
329 ms, plain and monitored alike), more than the 10 % the target resolves. The first pass, where
the monitor's one-time work happens (one callback per library function, which it then disables),
is printed beside it.

Targets (issue 29), continuing to a breakpoint that is never hit: a 3-layer ``nn.Sequential``
training loop of 200 iterations at most 1.10x plain python; a loop calling a small lesson function
each iteration at most 1.5x. Printed beside them: a step over a line that runs that training loop.
Then every lesson runs from breakpoint to breakpoint (one on every 4th executable line) under both
backends, which must pause at the same places.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from _common import ROOT, Driver, line_of, m, plain_output, seconds_printed, write
from bench_stepping import CALLS  # a lesson function called 300,000 times

from app.code_lines import executable_lines
from app.lesson.event_monitor import BACKEND_VARIABLE

TRAINING = write("training_loop.py", """
    import time
    import torch

    def never_called():
        return 0                    # breakpoint elsewhere

    def train():
        begun = time.perf_counter()
        for step in range(200):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
        return time.perf_counter() - begun

    def passes(count):
        return [train() for _ in range(count)]

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(256, 64), torch.randn(256, 1)
    seconds = passes(5)             # step over this
    print("elapsed", min(seconds))
    print("first", seconds[0])
""")


LESSONS = sorted((ROOT / "lessons").glob("[0-9]*.py"))
#: Every this many executable lines of a lesson holds a breakpoint in the agreement run.
EVERY = 4
#: Pauses followed per lesson and backend, at most.
MAX_PAUSES = 400

#: The environment variable naming a Python 3.11 with GradStep installed, to measure sys.settrace there too.
PYTHON_311_VARIABLE = "BENCH_PYTHON_311"
TARGETS = {TRAINING: 1.10, CALLS: 1.5}
NAMES = {TRAINING: "nn.Sequential training loop, 200 iterations (best of 5 passes)",
         CALLS: "lesson function called 300,000 times"}


def use_backend(backend: str | None) -> None:
    """Lesson processes spawned from now on trace with ``backend`` (None: the monitor where there is one)."""
    if backend is None:
        os.environ.pop(BACKEND_VARIABLE, None)
    else:
        os.environ[BACKEND_VARIABLE] = backend


def timed_run(path: str, backend: str | None) -> str:
    """The output of one run to the end with a breakpoint that is never hit, in a fresh interpreter of ``backend``."""
    use_backend(backend)
    driver = Driver()  # a fresh spawn reads the variable
    try:
        return driver.run_to_end(path, {line_of(path, "breakpoint elsewhere"): None})
    finally:
        driver.close()
        use_backend(None)


def stepped_over(path: str, backend: str | None) -> str:
    """The output of the line ``# step over this``, run by one step over, in a fresh interpreter of ``backend``."""
    use_backend(backend)
    driver = Driver()
    try:
        driver.session.breakpoints[path] = {line_of(path, "step over this"): None}
        driver.session.start(path, stop_on_entry=False)
        out, actions = [], ["step_over", "resume"]
        while not isinstance(message := driver.next((m.Output, m.Paused, m.Ended), timeout=600), m.Ended):
            if isinstance(message, m.Output) and message.stream == "stdout":
                out.append(message.text)
            elif isinstance(message, m.Paused):
                getattr(driver.session, actions.pop(0))()
        return "".join(out)
    finally:
        driver.close()
        use_backend(None)


def breakpoint_pauses(path: str, backend: str | None) -> list[tuple[str, int]]:
    """Where a run that continues from breakpoint to breakpoint pauses, with every ``EVERY``-th line one."""
    source = Path(path).read_text(encoding="utf-8")
    lines = sorted(line for line in executable_lines(compile(source, path, "exec")) if line > 0)[::EVERY]
    use_backend(backend)
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
        use_backend(None)


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


def alternate(path: str, measure: Callable[[str, str | None], str], runs: int, monitored: bool) -> dict[str, list[str]]:
    """The outputs of ``runs`` alternating runs each: plain, settrace and (where there is one) sys.monitoring."""
    outputs: dict[str, list[str]] = {"plain": [], "settrace": [], "monitoring": []}
    for _ in range(runs):
        outputs["plain"].append(plain_output(path))
        outputs["settrace"].append(measure(path, "settrace"))
        if monitored:
            outputs["monitoring"].append(measure(path, None))
    return outputs


def best_ratios(outputs: dict[str, list[str]],
                figure: Callable[[str], float] = seconds_printed) -> tuple[float, float, float | None]:
    """``(plain seconds, settrace ratio, sys.monitoring ratio or None)``: each side's best ``figure`` of its runs."""
    best = {kind: min(map(figure, texts)) for kind, texts in outputs.items() if texts}
    base = best["plain"]
    return base, best["settrace"] / base, best["monitoring"] / base if "monitoring" in best else None


def step_over_line(monitored: bool) -> str:
    """A step over the training loop's line under each backend, against the loop run plainly."""
    base, trace, monitor = best_ratios(alternate(TRAINING, stepped_over, 3, monitored))
    line = f"a step over the line that runs it: plain {base * 1000:.0f} ms, settrace {trace:.2f}x"
    return line + (f", sys.monitoring {monitor:.2f}x" if monitor is not None else "")


def beside_311() -> list[str]:
    """This benchmark's measurements on ``BENCH_PYTHON_311`` (sys.settrace alone), or why there are none."""
    python = os.environ.get(PYTHON_311_VARIABLE)
    if not python:
        return [f"(no Python 3.11 beside: set {PYTHON_311_VARIABLE} to measure sys.settrace there in this run)"]
    done = subprocess.run([python, __file__], capture_output=True, text=True, check=False, cwd=ROOT,
                          env={k: v for k, v in os.environ.items() if k != PYTHON_311_VARIABLE})
    return [f"  {line}" for line in done.stdout.splitlines()[:-1]]


def main() -> int:
    monitored = hasattr(sys, "monitoring")
    print(f"Python {sys.version.split()[0]}; sys.monitoring backend: {'yes' if monitored else 'no (needs 3.12+)'}")
    passed = monitored
    for path, target in TARGETS.items():
        outputs = alternate(path, timed_run, 4, monitored)
        base, trace, ratio = best_ratios(outputs)
        line = f"{NAMES[path]}: plain {base * 1000:.0f} ms, settrace {trace:.2f}x"
        if ratio is not None:
            line += f", sys.monitoring {ratio:.2f}x (target <= {target:.2f}x)"
            passed = passed and ratio <= target
        print(line)
        if path == TRAINING:  # its best pass above; the first, cold one beside it
            base, trace, ratio = best_ratios(outputs, lambda text: seconds_printed(text, "first"))
            print(f"  its first pass: plain {base * 1000:.0f} ms, settrace {trace:.2f}x"
                  + (f", sys.monitoring {ratio:.2f}x" if ratio is not None else ""))
    print(step_over_line(monitored))
    if monitored:
        print("beside it, on Python 3.11:", *beside_311(), sep="\n")
        matched, total, differ = agreement()
        print(f"breakpoints on every {EVERY}th line of {len(LESSONS)} lessons, continued to the end: "
              f"{matched} of {total} pauses the same under sys.monitoring and sys.settrace"
              + (f" (differ: {', '.join(differ)})" if differ else ""))
        passed = passed and not differ
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
