"""The app's handle on one lesson process: start it, send it messages, hear what it says.

The process is a fresh interpreter (``python -m app.lesson.runner``) or, on Linux, a fork of
a server that has only imported torch and the runner (:mod:`app.lesson_spawner`), never a
fork of the app, so it inherits no Qt or torch threads, and it leads its own process group, so that
killing the group ends whatever the lesson started (subprocesses, workers, forks); what
left the group (``os.setsid()``, a double fork) is found by ancestry (:mod:`app.process_tree`). Its
messages travel on a pipe of their own; its fd 1 and fd 2 are plain pipes, read as the
lesson's stdout and stderr. Reader threads turn the pipes into callbacks; nothing here
ever blocks the caller on the lesson.

Text and messages travel on different pipes, so their order is restored here. At a pause
the lesson waits: the text already in fd 1 and fd 2 was written before the pause and is
delivered before it. While a run is recorded the lesson does not wait, and may be far
ahead of the app: text is then delivered only after every message that was already on its
way when the text was read (the channel's bytes received plus those still in the pipe), so
it never comes before a pause it was printed after; at worst, text printed just before a
recorded pause comes right after it.
"""

from __future__ import annotations

import codecs
import fcntl
import os
import select
import selectors
import signal
import subprocess
import sys
import termios
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import messages as m
from app.i18n import N_
from app.lesson_spawner import spawn
from app.process_tree import end_descendants, wait_group_gone

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


#: How a run ends when the lesson process broke the channel (``reason`` is the decoder's, in English).
MALFORMED = N_("the lesson process sent a malformed message ({reason})")
#: How a run ends when the lesson closed or replaced the channel's file descriptors.
CHANNEL_LOST = N_("the lesson closed or replaced the file descriptors of GradStep's message channel, so GradStep "
                  "could no longer follow it")
#: How long the lesson process may live on once its channel has closed before it is ended.
CHANNEL_CLOSED_SECONDS = 1.0


def malformed_error(exc: m.MalformedMessage) -> dict[str, Any]:
    """The ``error`` of the :class:`~app.messages.Ended` that a malformed frame ends a run with."""
    return m.engine_error("MalformedMessage", MALFORMED, reason=str(exc))


