"""How many of GradStep's step-into pauses over every bundled lesson match CPython's ``bdb`` in step mode.

Run: ``python tests/benchmarks/bench_bdb_agreement.py`` (with any Python that has torch and
msgpack; it needs no Qt). For each lesson it records ``bdb``'s pauses in the lesson's own
frames and GradStep's (through the headless trace), leaves out of ``bdb``'s those GradStep
skips on purpose (see the README), and counts the pauses in the longest common runs of both.
A benchmark rather than a test: it steps into every line of twenty lessons twice (minutes).
The suite pins the lessons that once differed (tests/test_bdb_agreement.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bdb_steps import agreement, bdb_pauses, gradstep_pauses, on_purpose  # noqa: E402


def main() -> None:
    matched = total = 0
    for path in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.py")):
        theirs = on_purpose(bdb_pauses(str(path)), str(path))
        ours = gradstep_pauses(str(path))
        same, longer = agreement(ours, theirs)
        matched, total = matched + same, total + longer
        print(f"{path.name:38s} {same:5d} of {longer:5d} match (GradStep {len(ours)}, bdb {len(theirs)})", flush=True)
    print(f"all lessons, Python {sys.version.split()[0]}: {matched} of {total} pauses match")
    print("PASS" if matched == total else "FAIL")


if __name__ == "__main__":
    main()
