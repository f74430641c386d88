"""Time-travel history cost: bytes per recorded step, peak memory, recording throughput, jumps to past steps.

Run: ``python tests/benchmarks/bench_history.py [steps]``. A hand-written RNN lesson
(``h = torch.tanh(x_t @ W_xh + h @ W_hh + b)`` over a 50,000-step sequence, 24 variables of which
20 tensors, a loss and ``backward()`` every 32 steps, then ``h.detach()`` so the graph grows for 32
steps and starts again) is recorded for 100,000 pauses with ``session.record(limit=100_000)``,
every message fed to a :class:`~app.history.History` on the session's reader thread (so a slow
history slows the recording down instead of queueing snapshots). Jumps are timed with the garbage
collector left as it is. A second, shorter recording checks the history's own byte count against
``tracemalloc``. Targets: 100,000 steps under 200 MB (the history's measured size and the process's
peak RSS growth), recorded at 5,000 steps/s or more (on a quiet machine: a shared one's speed varies
up to 2x), a jump to a random past step at most 50 ms at the 99th percentile (the max is printed
beside it). The last line is ``PASS`` or ``FAIL``.
"""

from __future__ import annotations

import gc
import os
import random
import resource
import statistics
import sys
import threading
import time
import tracemalloc

from _common import m, write  # puts the repository on sys.path

from app.history import History  # noqa: E402
from app.session import Session  # noqa: E402

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000  # a smaller count for a quick look
CALIBRATION_STEPS = 3_000
JUMPS = 1000
TARGET_BYTES = 200 * 2**20
TARGET_JUMP = 0.050
TARGET_RATE = 5_000  # recorded steps per second, lesson process, transport and history together

LESSON = write("rnn_history.py", """
    \"\"\"A hand-written RNN over a long sequence, trained by truncated backpropagation through time.\"\"\"
    import torch

    torch.manual_seed(0)
    T, D, H, K = 50_000, 8, 16, 32        # sequence length, input and hidden sizes, truncation
    W_xh = (torch.randn(D, H) * 0.3).requires_grad_()
    W_hh = (torch.randn(H, H) * 0.3).requires_grad_()
    b = torch.zeros(H, requires_grad=True)
    W_hy = (torch.randn(H, 1) * 0.3).requires_grad_()
    b_y = torch.zeros(1, requires_grad=True)
    xs = torch.randn(T, 1, D)
    ys = torch.randn(T, 1, 1)
    lr = torch.tensor(0.01)
    h0 = torch.zeros(1, H)
    mask = torch.ones(1, H)
    scale = torch.tensor(1.0)
    offset = torch.zeros(1)
    e1, e2, e3, e4, e5 = (torch.full((2,), float(i)) for i in range(5))
    h = h0
    for t in range(T):
        x_t = xs[t]
        h = torch.tanh(x_t @ W_xh + h @ W_hh + b)
        if t % K == K - 1:
            loss = ((h @ W_hy + b_y - ys[t]) ** 2).mean()
            loss.backward()
            h = h.detach()
""")


