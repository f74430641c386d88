"""The pumped pipes of the portable path (app.lesson_pipes): a fence drains an output pipe exactly, and the
channel's pump reads ahead while the reader gets exact frames."""

from __future__ import annotations

import os
import threading

import pytest

from app import messages as m
from app.lesson_pipes import CHUNK_BYTES, PumpedChannel, PumpedOutput


@pytest.fixture
def pumped():
    """A :class:`PumpedOutput` read by a pump thread, and the lesson's write end of its pipe."""
    read, write = os.pipe()
    lesson = os.dup(write)
    pipe = PumpedOutput("stdout", read, write)

    def pump() -> None:
        while not pipe.closed:
            pipe.wait()
            with lock:
                texts.extend(pipe.pending())

    lock, texts = threading.Lock(), []
    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    ends = [lesson]  # the test may close it and take it out
    yield pipe, ends, lock, texts
    for fd in ends:
        os.close(fd)
    pipe.release()
    thread.join(5)
    pipe.close()


def taken(pipe: PumpedOutput, lock: threading.Lock, texts: list[str]) -> str:
    with lock:
        return "".join(texts + pipe.pending())


@pytest.mark.parametrize("size", [5, CHUNK_BYTES - 5, 3 * CHUNK_BYTES + 7], ids=["short", "token-split", "long"])
def test_a_fence_returns_once_all_written_before_it_is_read_and_its_token_never_shows(pumped, size):
    pipe, (lesson,), lock, texts = pumped
    text = ("梯度" * size)[:size]
    for _ in range(3):
        os.write(lesson, text.encode())
        pipe.fence()  # the lesson waits at a pause: everything it wrote is read after this
        assert taken(pipe, lock, texts) == text
        texts.clear()


def test_the_pipe_ends_once_the_lesson_and_the_app_have_closed_their_write_ends(pumped):
    pipe, ends, lock, texts = pumped
    lesson = ends.pop()
    os.write(lesson, "再见\n".encode())
    os.close(lesson)
    pipe.release()
    for _ in range(500):
        if pipe.closed:
            break
        threading.Event().wait(0.01)
    assert pipe.closed and taken(pipe, lock, texts) == "再见\n"
    pipe.fence()  # returns at once on an ended pipe


def test_the_pumped_channel_counts_what_it_read_ahead_and_reads_exact_frames():
    read, write = os.pipe()
    channel = PumpedChannel(read)
    frames = [m.encode(m.Output("stdout", "x" * size)) for size in (1, CHUNK_BYTES, 5 * CHUNK_BYTES)]
    for frame in frames:
        os.write(write, frame)
    os.close(write)
    messages = [m.read_message(channel) for _ in frames]
    assert [len(message.text) for message in messages] == [1, CHUNK_BYTES, 5 * CHUNK_BYTES]
    assert m.read_message(channel) is None
    assert channel.written() == channel.consumed == sum(map(len, frames))
    channel.close()
