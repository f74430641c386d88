"""The channel between the app and the lesson: data only, bounded, and a bad frame ends just the run."""

from __future__ import annotations

import io
import json
import pickle
import struct
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from app import messages as m
from app.process_os import portable_forced

MAIN = str(Path(__file__).resolve().parent.parent / "main.py")

#: Finds the lesson's end of the channel (the one pipe it writes to besides its stdout and
#: stderr, which both go to the stderr pipe) as ``fd``.
FIND_CHANNEL = """
import fcntl, os, sys, time
sys.stdout.flush()
stderr_pipe = os.readlink("/proc/self/fd/2")
def pipe_of(fd):  # listdir's own directory fd is listed, then closed: it has no link any more
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
fd = next(int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2
          and pipe_of(fd).startswith("pipe:") and pipe_of(fd) != stderr_pipe
          and fcntl.fcntl(int(fd), fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY)
"""
#: Writes ``DATA`` straight onto the channel, as a hostile lesson could.
WRITE_TO_CHANNEL = FIND_CHANNEL + """
os.write(fd, DATA)
time.sleep(30)
"""


def frame(body: bytes) -> bytes:
    return b"GS" + struct.pack("!I", len(body)) + body


def read_one(data: bytes):
    return m.read_message(io.BytesIO(data))


def across(value):
    """``value`` after a trip through the channel's encoding."""
    return m.decode(m.encode(value)[m.HEADER_SIZE:])


# ---- what crosses ------------------------------------------------------------------------


def test_messages_and_plain_data_round_trip():
    for message in (m.RunLesson("/l.py", "x = 1", {"/l.py": {3: None, 7: "x > 1"}}, False),
                    m.Resume("run_to", "/l.py", 4, watches=["x"]), m.Pause(), m.Ready(12, None),
                    m.Request(3, "values", {"expression": "w", "grad": True}),
                    m.Ended("error", {"type": "ValueError", "message": "no", "line": 2})):
        assert across(message) == message
    graph = {"edges": [[1, 2, 0]], "roots": {"loss": 2}, "leaves": {1: "w"}, "name": "é∂", "raw": b"\0\1",
             "escaped": b"caf\xe9".decode("utf-8", "surrogateescape")}
    assert across(graph) == graph


def test_arrays_cross_as_dtype_shape_and_bytes():
    for array in (np.arange(12, dtype=np.float32).reshape(3, 4), np.array([True, False]),
                  np.zeros((0, 5), np.int64), np.array([1 + 2j], np.complex64), np.array(3.5)):
        back = across({"values": array})["values"]
        assert back.dtype == array.dtype and back.shape == array.shape and np.array_equal(back, array)
    strided = np.arange(20, dtype=np.int16)[::3]
    assert np.array_equal(across(strided), strided)


def test_what_msgpack_lacks_arrives_as_the_nearest_plain_value():
    sent = {"t": (1, 2), "s": {3}, "big": 10**30, "c": 1 - 2j, "f": np.float32(0.5), "i": np.int64(-4),
            "b": np.bool_(True), "ba": bytearray(b"ab")}
    assert across(sent) == {"t": [1, 2], "s": [3], "big": 10**30, "c": 1 - 2j, "f": 0.5, "i": -4, "b": True,
                            "ba": b"ab"}
    assert type(across(np.bool_(True))) is bool


def test_anything_else_costs_one_field_not_the_message():
    class Frame:
        pass

    sent = m.Paused({"ok": 1, "obj": Frame(), "objects": np.array([None, 1], dtype=object),
                     "nested": m.Pause(), "huge": 10**5000})
    got = across(sent).snapshot
    assert got["ok"] == 1
    assert got["obj"] == "<test_anything_else_costs_one_field_not_the_message.<locals>.Frame: not plain data, left out>"
    assert got["objects"] == "<ndarray of object: not plain data, left out>"
    assert got["nested"] == "<Pause: not plain data, left out>"
    assert "not plain data" in got["huge"]



