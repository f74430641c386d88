"""Stepping engine speed: continue-mode overhead, cold tracing, step round trip, Run → first pause.

Run: ``python tests/benchmarks/bench_stepping.py``. Every lesson times its own work with
``time.perf_counter`` and prints it, so interpreter start-up and ``import torch`` are not
counted; ratios compare runs made in this one invocation.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from _common import ROOT, Driver, line_of, m, plain_output, seconds_printed, write

RNN = write("rnn_loop.py", """
    import time
    import torch
    torch.manual_seed(0)
    W_xh = torch.randn(16, 32, requires_grad=True)
    W_hh = torch.randn(32, 32, requires_grad=True)
    b = torch.zeros(32, requires_grad=True)
    xs = torch.randn(3000, 16)

    def never_called():
        return 0                    # breakpoint elsewhere

    start = time.perf_counter()
    h = torch.zeros(32)
    for x_t in xs:
        h = torch.tanh(x_t @ W_xh + h @ W_hh + b)
        if h is None:
            print("unreachable")    # breakpoint in the loop
    loss = h.pow(2).sum()
    loss.backward()
    print("elapsed", time.perf_counter() - start)
""")

RNN_CELL = write("rnn_cell_loop.py", """
    import time
    import torch
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(16, 32)
    xs = torch.randn(3000, 1, 16)

    def never_called():
        return 0                    # breakpoint elsewhere

    start = time.perf_counter()
    h = torch.zeros(1, 32)
    for x in xs:
        h = cell(x, h)              # nn.Module.__call__: several Python frames of torch per step
        if h is None:
            print("unreachable")    # breakpoint in the loop
    loss = h.pow(2).sum()
    loss.backward()
    print("elapsed", time.perf_counter() - start)
""")

PURE = write("pure_loop.py", """
    import time

    def never_called():
        return 0                    # breakpoint elsewhere

    start = time.perf_counter()
    total = 0
    for i in range(1_000_000):
        total += i * i % 7
        if total < 0:
            print("unreachable")    # breakpoint in the loop
    print("elapsed", time.perf_counter() - start)
""")

CALLS = write("call_loop.py", """
    import time

    def never_called():
        return 0                    # breakpoint elsewhere

    def work(k):
        return k * k % 7

    start = time.perf_counter()
    total = 0
    for i in range(300_000):
        total += work(i)            # a Python call every iteration
        if total < 0:
            print("unreachable")    # breakpoint in the loop
    print("elapsed", time.perf_counter() - start)
""")

OPTIM = write("cold_optim.py", """
    import time
    import torch

    def never_called():
        return 0                    # breakpoint elsewhere

    start = time.perf_counter()
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    loss = model(torch.ones(2, 4)).sum()
    loss.backward()
    opt.step()
    print("elapsed", time.perf_counter() - start)
""")

BDB = """
import bdb, sys, time
path, line = sys.argv[1], int(sys.argv[2])
class Quiet(bdb.Bdb):
    def user_line(self, frame):
        if self.get_break(frame.f_code.co_filename, frame.f_lineno):
            raise SystemExit("breakpoint hit")
        self.set_continue()  # bdb starts by stepping: leave that first stop at once
