"""The app's handle on one lesson process: start it, send it messages, hear what it says.

The process is a fresh interpreter (``python -m app.lesson.runner``), never a fork of the
app, so it inherits no Qt or torch threads, and it leads its own process group, so that
killing the group ends whatever the lesson started (subprocesses, workers, forks). Its
messages travel on a pipe of their own; its fd 1 and fd 2 are plain pipes, read as the
lesson's stdout and stderr. Reader threads turn the pipes into callbacks; nothing here
ever blocks the caller on the lesson.
"""

from __future__ import annotations

import codecs
import os
import selectors
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import messages as m

ROOT = Path(__file__).resolve().parent.parent
#: How long the readers of fd 1 and fd 2 may go on after the process died (a grandchild
#: that escaped the group kill may hold the pipes open).
DRAIN_SECONDS = 1.0
#: The largest read from fd 1 or fd 2, and so the largest piece of text in one Output message.
CHUNK_BYTES = 65536


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
        ``Output("stdout" | "stderr", text)`` for what it writes to fd 1 and fd 2 (all that
        was written before a message comes before it), and finally with the process's
        return code (an ``int``) once its message pipe closes, or, when it sent a malformed frame,
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
        channel_read, channel_write = os.pipe()
        env[m.CHANNEL_FD_VARIABLE] = str(channel_write)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-X", "utf8", "-m", "app.lesson.runner"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=str(ROOT), env=env, start_new_session=(os.name == "posix"), pass_fds=(channel_write,),
            )
        finally:
            os.close(channel_write)
        self._channel = os.fdopen(channel_read, "rb")
        # One lock orders the text of fd 1 and fd 2 against the messages: before a message is
        # delivered, the text already in the pipes is.
        self._output_lock = threading.Lock()
        self._outputs = [_OutputPipe("stdout", self.process.stdout), _OutputPipe("stderr", self.process.stderr)]
        self._events = threading.Thread(target=self._read_events, name="lesson-events", daemon=True)
        self._readers = [threading.Thread(target=self._read_output, args=(pipe,), name=f"lesson-{pipe.name}",
                                          daemon=True) for pipe in self._outputs]
        self._events.start()
        for reader in self._readers:
            reader.start()

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
        """End the process and its whole process group now, whatever they are doing (a long C call included)."""
        self.kill_group()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def kill_group(self) -> None:
        """SIGKILL every process of the lesson's group: what the lesson started dies with the run.

        The group's id is the lesson process's pid, which stays reserved while any member
        lives, even after the lesson process itself has been reaped.
        """
        if os.name != "posix":
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is already empty

    def alive(self) -> bool:
        return self.process.poll() is None

    def _read_events(self) -> None:
        stream = self._channel
        while True:
            try:
                message = m.read_message(stream)
            except m.MalformedMessage as exc:  # the channel can no longer be trusted: end the run
                self.kill()
                code = self.process.wait()
                for reader in self._readers:
                    reader.join(DRAIN_SECONDS)
                self.on_message(m.Ended("crashed", error=malformed_error(exc), exit_code=code,
                                        signal=signal_name(code)))
                return
            if message is None:
                break
            if isinstance(message, m.Ready):
                self.torch_version = message.torch_version
                self.ready.set()
            with self._output_lock:
                for pipe in self._outputs:
                    self._deliver(pipe)
                self.on_message(message)
        self._channel.close()
        code = self.process.wait()
        self.kill_group()  # the lesson process is gone: nothing it started may outlive it
        for reader in self._readers:
            reader.join(DRAIN_SECONDS)
        self.on_message(code)

    def _read_output(self, pipe: _OutputPipe) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(pipe.fd, selectors.EVENT_READ)
            while not pipe.closed:
                selector.select()
                with self._output_lock:
                    self._deliver(pipe)
        pipe.close()

    def _deliver(self, pipe: _OutputPipe) -> None:
        for text in pipe.pending():
            self.on_message(m.Output(pipe.name, text))


class _OutputPipe:
    """The app's end of the lesson's fd 1 or fd 2, read without blocking, decoded as UTF-8."""

    def __init__(self, name: str, stream: Any) -> None:
        self.name = name
        self.fd = stream.fileno()
        self._stream = stream  # keeps the file object, and so the fd, open
        os.set_blocking(self.fd, False)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.closed = False

    def close(self) -> None:
        """Release the fd once the pipe has ended."""
        self._stream.close()

    def pending(self) -> list[str]:
        """The text in the pipe now, in pieces of at most 64 KiB; marks the pipe closed at its end."""
        parts = []
        while not self.closed:
            try:
                chunk = os.read(self.fd, CHUNK_BYTES)
            except BlockingIOError:
                break
            if not chunk:
                self.closed = True
                parts.append(self._decoder.decode(b"", final=True))
                break
            parts.append(self._decoder.decode(chunk))
            if len(chunk) < CHUNK_BYTES:
                break  # the pipe is empty now
        return [part for part in parts if part]
