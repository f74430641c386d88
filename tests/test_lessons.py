"""Every lesson runs to completion with plain ``python``, quickly, and with a clean stderr.

Lessons that show a warning on purpose (the TracerWarning of lesson 10, the anomaly-mode
warnings of lesson 1, the non-leaf ``.grad`` warning of lesson 7) catch it and print what
it said, so stderr stays empty. ``-W default`` makes even DeprecationWarnings visible, so a
warning a lesson forgot to catch fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
LESSON_FILES = sorted(LESSONS.glob("[0-9][0-9]_*.py"))

#: Seconds a lesson may take with plain python; they are meant to run in a few.
RUN_LIMIT = 60

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
