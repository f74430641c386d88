"""Op recording speed: stepping over a line of 20 PyTorch operations, and one op-level pause.

Run: ``python tests/benchmarks/bench_ops.py``. Both figures are round trips as the app sees
them (command sent → Paused received) with 20 tensors in scope. Continue mode is measured by
``bench_stepping.py`` (the op recorder is off the mode stack there).
"""

from __future__ import annotations

import statistics
import sys
import time

from _common import Driver, line_of, m, write

OPERATIONS = 20
#: Ten products, nine sums and a ``sum()``.
LINE = "u = (" + " + ".join(f"t{i} * {i + 1}" for i in range(OPERATIONS // 2)) + ").sum()   # twenty operations"
LESSON = write("twenty_ops.py", "import torch\n" + "".join(
    f"t{i} = torch.randn(4, 4, requires_grad={i % 2 == 0})\n" for i in range(20)) + f"""
i = 0
while True:
    i += 1
    {LINE}
""")


def percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def figures(times: list[float]) -> str:
    return (f"median {statistics.median(times) * 1000:.2f} ms, p99 {percentile(times, 0.99) * 1000:.2f} ms, "
            f"max {max(times) * 1000:.2f} ms")


def to_the_line(driver: Driver, line: int) -> None:
    """Step over until the pause is at ``line``."""
    while True:
        driver.session.step_over()
        if driver.next(m.Paused).snapshot["line"] == line:
            return


def plain_steps(driver: Driver, line: int, rounds: int) -> list[float]:
    """Round trips of stepping over ``i += 1`` (no operation): what this machine's load makes of any step."""
    times = []
    for _ in range(rounds):
        to_the_line(driver, line - 1)
        start = time.perf_counter()
        driver.session.step_over()
        driver.next(m.Paused)
        times.append(time.perf_counter() - start)
    return times


def line_steps(driver: Driver, line: int, rounds: int) -> tuple[list[float], int]:
    """Round trips of stepping over the 20-operation line, and how many operations its pause logged."""
    times, logged = [], 0
    for _ in range(rounds):
        to_the_line(driver, line)
        start = time.perf_counter()
        driver.session.step_over()
        snapshot = driver.next(m.Paused).snapshot
        times.append(time.perf_counter() - start)
        logged = len(snapshot.get("ops", []))
    return times, logged


def op_pauses(driver: Driver, line: int, rounds: int) -> list[float]:
    """Round trips from one op-level pause to the next, inside the 20-operation line."""
    times = []
    for _ in range(rounds):
        to_the_line(driver, line)
        driver.session.step_expression()
        driver.next(m.Paused)
        for _ in range(OPERATIONS - 1):
            start = time.perf_counter()
            driver.session.step_expression()
            snapshot = driver.next(m.Paused).snapshot
            times.append(time.perf_counter() - start)
            assert snapshot["event"] == "op", snapshot["event"]
        driver.session.step_over()
        driver.next(m.Paused)
    return times


def measure(op_values: bool) -> tuple[list[float], int, list[float], list[float]]:
    """Line step round trips, operations logged, op-level pause round trips, steps without operations."""
    line = line_of(LESSON, "twenty operations")
    driver = Driver()
    try:
        driver.session.start(LESSON, op_values=op_values)
        driver.next(m.Paused)
        line_steps(driver, line, 20)  # warm up: summaries cached, code positions read
        steps, logged = line_steps(driver, line, 300)
        pauses = op_pauses(driver, line, 30)
        baseline = plain_steps(driver, line, 300)
    finally:
        driver.close()
    return steps, logged, pauses, baseline


def main() -> int:
    steps, logged, pauses, baseline = measure(False)
    detailed, _, _, _ = measure(True)
    step_median, op_median = statistics.median(steps), statistics.median(pauses)
    print(f"step over a line of {OPERATIONS} operations ({logged} logged), 20 tensors in scope: {figures(steps)} "
          f"(target median <= 5 ms)")
    print(f"(no target) the same with every input and output summarised (--ops): {figures(detailed)}")
    print(f"(no target) for scale, stepping over a line without operations: {figures(baseline)}")
    print(f"op-level pause round trip, 20 tensors in scope: {figures(pauses)} (target median <= 2 ms)")
    ok = logged == OPERATIONS and step_median <= 0.005 and op_median <= 0.002
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