def test_frames_stay_whole_when_encoded_one_inside_another_on_many_threads_and_after_a_huge_one():
    """Each thread keeps one packer between messages: a nested call, other threads and a message
    bigger than a kept buffer each still get their own frame."""
    nested = []

    class EncodesWhenAsked:  # isinstance() asks __class__, which runs this while the outer frame is packed
        @property
        def __class__(self):
            nested.append(m.encode(m.Paused({"inner": list(range(40))})))
            return EncodesWhenAsked

    outer = m.encode(m.Paused({"first": list(range(30)), "odd": EncodesWhenAsked(), "last": "end"}))
    assert m.decode(nested[0][m.HEADER_SIZE:]).snapshot == {"inner": list(range(40))}
    got = m.decode(outer[m.HEADER_SIZE:]).snapshot
    assert (got["first"], got["last"]) == (list(range(30)), "end") and "not plain data" in got["odd"]

    frames: dict[int, list[bytes]] = {}

    def encode_many(worker: int) -> None:
        frames[worker] = [m.encode(m.Request(i, "values", {"worker": worker, "items": [i] * (i % 7)}))
                          for i in range(300)]

    workers = [threading.Thread(target=encode_many, args=(w,)) for w in range(4)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()
    for worker, sent in frames.items():
        assert [m.decode(f[m.HEADER_SIZE:]) for f in sent] == [
            m.Request(i, "values", {"worker": worker, "items": [i] * (i % 7)}) for i in range(300)]

    huge = "x" * (3 << 20)
    assert across({"huge": huge}) == {"huge": huge} and across({"small": 1}) == {"small": 1}

# ---- what is refused ---------------------------------------------------------------------


def test_a_pickle_naming_a_module_in_the_working_directory_is_never_imported(tmp_path, monkeypatch):
    (tmp_path / "numpy_evil.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    exploit = b"\x80\x04cnumpy_evil\nEvilDType\n."  # GLOBAL numpy_evil.EvilDType, which the old allow-list let in
    with pytest.raises(m.MalformedMessage):
        read_one(frame(exploit))
    assert "numpy_evil" not in sys.modules and not (tmp_path / "ran").exists()


def test_decompression_bombs_are_refused_without_allocating():
    shared = []  # 520 bytes of pickle that, shared level upon level, unpickle to ~1 GB of references
    for _ in range(10):
        shared = [shared] * 16
    bombs = {
        "shared lists": pickle.dumps(shared),
        "bytearray REDUCE": b"\x80\x04cbuiltins\nbytearray\nJ\x00\x00\x00\x80\x85R.",
        "array of 2**31 items": b"\xdd\x80\x00\x00\x00",
        "map of 2**31 items": b"\x92\xc0\xdf\x80\x00\x00\x00",
        "numpy ext of 2**31 floats": m.encode(np.zeros(4))[m.HEADER_SIZE:].replace(
            struct.pack("!Q", 4), struct.pack("!Q", 2**31)),
        "object dtype": m.encode(np.zeros(1))[m.HEADER_SIZE:].replace(b"<f8", b"|O8"),
    }
    tracemalloc.start()
    try:
        for name, body in bombs.items():
            with pytest.raises(m.MalformedMessage):
                read_one(frame(body))
                pytest.fail(f"{name} was decoded")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(bombs["shared lists"]) < 1000 and peak < 1 << 20


@pytest.mark.parametrize("data, says", [
    (b"hello, world", "a frame starting with b'hello,'"),
    (b"GS" + struct.pack("!I", 2**31), "more than the 256 MB limit"),
    (b"GS\0", "inside a frame header"),
    (b"GS" + struct.pack("!I", 40) + b"x" * 10, "10 of 40 bytes"),
    (frame(b"\x92\xa6Ghost_\x80"), "no message type 'Ghost_'"),
    (frame(b"\x92\xa6Paused\x81\xa8snapshot\x01"), "Paused with 'snapshot' of type int"),
    (frame(b"\x92\xa6Output\x81\xa6stream\xa3out"), "missing 1 required positional argument"),
    (frame(b"\x92\xc0\x81\x91\x01\x02"), "unhashable"),
    (frame(b"\xc0\xc0"), "ExtraData"),
])
def test_crafted_frames_are_malformed_and_say_why(data, says):
    with pytest.raises(m.MalformedMessage) as raised:
        read_one(data)
    assert says in str(raised.value)


def test_a_stream_that_ends_between_frames_just_ends():
    assert read_one(m.encode(m.Pause())) == m.Pause()
    assert m.read_message(io.BytesIO(b"")) is None


# ---- a real lesson process that breaks the channel ----------------------------------------


@pytest.mark.parametrize("data, says", [
    (b"not a frame at all", "a frame starting with"),
    (b"GS\xff\xff\xff\xff", "more than the 256 MB limit"),
])
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the channel through /proc")
def test_a_lesson_writing_garbage_on_the_channel_ends_its_run_and_the_next_run_works(session, events, lesson,
                                                                                      data, says):
    hostile = lesson(f"DATA = {data!r}\n" + WRITE_TO_CHANNEL, "hostile.py")
    session.start(hostile, stop_on_entry=False)
    ended = events.end(timeout=20)
    assert ended.status == "crashed"
    assert ended.error["type"] == "MalformedMessage"
    assert ended.error["message"].startswith("the lesson process sent a malformed message (")
    assert says in ended.error["message"]
    session.start(lesson("x = 41\nx += 1\n", "fine.py"))
    assert events.pause()["line"] == 1
    session.resume()
    assert events.end().status == "ok"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the channel through /proc")
def test_a_frame_cut_short_by_the_lesson_exiting_is_malformed(session, events, lesson):
    cut = lesson("DATA = b'GS\\x00\\x00\\x01\\x00' + b'x' * 10\n"
                 + WRITE_TO_CHANNEL.replace("time.sleep(30)", "os._exit(0)"), "cut.py")
    session.start(cut, stop_on_entry=False)
    ended = events.end(timeout=20)
    assert ended.status == "crashed" and "10 of 256 bytes" in ended.error["message"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the channel through /proc")
def test_the_trace_and_the_status_bar_say_the_message_was_malformed(lesson):
    hostile = lesson("DATA = b'garbage!'\n" + WRITE_TO_CHANNEL, "hostile.py")
    done = subprocess.run([sys.executable, MAIN, "--trace", hostile], capture_output=True, text=True, timeout=120)
    end = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 1 and end["status"] == "crashed"
    assert end["error"]["message"] == "the lesson process sent a malformed message (a frame starting with b'garbag')"

    from widgets.run_status_bar import end_text

    assert end_text(m.Ended("crashed", end["error"], end["exit_code"], end["signal"])) == (
        "The lesson process sent a malformed message (a frame starting with b'garbag'); "
        "the next run starts a fresh one")


@pytest.mark.skipif(not sys.platform.startswith("linux") or portable_forced(),
                    reason="pipe buffers are sized on Linux only (F_SETPIPE_SZ), not by the portable process layer")
def test_the_channel_has_room_for_a_recording_to_run_ahead_of_a_busy_app(session, events, lesson):
    """A recording does not wait for the app at its pauses, so its messages queue in the channel. In
    the OS's usual 64 KiB pipe that was 35 steps of bench_history's recording, and the lesson waited
    for the app 31 times in 60,000 steps, up to 49 ms at a time (2 % of the recording)."""
    from app.process_portable import PIPE_BYTES

    session.start(lesson(FIND_CHANNEL + "print(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))\n"), stop_on_entry=False)
    assert events.end().status == "ok"
    assert int(events.output("stdout")) == PIPE_BYTES == 1 << 20
