"""The lesson process's own input and output: its channel to the app, its stdout and stderr, a stdin that has none.

The channel's fds are moved out of the range a lesson opens or closes; losing them ends the
process at once with the code that says why. The lesson's ``sys.stdout`` / ``sys.stderr`` write
through to fd 1 and fd 2 at once, and a recorded pause waits (briefly) for the app to read the
text printed before it, so a print is shown at the step it was printed at.
"""

from __future__ import annotations

import io
import os
import stat
import threading
import time
from typing import Any, BinaryIO

from app import messages as m
from app.process_os import current as os_part
from app.process_tree import end_descendants


class Channel:
    """The lesson side of the pipe pair; ``send`` is safe from any thread."""

    def __init__(self, inbound: BinaryIO, outbound: BinaryIO) -> None:
        self.inbound = inbound
        self.outbound = outbound
        self._lock = threading.Lock()

    def detach(self) -> None:
        """Point both pipe ends at /dev/null (in a forked child): the fds and file objects stay
        valid, so nothing can later write a stray byte to whatever reuses their numbers."""
        null = os.open(os.devnull, os.O_RDWR)
        dup2 = getattr(os.dup2, "__wrapped__", os.dup2)  # the engine's own fds: past lesson_hooks.guard_fds
        for stream in (self.inbound, self.outbound):
            dup2(null, stream.fileno())
        os.close(null)

    def send(self, message: Any) -> None:
        data = m.encode(message)
        with self._lock:
            try:
                self.outbound.write(data)
                self.outbound.flush()
            except (OSError, ValueError):
                channel_lost()

    def receive(self) -> Any:
        try:
            return m.read_message(self.inbound)
        except m.MalformedMessage:  # only a dying app cuts a frame short: as good as the end
            return None
        except (OSError, ValueError):
            channel_lost()

    def fds(self) -> tuple[int, int]:
        """The channel's two file descriptors, which the lesson must not touch."""
        return self.inbound.fileno(), self.outbound.fileno()


def channel_lost() -> None:
    """The lesson closed or replaced the channel's fds: nothing can reach the app any more, so end at
    once with the code that tells the app why (:data:`app.messages.CHANNEL_LOST_EXIT`)."""
    end_descendants(os.getpid())
    os._exit(m.CHANNEL_LOST_EXIT)


class LessonStream(io.TextIOWrapper):
    """``sys.stdout`` / ``sys.stderr`` of the lesson: a real text file on fd 1 or fd 2.

    Every write goes through to the fd at once, as with ``python -u``, so text written by
    ``print``, ``sys.__stdout__``, ``sys.stdout.buffer`` and ``os.write(1, ...)`` arrives in
    the order it was written; ``fileno()``, ``buffer``, ``reconfigure()`` and ``isatty()``
    work as on any file.
    """

    def write(self, text: str) -> int:
        count = super().write(text)
        self.flush()
        return count


def lesson_stream(fd: int, name: str, errors: str) -> LessonStream:
    """The text stream of the lesson on ``fd`` (1 or 2), named as Python names its own."""
    raw = io.FileIO(fd, "w", closefd=False)
    raw.name = name
    return LessonStream(io.BufferedWriter(raw), encoding="utf-8", errors=errors)


class NoInput(io.TextIOBase):
    """``sys.stdin`` of a lesson: there is no keyboard input, and reading says so."""

    MESSAGE = m.NO_INPUT_MESSAGE

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        raise RuntimeError(self.MESSAGE)

    readline = read


#: How long a recorded pause waits for the app to read the text printed before it.
TEXT_WAIT_SECONDS = 0.5


def unread(fd: int) -> int:
    """Bytes the app has not read yet from the pipe on ``fd`` (0 when ``fd`` is not a pipe any more, or
    where the OS cannot tell: text may then be shown a step after a recorded pause it came before).

    Asked at every recorded pause, so the common answer costs one system call: only a count
    above 0 is checked to come from a pipe (a file the lesson put on ``fd`` counts its bytes
    left to read, which no one will).
    """
    count = os_part().unread(fd)
    try:
        return count if count and stat.S_ISFIFO(os.fstat(fd).st_mode) else 0
    except OSError:
        return 0


def wait_until_text_is_read() -> None:
    """Before a recorded pause goes, let the app read the text printed since the last one.

    Text and pauses travel on different pipes, and a recording does not wait at its pauses:
    once the app has read the text, it knows the text came before this pause (see
    :mod:`app.lesson_process`), so a print is shown at the step it was printed at.
    """
    deadline = None
    for fd in (1, 2):
        while unread(fd):
            now = time.monotonic()
            if deadline is None:
                deadline = now + TEXT_WAIT_SECONDS
            elif now > deadline:
                return  # the app does not read: the text will be shown a step late, not lost
            time.sleep(0.0002)


def no_input(prompt: object = "") -> str:
    """``input()`` in a lesson: there is no keyboard, and asking says so."""
    raise RuntimeError(NoInput.MESSAGE)


def open_channel() -> Channel:
    """Take stdin for the app's messages and the pipe the app passed for ours; the lesson reads /dev/null."""
    layer = os_part()
    outbound_fd = layer.out_of_reach(layer.open_channel(os.environ.pop(m.CHANNEL_FD_VARIABLE)))
    os.set_inheritable(outbound_fd, False)  # the lesson's subprocesses must not hold it open
    inbound = os.fdopen(layer.out_of_reach(os.dup(0)), "rb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return Channel(io.BufferedReader(inbound), os.fdopen(outbound_fd, "wb"))
