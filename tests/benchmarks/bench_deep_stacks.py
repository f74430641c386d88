"""A deep stack costs a recorded step no more than a shallow one: the pause reads its innermost frames only.

Run: ``python tests/benchmarks/bench_deep_stacks.py``. The same recursion is recorded for
6,000 steps (every event a step, as ``gradstep --trace`` steps) twice: from a stack a few
frames deep, and below 20,000 frames of the same function (the issue's ``sys.setrecursionlimit(100000)``
lesson). Each run's steps per second are measured in one process, one after the other;
the target is that the deep run keeps at least half the shallow run's rate (before the
bound, a pause read every frame: about 110 steps/s at that depth).
"""

from __future__ import annotations

import sys
import time

from _common import Driver, m, write

#: The recorded part: this many calls of ``down``, each a call, two lines and a return.
RECORDED = 2_000
#: Steps recorded in each run.
STEPS = 6_000
#: Frames below the recorded part in the deep run.
DEEP = 20_000
TARGET_RATIO = 0.5

LESSON = """
import sys

sys.setrecursionlimit(100_000)


def sink(n):
    return sink(n - 1) if n else record()


def record():
    return down({recorded})


def down(n):
    if n == 0:
        return 0
    return down(n - 1) + 1


print(sink({below}))
"""


def rate(driver: Driver, below: int) -> tuple[float, int]:
    """Steps per second recording ``down`` below ``below`` frames of ``sink``, and the steps recorded."""
    path = write(f"deep_{below}.py", LESSON.format(recorded=RECORDED, below=below))
    start_line = LESSON.strip().splitlines().index("    return down({recorded})") + 1
    driver.session.breakpoints[path] = {start_line: None}
    driver.session.start(path, stop_on_entry=False)
    driver.next(m.Paused)
    steps = 0
    start = time.perf_counter()
    driver.session.record(limit=STEPS)  # all inside down(): it makes about 4 events a call
    while True:
        message = driver.next(m.Paused)
        steps += 1
        if not message.snapshot.get("recording"):
            break
    elapsed = time.perf_counter() - start
    driver.session.stop()
    return steps / elapsed, steps


def main() -> int:
    driver = Driver()
    try:
        rate(driver, 10)  # warm up: imports, caches
        shallow, shallow_steps = rate(driver, 10)
        deep, deep_steps = rate(driver, DEEP)
    finally:
        driver.close()
    ratio = deep / shallow
    print(f"recorded {shallow_steps:,} steps 10 frames down: {shallow:,.0f} steps/s")
    print(f"recorded {deep_steps:,} steps {DEEP:,} frames down: {deep:,.0f} steps/s")
    print(f"deep / shallow: {ratio:.2f} (target >= {TARGET_RATIO})")
    passed = ratio >= TARGET_RATIO and shallow_steps == deep_steps == STEPS + 1
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
