"""The app's ends of a lesson process's pipes: its message channel, and its fd 1 and fd 2.

Two kinds of each, by what the OS can do with a pipe (:attr:`~app.process_portable.PortableOS.selectable_pipes`):

- where ``select`` waits on a pipe and ``FIONREAD`` counts its bytes (Linux, macOS), the
  app reads what is there when it is there, and counts the channel's bytes still in the pipe;
- elsewhere (Windows, or the portable path forced), a pump thread per pipe reads with
  blocking reads into a buffer of the app's own, so that the channel's bytes are counted as
  soon as they leave the pipe. Draining fd 1 or fd 2 without waiting is then a fence
  (:meth:`PumpedOutput.fence`): the app keeps a write end of each output pipe, writes a
  random token into it, and waits until its pump has read up to the token; a pipe keeps its
  order, so all the lesson wrote before has been read by then.

:class:`~app.lesson_process.LessonProcess` uses them through the same calls:
``read``/``written``/``consumed``/``close`` for a channel, and
``wait``/``pending``/``fence``/``release``/``closed``/``close`` for an output pipe.
"""

from __future__ import annotations

import codecs
import os
import select
import threading
from typing import Any

from app.process_os import current

#: The largest read from a pipe, and so the largest piece of text in one Output message.
CHUNK_BYTES = 65536
#: How far a pumped channel reads ahead of the messages the app has taken: the lesson's lead
#: stays bounded, as a pipe's own capacity bounds it elsewhere.
PUMP_AHEAD_BYTES = 4 << 20
#: The longest :meth:`PumpedOutput.fence` waits for its token (the pump is held up delivering text).
FENCE_SECONDS = 1.0


def open_channel(fd: int) -> Channel | PumpedChannel:
    """The app's end of the message pipe ``fd``, as this OS reads it."""
    return Channel(fd) if current().selectable_pipes else PumpedChannel(fd)


class Channel:
    """The message pipe read when ``select`` says so: exact reads, counting the bytes received and consumed."""

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
        with self._count_lock:
            return self.received + (current().unread(self.fd) or 0)

    def close(self) -> None:
        os.close(self.fd)


class PumpedChannel:
    """The message pipe read ahead by a thread of its own (at most :data:`PUMP_AHEAD_BYTES` beyond what is taken)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.received = 0
        self.consumed = 0
        self._buffer = bytearray()
        self._start = 0  # the buffer's bytes before this offset are taken
        self._wanted = 0  # bytes a waiting read needs buffered, beyond the lead
        self._ended = False
        self._ready = threading.Condition()
        threading.Thread(target=self._pump, name="lesson-channel", daemon=True).start()

    def _pump(self) -> None:
        while True:
            with self._ready:
                while len(self._buffer) - self._start >= max(PUMP_AHEAD_BYTES, self._wanted):
                    self._ready.wait()
            try:
                chunk = os.read(self.fd, CHUNK_BYTES)
            except OSError:
                chunk = b""
            with self._ready:
                self.received += len(chunk)
                self._buffer += chunk
                self._ended = not chunk
                self._ready.notify_all()
            if not chunk:
                return

    def read(self, size: int) -> bytes:
        """``size`` bytes, or fewer at the end of the pipe."""
        with self._ready:
            while len(self._buffer) - self._start < size and not self._ended:
                self._wanted = size
                self._ready.notify_all()
                self._ready.wait()
            self._wanted = 0
            data = bytes(self._buffer[self._start:self._start + size])
            self._start += len(data)
            if self._start > len(self._buffer) // 2:  # drop what was taken, now and then
                del self._buffer[:self._start]
                self._start = 0
            self.consumed += len(data)
            self._ready.notify_all()
            return data

    def written(self) -> int:
        """How many bytes of the lesson's the pump has read so far (those still in the pipe are not known)."""
        with self._ready:
            return self.received

    def close(self) -> None:
        os.close(self.fd)


class OutputPipe:
    """The lesson's fd 1 or fd 2, read without blocking when ``select`` says so, decoded as UTF-8."""

    def __init__(self, name: str, stream: Any) -> None:
        self.name = name
        self.fd = stream.fileno()
        self._stream = stream  # keeps the file object, and so the fd, open
        os.set_blocking(self.fd, False)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.closed = False

    def wait(self) -> None:
        """Return once there is something to read (or the pipe has ended)."""
        select.select([self.fd], [], [])

    def fence(self) -> None:
        """Nothing to wait for: :meth:`pending` reads all that is in the pipe."""

    def release(self) -> None:
        """Nothing to release: the app holds no write end."""

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


class PumpedOutput:
    """The lesson's fd 1 or fd 2, read by blocking reads (:meth:`wait`, on the reader's thread), decoded as UTF-8.

    ``fd`` is the read end and ``writer`` a write end the app keeps for :meth:`fence`, until
    :meth:`release` (the pipe ends only once both the lesson's and the app's write ends are closed).
    """

    def __init__(self, name: str, fd: int, writer: int) -> None:
        self.name = name
        self.fd = fd
        self._writer: int | None = writer
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.closed = False
        self._chunks: list[bytes] = []
        self._lock = threading.Lock()
        self._token = os.urandom(16)
        self._owed = 0  # tokens written and not read yet: the pump looks for them
        self._carry = b""  # what may be the start of the token, held back until the next read
        self._fenced = threading.Event()

    def wait(self) -> None:
        """Read what comes next (blocking), to be taken by :meth:`pending`."""
        try:
            chunk = os.read(self.fd, CHUNK_BYTES)
        except OSError:
            chunk = b""
        with self._lock:
            data, self._carry = self._carry + chunk, b""
            found = False
            while self._owed and self._token in data:
                data = data.replace(self._token, b"", 1)
                self._owed -= 1
                found = True
            if self._owed and chunk:
                self._carry = _token_start(data, self._token)
                data = data[:len(data) - len(self._carry)]
            if data:
                self._chunks.append(data)
            if not chunk:
                self._chunks.append(b"")  # the end
        if found or not chunk:
            self._fenced.set()

    def fence(self) -> None:
        """Return once the pump has read all that was written to the pipe before now (at most
        :data:`FENCE_SECONDS`); at once when the pipe has ended or is released."""
        if self.closed or self._writer is None:
            return
        self._fenced.clear()
        with self._lock:
            self._owed += 1
        try:
            os.write(self._writer, self._token)  # shorter than PIPE_BUF: no other write splits it
        except OSError:
            with self._lock:
                self._owed -= 1
            return
        self._fenced.wait(FENCE_SECONDS)

    def release(self) -> None:
        """Close the app's write end: the lesson is over, and the pipe ends once what it started closes it too."""
        if self._writer is not None:
            os.close(self._writer)
            self._writer = None

    def close(self) -> None:
        os.close(self.fd)

    def pending(self) -> list[str]:
        """The text read so far and not yet taken; marks the pipe closed at its end."""
        with self._lock:
            chunks, self._chunks = self._chunks, []
        parts = []
        for chunk in chunks:
            if not chunk:
                self.closed = True
                parts.append(self._decoder.decode(b"", final=True))
                break
            parts.append(self._decoder.decode(chunk))
        return [part for part in parts if part]


def _token_start(data: bytes, token: bytes) -> bytes:
    """The longest end of ``data`` that begins ``token`` (the rest of it may come with the next read)."""
    for size in range(min(len(token) - 1, len(data)), 0, -1):
        if token.startswith(data[-size:]):
            return data[-size:]
    return b""