class Recorder:
    """Feeds a history from the session's listener and tells when the recording has paused for real."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.paused = threading.Event()
        self.ended: m.Ended | None = None

    def __call__(self, message: object) -> None:
        if isinstance(message, m.Output):
            self.history.add_output(message.stream, message.text)
        elif isinstance(message, m.Paused):
            self.history.add_pause(message.snapshot)
            if not message.snapshot.get("recording"):
                self.paused.set()
        elif isinstance(message, m.Ended):
            self.ended = message
            self.paused.set()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux ``/proc/<pid>/stat``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def record(history: History, steps: int) -> tuple[float, float, float]:
    """Record ``steps`` pauses of the lesson into ``history``.

    Returns the seconds the recording took and the CPU seconds the lesson process and this
    process (the session's reader and the history) spent meanwhile: the two run side by side,
    so the larger of the two bounds the rate, whatever else the machine is doing.
    """
    recorder = Recorder(history)
    session = Session(recorder, warm_spare=False)
    try:
        session.start(LESSON)
        if not recorder.paused.wait(120):
            raise RuntimeError("the lesson never paused on its first line")
        recorder.paused.clear()
        pid = session._process.pid
        lesson_cpu, app_cpu = cpu_seconds(pid), time.process_time()
        start = time.perf_counter()
        session.record(limit=steps)
        if not recorder.paused.wait(3600):
            raise RuntimeError("the recording did not finish within an hour")
        elapsed = time.perf_counter() - start
        lesson_cpu, app_cpu = cpu_seconds(pid) - lesson_cpu, time.process_time() - app_cpu
        if recorder.ended is not None:
            raise RuntimeError(f"the lesson ended before the limit: {recorder.ended}")
        return elapsed, lesson_cpu, app_cpu
    finally:
        session.close()


def calibrate() -> tuple[int, int]:
    """(the history's own count, tracemalloc's count) of the bytes a short recording keeps."""
    tracemalloc.start()
    history = History()
    record(history, CALIBRATION_STEPS)
    traced = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return history.nbytes, traced


def peak_rss() -> int:
    """The process's peak resident set size in bytes (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> int:
    print(f"python {sys.version.split()[0]}")
    history = History()
    rss_before = peak_rss()
    elapsed, lesson_cpu, app_cpu = record(history, STEPS)
    rss_growth = peak_rss() - rss_before
    steps = len(history)
    print("lesson: hand-written RNN, 20 tensors in scope; 5 graph nodes per iteration, backward() and h.detach() "
          "every 32 iterations keep the graph under ~350 nodes")
    print(f"recorded {steps:,} steps in {elapsed:.1f} s: {steps / elapsed:,.0f} steps/s "
          f"(lesson process, transport and history together)")
    print(f"CPU per step: lesson process {lesson_cpu / steps * 1e6:.0f} µs, app process (reader and history) "
          f"{app_cpu / steps * 1e6:.0f} µs; the lesson process ran {lesson_cpu / elapsed:.0%} of the time "
          f"(the rest it waited for the app, or for a core)")
    print(f"history: {history.nbytes / 2**20:.1f} MB measured, {history.nbytes / steps:,.0f} bytes per step, "
          f"{history.dropped_before} steps dropped")
    print(f"peak RSS growth of this process: {rss_growth / 2**20:.1f} MB ({rss_growth / steps:,.0f} bytes per step)")

    rng = random.Random(0)
    times = []
    for index in rng.sample(range(history.dropped_before, steps), JUMPS):
        start = time.perf_counter()
        history.snapshot(index)
        times.append(time.perf_counter() - start)
    ordered = sorted(times)
    median, p99, worst = statistics.median(times), ordered[int(0.99 * len(ordered))], ordered[-1]
    print(f"jump to a random past step ({JUMPS} jumps): median {median * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms, "
          f"max {worst * 1000:.2f} ms")
    start = time.perf_counter()
    gc.collect()
    print(f"(a full garbage collection with this history in memory: {(time.perf_counter() - start) * 1000:.1f} ms)")
    measured = history.nbytes
    del history

    own, traced = calibrate()
    print(f"check of the byte count, {CALIBRATION_STEPS:,} steps: history counts {own / 2**20:.1f} MB, "
          f"tracemalloc {traced / 2**20:.1f} MB (ratio {own / traced:.2f})")
    rate = steps / elapsed
    ok = (steps >= STEPS and measured < TARGET_BYTES and rss_growth < TARGET_BYTES and p99 <= TARGET_JUMP
          and rate >= TARGET_RATE)
    print(f"targets: {STEPS:,} steps under {TARGET_BYTES / 2**20:.0f} MB (history and RSS growth), "
          f"recorded at >= {TARGET_RATE:,} steps/s (now {rate:,.0f}), "
          f"jumps p99 <= {TARGET_JUMP * 1000:.0f} ms (a shared machine's max is noise)")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
