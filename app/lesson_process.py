"""The app's handle on one lesson process: start it, send it messages, hear what it says.

The process is a fresh interpreter (``python -m app.lesson.runner``) or, on Linux, a fork of
a server that has only imported torch and the runner (:mod:`app.lesson_spawner`), never a
fork of the app, so it inherits no Qt or torch threads. Stop ends it and all it started, as
its OS lets the app reach them (:mod:`app.process_os`: a process group and ancestry on POSIX,
a Job Object on Windows). Its messages travel on a pipe of their own; its fd 1 and fd 2 are
plain pipes, read as the lesson's stdout and stderr (:mod:`app.lesson_pipes`). Reader threads
turn the pipes into callbacks; nothing here ever blocks the caller on the lesson.

Text and messages travel on different pipes, so their order is restored here. At a pause
the lesson waits: the text already in fd 1 and fd 2 was written before the pause and is
delivered before it. While a run is recorded the lesson does not wait, and may be far
ahead of the app: text is then delivered only after every message that was already on its
way when the text was read (the channel's bytes received plus, where the OS counts them,
those still in the pipe), so it never comes before a pause it was printed after; at worst,
text printed just before a recorded pause comes right after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import messages as m
from app.i18n import N_
from app.lesson_pipes import OutputPipe, PumpedOutput, open_channel
from app.lesson_spawner import spawn
from app.process_os import current

ROOT = Path(__file__).resolve().parent.parent
#: How long the readers of fd 1 and fd 2 may go on after the process died (a grandchild
#: that escaped the group kill may hold the pipes open).
DRAIN_SECONDS = 1.0


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
        current().widen_pipe(channel_read)  # a recording runs ahead of the app: room for its messages
        # Where the OS cannot drain a pipe without waiting, the app makes the output pipes and keeps their
        # write ends, for the fences that stand in (app.lesson_pipes).
        outputs = None if current().selectable_pipes else (os.pipe(), os.pipe())
        try:
            self.process = spawn(env, str(ROOT), channel_write, forked,
                                 outputs and (outputs[0][1], outputs[1][1]))
        finally:
            os.close(channel_write)
        self._tree = current().tree(self.process)
        self._channel = open_channel(channel_read)
        # One lock orders the text of fd 1 and fd 2 against the messages (see the module's docstring).
        self._output_lock = threading.Lock()
        self._delivered = 0  # bytes of the channel whose messages were delivered
        self._heard = 0  # bytes of the channel's whole messages read
        self._held: list[tuple[int, str, str]] = []  # (channel bytes to deliver first, stream, text)
        self._outputs: list[OutputPipe | PumpedOutput] = (
            [OutputPipe("stdout", self.process.stdout), OutputPipe("stderr", self.process.stderr)] if outputs is None
            else [PumpedOutput("stdout", *outputs[0]), PumpedOutput("stderr", *outputs[1])])
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
        """End the process and all it started now, whatever they are doing (a long C call included)."""
        self._tree.end()

    def kill_group(self) -> None:
        """End what the lesson started and left running, and wait (bounded) until it is gone: what the
        lesson started dies with the run, before the run is said to have ended."""
        self._tree.end_rest()

    def alive(self) -> bool:
        return self.process.poll() is None

    def bytes_said(self) -> int:
        """How many bytes of messages the lesson has written so far, read or still on their way."""
        return self._channel.written()

    def bytes_heard(self) -> int:
        """How many bytes of messages the app has read whole so far (a frame cut short, or still
        coming, is not: its first bytes may have been on their way before a request)."""
        return self._heard

    def _read_events(self) -> None:
        stream = self._channel
        while True:
            try:
                message = m.read_message(stream)
                self._heard = self._channel.consumed
            except m.MalformedMessage as exc:  # the channel can no longer be trusted: end the run
                self.kill()
                code = self.process.wait()
                self._drain_outputs()
                self._on_message(self, m.Ended("crashed", error=malformed_error(exc), exit_code=code,
                                        signal=signal_name(code)))
                return
            if message is None:
                break
            if isinstance(message, m.Ready):
                self.torch_version = message.torch_version
                self.ready.set()
            waits = _waits_after(message)
            if waits:
                for pipe in self._outputs:
                    pipe.fence()
            with self._output_lock:
                if waits:  # all the text read so far, and in the pipes now, came before it
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
        self._drain_outputs()
        if code == m.CHANNEL_LOST_EXIT:
            lost = m.engine_error("ChannelLost", CHANNEL_LOST)
            self._on_message(self, m.Ended("crashed", error=lost, exit_code=code))
            return
        self._on_message(self, code)

    def _drain_outputs(self) -> None:
        """Once the lesson process is gone: let its output readers finish (a bounded wait)."""
        for pipe in self._outputs:
            pipe.release()
        for reader in self._readers:
            reader.join(DRAIN_SECONDS)

    def _read_output(self, pipe: OutputPipe | PumpedOutput) -> None:
        while not pipe.closed:
            pipe.wait()
            with self._output_lock:
                self._deliver(pipe, self._channel.written())
        pipe.close()

    def _deliver(self, pipe: OutputPipe | PumpedOutput, after: int) -> None:
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
