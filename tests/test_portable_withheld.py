"""GradStep with what Windows lacks withheld (tests/windows_like/sitecustomize.py): the app imports, every lesson
pauses on the same lines and ends the same way as on the POSIX path, Stop ends what a lesson started, a stalled
pause says so, and the window steps lesson 03."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import warm_session

from app.trace import trace_records

#: The withholding is Linux's modules and calls taken away (on Windows they are simply not there).
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="simulates Windows on Linux")

ROOT = Path(__file__).resolve().parent.parent
WITHHELD = ROOT / "tests" / "windows_like"
#: How long one withheld run may take (each starts interpreters that import torch, one per lesson for the traces).
BOUND = 600


def withheld_env() -> dict[str, str]:
    """The environment of an interpreter withholding what Windows lacks (its lesson processes inherit it)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(WITHHELD), str(ROOT)]), QT_QPA_PLATFORM="offscreen")
    env.pop("GRADSTEP_PORTABLE", None)  # the OS part is chosen by what is there, as on Windows
    return env


def withheld(*args: str) -> str:
    """The stdout of ``python ARGS`` run withheld from the project's folder; fails with its stderr."""
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=withheld_env(), capture_output=True, text=True,
                          encoding="utf-8", timeout=BOUND)
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def drive(scenario: str) -> dict[str, Any]:
    return json.loads(withheld(str(WITHHELD / "drive.py"), scenario))


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    end = records[-1]
    return {"pauses": [[record["event"], record["line"]] for record in records[:-1]],
            "end": [end["status"], end["exit_code"], (end["error"] or {}).get("type")]}


def test_the_app_imports_with_the_portable_part_and_only_the_os_parts_fail():
    result = drive("imports")
    assert result["importable"] == []  # fcntl, termios, resource, pty, tty are withheld indeed
    assert result["layer"] == "portable"
    assert result["modules"] > 50
    # the POSIX part needs fcntl, the Windows part msvcrt: each is imported on its own OS only
    assert sorted(result["failed"]) == ["app.process_posix", "app.process_windows"]


@pytest.mark.timeout(BOUND)
def test_every_lesson_pauses_on_the_same_lines_and_ends_the_same_way_withheld():
    lessons = sorted((ROOT / "lessons").glob("[0-9]*.py"))
    expected = {path.name: summary(trace_records(str(path), timeout=120, session=warm_session()))
                for path in lessons}
    assert all(entry["end"][0] == "ok" and entry["pauses"] for entry in expected.values())
    assert drive("traces") == expected


def test_gradstep_trace_prints_lesson_03_as_on_posix_withheld():
    path = ROOT / "lessons" / "03_loops.py"
    records = [json.loads(line) for line in withheld("main.py", "--trace", str(path)).splitlines()]
    assert summary(records) == summary(trace_records(str(path), timeout=120, session=warm_session()))
    assert len(records) > 50


def test_stop_ends_a_lesson_and_the_python_it_started_withheld():
    result = drive("stop-child")
    assert result["paused_at"] == 6 and result["ended"] == "stopped"
    assert gone(result["lesson"]) and gone(result["child"])


def test_pause_in_one_long_c_call_says_the_lesson_stalled_and_stop_ends_it_withheld():
    result = drive("stalled")
    assert result["notice"] == "stalled" and "Stop ends it now" in result["text"]
    assert result["ended"] == "stopped" and gone(result["lesson"])


@pytest.mark.timeout(BOUND)
def test_the_window_steps_lesson_03_and_stops_withheld():
    out = withheld("-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                   str(ROOT / "tests" / "test_portable_window.py"))
    assert "1 passed" in out
