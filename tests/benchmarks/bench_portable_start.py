"""Run → first pause on the portable process layer (the path of Windows and macOS), with a warm spare.

Run: ``python tests/benchmarks/bench_portable_start.py``. ``GRADSTEP_PORTABLE=1`` forces the
portable part (no fork server: the spare is a fresh interpreter that has imported torch; pipes
read by pump threads, drained at a pause by a fence). Measured: ``Session(forked=False)``
reaching lesson 01's first pause with its spare ready (target: median ≤ 300 ms), and, with no
target, a step's round trip on the same path; the same figures on this machine's own part
(POSIX here) come from a child run for comparison.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time

if __name__ == "__main__" and "--measure" not in sys.argv:
    os.environ["GRADSTEP_PORTABLE"] = "1"  # before the app is imported: its OS part is chosen once

from _common import ROOT, m  # noqa: E402

from app.process_os import current  # noqa: E402
from app.session import Session  # noqa: E402

LESSON = str(ROOT / "lessons" / "01_dynamic_graphs.py")
RUNS = 9
STEPS = 40
TARGET_SECONDS = 0.3


def measure() -> dict[str, float]:
    """Median Run → first pause with the spare ready, and median step round trip, in seconds."""
    events: list = []
    arrived = threading.Event()

    def listen(message) -> None:
        if isinstance(message, (m.Paused, m.Ended)):
            events.append(message)
            arrived.set()

    def wait() -> None:
        assert arrived.wait(120), "no pause"
        arrived.clear()

    session = Session(listen, warm_spare=True, forked=False)
    starts, steps = [], []
    try:
        for _ in range(RUNS):
            deadline = time.monotonic() + 120
            while (session._spare is None or not session._spare.ready.is_set()) and time.monotonic() < deadline:
                time.sleep(0.01)  # the spare imports torch: a learner's next run starts once it is ready
            arrived.clear()  # the last run's Ended("stopped")
            begin = time.perf_counter()
            session.start(LESSON)
            wait()
            starts.append(time.perf_counter() - begin)
            for _ in range(STEPS):
                begin = time.perf_counter()
                session.step_into()
                wait()
                steps.append(time.perf_counter() - begin)
                if isinstance(events[-1], m.Ended):
                    break
            session.stop()
    finally:
        session.close()
    return {"layer": current().name, "start": statistics.median(starts), "start_max": max(starts),
            "step": statistics.median(steps)}


def main() -> int:
    portable = measure()
    env = {name: value for name, value in os.environ.items() if name != "GRADSTEP_PORTABLE"}
    native = json.loads(subprocess.run([sys.executable, __file__, "--measure"], env=env, capture_output=True,
                                       text=True, check=True).stdout)
    print(f"python {sys.version.split()[0]}, root {ROOT}, {RUNS} runs of {os.path.basename(LESSON)}")
    for figures in (portable, native):
        print(f"{figures['layer']} part, Session(forked=False), warm spare: Run -> first pause median "
              f"{figures['start'] * 1000:.1f} ms (max {figures['start_max'] * 1000:.1f} ms); "
              f"step round trip median {figures['step'] * 1000:.2f} ms")
    ok = portable["layer"] == "portable" and portable["start"] <= TARGET_SECONDS
    print(f"target: portable Run -> first pause median <= {TARGET_SECONDS * 1000:.0f} ms")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    if "--measure" in sys.argv:
        print(json.dumps(measure()))
        sys.exit(0)
    sys.exit(main())