class LessonProcess:
    """One lesson interpreter.

    Parameters
    ----------
    on_message
        Called from a reader thread with this process and each message it sends (perhaps before
        the constructor has returned: a forked process answers at once), with
        ``Output("stdout" | "stderr", text)`` for what it writes to fd 1 and fd 2 (all that
        was written before a message comes before it), and finally with the process's
        return code (an ``int``) once its message pipe closes, or, when it sent a malformed frame,
        with ``Ended("crashed", error=...)`` once it has been killed.
    """

    def __init__(self, on_message: Callable[[LessonProcess, Any], None], forked: bool = True) -> None:
        self._on_message = on_message
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
            self.process = spawn(env, str(ROOT), channel_write, forked)
        finally:
            os.close(channel_write)
        self._channel = _Channel(channel_read)
        # One lock orders the text of fd 1 and fd 2 against the messages (see the module's docstring).
        self._output_lock = threading.Lock()
        self._delivered = 0  # bytes of the channel whose messages were delivered
        self._held: list[tuple[int, str, str]] = []  # (channel bytes to deliver first, stream, text)
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
        """End the process and all it started now, whatever they are doing (a long C call included).

        The lesson process is stopped first, so that it starts nothing more while its
        descendants, those that left its group included, are found and killed; it holds the
        orphaned ones as their subreaper (see :mod:`app.process_tree`) until it dies last.
        """
        if os.name == "posix" and self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGSTOP)
            except ProcessLookupError:  # it ended between the poll and the signal: its group may remain
                pass
            else:
                end_descendants(self.process.pid)
        self.kill_group()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def kill_group(self) -> None:
        """SIGKILL every process of the lesson's group and wait (bounded) until they are gone:
        what the lesson started dies with the run, before the run is said to have ended.

        The group's id is the lesson process's pid, which stays reserved while any member
        lives, even after the lesson process itself has been reaped.
        """
        if os.name != "posix":
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return  # the group is already empty
        wait_group_gone(self.process.pid)

    def alive(self) -> bool:
        return self.process.poll() is None

    def bytes_said(self) -> int:
        """How many bytes of messages the lesson has written so far, read or still on their way."""
        return self._channel.written()

    def bytes_heard(self) -> int:
        """How many bytes of messages the app has read whole so far (a frame cut short is not)."""
        return self._channel.consumed

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
                self._on_message(self, m.Ended("crashed", error=malformed_error(exc), exit_code=code,
                                        signal=signal_name(code)))
                return
            if message is None:
                break
            if isinstance(message, m.Ready):
                self.torch_version = message.torch_version
                self.ready.set()
            with self._output_lock:
                if _waits_after(message):  # all the text read so far, and in the pipes now, came before it
                    self._release(everything=True)
                    for pipe in self._outputs:
                        self._deliver(pipe, 0)
                else:
                    self._release()
                self._on_message(self, message)
                self._delivered = self._channel.consumed
                self._release()
        with self._output_lock:
            self._delivered = self._channel.consumed
            self._release()
        self._channel.close()
        try:
            code = self.process.wait(CHANNEL_CLOSED_SECONDS)
        except subprocess.TimeoutExpired:  # it closed the channel and lives on: nothing reaches the app any more
            self.kill()
            code = m.CHANNEL_LOST_EXIT
        self.kill_group()  # the lesson process is gone: nothing it started may outlive it
        for reader in self._readers:
            reader.join(DRAIN_SECONDS)
        if code == m.CHANNEL_LOST_EXIT:
            lost = m.engine_error("ChannelLost", CHANNEL_LOST)
            self._on_message(self, m.Ended("crashed", error=lost, exit_code=code))
            return
        self._on_message(self, code)

    def _read_output(self, pipe: _OutputPipe) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(pipe.fd, selectors.EVENT_READ)
            while not pipe.closed:
                selector.select()
                with self._output_lock:
                    self._deliver(pipe, self._channel.written())
        pipe.close()

    def _deliver(self, pipe: _OutputPipe, after: int) -> None:
        """Deliver the text in ``pipe`` once the messages of the channel's first ``after`` bytes are."""
        for text in pipe.pending():
            if after <= self._delivered and not self._held:
                self._on_message(self, m.Output(pipe.name, text))
            else:
                self._held.append((after, pipe.name, text))

    def _release(self, everything: bool = False) -> None:
        """Deliver the held text whose messages have been delivered (or all of it), in the order it was read."""
        while self._held and (everything or self._held[0][0] <= self._delivered):
            _, name, text = self._held.pop(0)
            self._on_message(self, m.Output(name, text))


def _waits_after(message: Any) -> bool:
    """Whether the lesson writes nothing more until the app answers: a pause (not a recorded one), a reply, the end."""
    if isinstance(message, m.Paused):
        return not message.snapshot.get("recording")
    return isinstance(message, (m.Reply, m.Ended, m.Ready))


class _Channel:
    """The app's end of the message pipe: exact reads, counting the bytes received and consumed."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.received = 0
        self.consumed = 0
        self._buffer = bytearray()
        self._count_lock = threading.Lock()  # a read and its count are one step for :meth:`written`

    def read(self, size: int) -> bytes:
        """``size`` bytes, or fewer at the end of the pipe."""
        while len(self._buffer) < size:
            select.select([self.fd], [], [])  # wait outside the lock; the read below then does not block
            with self._count_lock:
                chunk = os.read(self.fd, max(size - len(self._buffer), CHUNK_BYTES))
                self.received += len(chunk)
            if not chunk:
                break
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        self.consumed += len(data)
        return data

    def written(self) -> int:
        """How many bytes the lesson has written to the pipe so far (received, plus those still in it)."""
        waiting = bytearray(4)
        with self._count_lock:
            try:
                fcntl.ioctl(self.fd, termios.FIONREAD, waiting)
            except OSError:
                return self.received
            return self.received + int.from_bytes(waiting, sys.byteorder)

    def close(self) -> None:
        os.close(self.fd)


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
