"""The app's handle on one lesson process: start it, send it messages, hear what it says.

The process is a fresh interpreter (``python -m app.lesson_runner``), never a fork of the
app, so it inherits no Qt or torch threads. Two reader threads turn its pipes into
callbacks; nothing here ever blocks the caller on the lesson.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import messages as m

ROOT = Path(__file__).resolve().parent.parent


def signal_name(returncode: int | None) -> str | None:
    """``SIGSEGV`` for a return code of -11, None for a normal exit."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def malformed_error(exc: m.MalformedMessage) -> dict[str, Any]:
    """The ``error`` of the :class:`~app.messages.Ended` that a malformed frame ends a run with."""
    return {"type": "MalformedMessage", "message": f"the lesson process sent a malformed message ({exc})",
            "line": None}


class LessonProcess:
    """One lesson interpreter.

    Parameters
    ----------
    on_message
        Called from a reader thread with each message the process sends, with
        ``Output("native", text)`` for C-level output, and finally with the process's
        return code (an ``int``) once its pipe closes, or, when it sent a malformed frame,
        with ``Ended("crashed", error=...)`` once it has been killed.
    """

    def __init__(self, on_message: Callable[[Any], None]) -> None:
        self.on_message = on_message
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env["PYTHONIOENCODING"] = "utf-8"
        env.pop("QT_QPA_PLATFORM", None)
        self.ready = threading.Event()
        self.torch_version: str | None = None
        self._send_lock = threading.Lock()
        self.process = subprocess.Popen(
            [sys.executable, "-X", "utf8", "-m", "app.lesson_runner"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=str(ROOT), env=env, start_new_session=(os.name == "posix"),
        )
        self._events = threading.Thread(target=self._read_events, name="lesson-events", daemon=True)
        self._native = threading.Thread(target=self._read_native, name="lesson-native", daemon=True)
        self._events.start()
        self._native.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def send(self, message: Any) -> bool:
        """Send one message; False when the process is already gone."""
        data = m.encode(message)
        with self._send_lock:
            try:
                self.process.stdin.write(data)
                self.process.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return False
        return True

    def kill(self) -> None:
        """End the process now, whatever it is doing (a long C call included)."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def alive(self) -> bool:
        return self.process.poll() is None

    def _read_events(self) -> None:
        stream = self.process.stdout
        while True:
            try:
                message = m.read_message(stream)
            except m.MalformedMessage as exc:  # the channel can no longer be trusted: end the run
                self.kill()
                self._native.join()
                code = self.process.wait()
                self.on_message(m.Ended("crashed", error=malformed_error(exc), exit_code=code,
                                        signal=signal_name(code)))
                return
            if message is None:
                break
            if isinstance(message, m.Ready):
                self.torch_version = message.torch_version
                self.ready.set()
            self.on_message(message)
        self._native.join()
        self.on_message(self.process.wait())

    def _read_native(self) -> None:
        stream = self.process.stderr
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            self.on_message(m.Output("native", chunk.decode("utf-8", errors="replace")))
