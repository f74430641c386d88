"""Runs GradStep's engine in an interpreter where :mod:`sitecustomize` withholds what Windows lacks, and prints
what happened as one JSON object (read by tests/test_portable_withheld.py).

``python tests/windows_like/drive.py SCENARIO`` with this folder first on ``PYTHONPATH``:

- ``imports``: every module of the app, the window's included, and the OS part chosen;
- ``traces``: the ``(event, line)`` of every pause of every lesson, and how it ended;
- ``stop-child``: a lesson that started a sleeping Python, stopped at a pause;
- ``stalled``: a lesson inside ``sum(itertools.repeat(1))``, asked to pause, then stopped.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import queue
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from app import messages as m
from app.session import Session
from app.trace import trace_records

ROOT = Path(__file__).resolve().parents[2]


def imports() -> dict[str, Any]:
    import app
    import widgets

    failed = {}
    names = ["main"] + [f"{package.__name__}.{info.name}" for package in (app, widgets)
                        for info in pkgutil.walk_packages(package.__path__)]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # what a Windows learner would meet instead of a window
            failed[name] = f"{type(exc).__name__}: {exc}"
    from app.process_os import current

    withheld = [name for name in ("fcntl", "termios", "resource", "pty", "tty") if _importable(name)]
    return {"modules": len(names), "failed": failed, "layer": current().name, "importable": withheld}


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def traces() -> dict[str, Any]:
    sessions = [Session(warm_spare=True), Session(warm_spare=True)]  # lent in turn: a spare warms during a run
    try:
        return {path.name: summary(trace_records(str(path), timeout=120, session=sessions[number % 2]))
                for number, path in enumerate(sorted((ROOT / "lessons").glob("[0-9]*.py")))}
    finally:
        for session in sessions:
            session.close()


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """What must match between two runs of a lesson: where it paused, and how it ended."""
    end = records[-1]
    return {"pauses": [[record["event"], record["line"]] for record in records[:-1]],
            "end": [end["status"], end["exit_code"], (end["error"] or {}).get("type")]}


class Events:
    """The session's messages, awaited one kind at a time."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()
        self.text = ""

    def __call__(self, message: Any) -> None:
        self.queue.put(message)

    def wait(self, kind: type | tuple[type, ...], seconds: float = 60.0) -> Any:
        deadline = time.monotonic() + seconds
        while True:
            message = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            if isinstance(message, m.Output):
                self.text += message.text
            if isinstance(message, kind):
                return message


def _lesson(source: str) -> str:
    path = Path(tempfile.mkdtemp(prefix="gradstep-withheld-")) / "lesson.py"
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return str(path)


def stop_child() -> dict[str, Any]:
    path = _lesson("""
        import subprocess
        import sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(child.pid, flush=True)
        here = 1
        """)
    events = Events()
    session = Session(events, warm_spare=False)
    try:
        session.breakpoints[path] = {6: None}
        session.start(path, stop_on_entry=False)
        paused = events.wait((m.Paused, m.Ended))
        lesson = session._process.pid
        child = int(events.text.split()[0])
        session.stop()
        ended = events.wait(m.Ended)
    finally:
        session.close()
    return {"paused_at": getattr(paused, "snapshot", {}).get("line"), "lesson": lesson, "child": child,
            "ended": ended.status}


def stalled() -> dict[str, Any]:
    path = _lesson("""
        import itertools
        import os
        # "looping" is written from inside sum(): C calls alone (chain, map, os.write), so the pause
        # cannot land on a bytecode between the print and the stall
        total = sum(itertools.chain(map(os.write, [1], [b"looping\\n"]), itertools.repeat(1)))
        """)
    events = Events()
    session = Session(events, warm_spare=False)
    try:
        session.start(path, stop_on_entry=False)
        while "looping" not in events.text:
            events.wait(m.Output)
        lesson = session._process.pid
        session.pause()
        notice = events.wait(m.Notice, seconds=30)
        session.stop()
        ended = events.wait(m.Ended)
    finally:
        session.close()
    return {"notice": notice.kind, "text": notice.text, "lesson": lesson, "ended": ended.status}


SCENARIOS = {"imports": imports, "traces": traces, "stop-child": stop_child, "stalled": stalled}

if __name__ == "__main__":
    print(json.dumps(SCENARIOS[sys.argv[1]]()))
