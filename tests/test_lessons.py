"""Every lesson runs to completion with plain ``python``, quickly, and with a clean stderr,
and stepping it with F11 from its first line to its end stays short enough to do.

Lessons that show a warning on purpose (the TracerWarning of lesson 10, the anomaly-mode
warnings of lesson 1, the non-leaf ``.grad`` warning of lesson 7) catch it and print what
it said, so stderr stays empty. ``-W default`` makes even DeprecationWarnings visible, so a
warning a lesson forgot to catch fails here.

The course's helpers (``lessons/course.py``) are not the lesson file, so the engine does not
step inside them; a loop or a library that calls the lesson's own code again and again is
what makes a lesson long to step, and the bound below catches it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from test_lesson_facts import stepped

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))

#: Seconds a lesson may take with plain python; they are meant to run in a few.
RUN_LIMIT = 60

#: Pauses a lesson may make stepped into (F11) from its first line to its end.
STEP_INTO_LIMIT = 300

#: Lines a lesson may print on stderr, by lesson stem. Empty: every lesson captures its warnings.
EXPECTED_STDERR: dict[str, list[str]] = {}


def unexpected_stderr(stem: str, stderr: str) -> list[str]:
    """The stderr lines that are not listed for this lesson in EXPECTED_STDERR."""
    allowed = EXPECTED_STDERR.get(stem, [])
    return [line for line in stderr.splitlines() if line.strip() and not any(a in line for a in allowed)]


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_lesson_runs_to_completion_with_a_clean_stderr(path, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONWARNINGS")}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-W", "default", str(path)],
        cwd=tmp_path,  # a lesson must not depend on, or write into, the working directory
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=RUN_LIMIT * 2,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert unexpected_stderr(path.stem, done.stderr) == []
    assert done.stdout.strip(), "a lesson prints what it shows"
    assert elapsed < RUN_LIMIT, f"{path.name} took {elapsed:.1f} s"
    assert list(tmp_path.iterdir()) == [], "a lesson leaves no files behind"


@pytest.mark.parametrize("path", LESSON_FILES, ids=lambda p: p.stem)
def test_stepping_into_a_lesson_from_start_to_end_takes_at_most_300_pauses(path):
    records = stepped(path)  # the walk that test_lesson_facts and test_new_lessons read too
    end, pauses = records[-1], records[:-1]
    where = Counter(f"{r['function']} ({os.path.basename(r['file'])})" for r in pauses)
    print(f"{path.stem}: {len(pauses)} pauses stepped into; most in {where.most_common(3)}")
    assert end["status"] == "ok", end
    assert len(pauses) > 10  # it did step
    assert "".join(r.get("stderr") or "" for r in records) == ""
    assert len(pauses) <= STEP_INTO_LIMIT, f"{path.name}: {len(pauses)} pauses, most in {where.most_common(3)}"