dbg = Quiet()
dbg.set_break(path, line)
code = compile(open(path).read(), path, "exec")
globs = {"__name__": "__main__", "__file__": path}
dbg.run(code, globs)
"""


def bdb_output(path: str, line: int) -> str:
    return subprocess.run([sys.executable, "-c", BDB, path, str(line)], capture_output=True, text=True,
                          check=True).stdout


def overhead(driver: Driver, path: str, marker: str, rounds: int = 4) -> tuple[float, float]:
    """(our ratio, bdb's ratio) against plain python, breakpoint at the line with ``marker``.

    Plain and traced runs alternate and each keeps its best time, so a burst of load on
    this shared machine does not land on one side only.
    """
    line = line_of(path, marker)
    plain, ours = [], []
    for _ in range(rounds):
        plain.append(seconds_printed(plain_output(path)))
        ours.append(seconds_printed(driver.run_to_end(path, {line: None})))
    theirs = min(seconds_printed(bdb_output(path, line)) for _ in range(2))
    return min(ours) / min(plain), theirs / min(plain)


def cold_ratio(driver: Driver, rounds: int = 4) -> float:
    """Each run is a fresh process, so torch.optim's lazy imports happen in every one."""
    line = line_of(OPTIM, "breakpoint elsewhere")
    plain, ours = [], []
    for _ in range(rounds):
        plain.append(seconds_printed(plain_output(OPTIM)))
        ours.append(seconds_printed(driver.run_to_end(OPTIM, {line: None})))
    return statistics.median(ours) / statistics.median(plain)


def step_round_trip(driver: Driver, steps: int = 1000) -> float:
    path = write("twenty_tensors.py", "import torch\n" + "".join(
        f"t{i} = torch.randn(4, 4, requires_grad={i % 2 == 0})\n" for i in range(20)) + """
i = 0
while True:
    i += 1
    u = t0 * i
""")
    driver.session.start(path)
    driver.next(m.Paused)
    for _ in range(25):  # past the set-up lines, into the loop with every tensor in scope
        driver.session.step_into()
        driver.next(m.Paused)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        driver.session.step_into()
        driver.next(m.Paused)
        times.append(time.perf_counter() - start)
    driver.session.stop()
    return statistics.median(times)


def first_pause(path: str, runs: int = 5) -> tuple[float, float]:
    """(median warm Run → first pause, one cold start) in seconds."""
    warm = Driver(warm_spare=True)
    times = []
    try:
        for _ in range(runs):
            warm.session._spare.ready.wait(60)
            start = time.perf_counter()
            warm.session.start(path)
            warm.next(m.Paused)
            times.append(time.perf_counter() - start)
            warm.session.stop()
    finally:
        warm.close()
    cold = Driver()
    try:
        start = time.perf_counter()
        cold.session.start(path)
        cold.next(m.Paused)
        cold_time = time.perf_counter() - start
    finally:
        cold.close()
    return statistics.median(times), cold_time


def main() -> int:
    driver = Driver()
    try:
        rnn_loop, rnn_bdb = overhead(driver, RNN, "breakpoint in the loop")
        rnn_else, _ = overhead(driver, RNN, "breakpoint elsewhere")
        cell_loop, cell_bdb = overhead(driver, RNN_CELL, "breakpoint in the loop")
        pure_loop, pure_bdb_loop = overhead(driver, PURE, "breakpoint in the loop")
        pure_else, pure_bdb_else = overhead(driver, PURE, "breakpoint elsewhere")
        calls_loop, calls_bdb_loop = overhead(driver, CALLS, "breakpoint in the loop")
        calls_else, calls_bdb_else = overhead(driver, CALLS, "breakpoint elsewhere")
        cold = cold_ratio(driver)
        trip = step_round_trip(driver)
    finally:
        driver.close()
    warm, cold_start = first_pause(RNN)
    checks = [
        ("continue, hand-written RNN cell, 3,000 steps, breakpoint in the loop", rnn_loop, 1.05,
         f"bdb {rnn_bdb:.2f}x"),
        ("continue, hand-written RNN cell, breakpoint elsewhere", rnn_else, 1.05, ""),
        ("continue, pure-Python loop, breakpoint in the loop", pure_loop, 5.0, f"bdb {pure_bdb_loop:.2f}x"),
        ("continue, pure-Python loop, breakpoint elsewhere", pure_else, 2.5, f"bdb {pure_bdb_else:.2f}x"),
        ("cold first torch.optim use, breakpoint elsewhere", cold, 1.3, ""),
    ]
    ok = True
    print(f"python {sys.version.split()[0]}, root {ROOT}")
    for name, ratio, target, extra in checks:
        ok &= ratio <= target
        print(f"{name}: {ratio:.2f}x plain python (target <= {target}x) {extra}")
    print(f"(no target) nn.RNNCell loop, breakpoint in the loop: {cell_loop:.2f}x (bdb {cell_bdb:.2f}x)")
    print(f"(no target) loop calling a Python function each iteration: breakpoint in the loop "
          f"{calls_loop:.2f}x (bdb {calls_bdb_loop:.2f}x), elsewhere {calls_else:.2f}x (bdb {calls_bdb_else:.2f}x)")
    print(f"step round trip, 20 tensors in scope, median of 1,000: {trip * 1000:.2f} ms (target <= 2 ms)")
    print(f"Run -> first pause: warm spare {warm * 1000:.0f} ms (target <= 300 ms), cold {cold_start * 1000:.0f} ms")
    ok &= trip <= 0.002 and warm <= 0.3
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
