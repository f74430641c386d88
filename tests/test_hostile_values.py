"""Values that fight being looked at: the pause arrives within the summaries' bound whatever the lesson's objects do.

Each lesson holds one kind of object whose methods never return, lie, raise or swallow the
engine's timeout. The engine reads such objects without calling their methods (only a
bounded ``repr``), so the pause arrives and the lesson computes what a plain ``python`` run
computes. A wait longer than :data:`BOUND` fails the test: before these guarantees, each run
hung until the outer timeout.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import line_of, process_gone

from app import lesson_process
from app import messages as m
from app.lesson.bounded_repr import TIMED_OUT
from app.lesson_pipes import PumpedChannel
from app.session import STALL_SECONDS, Session

#: How long a test waits for a pause or an answer before it counts the run as hung (seconds).
BOUND = 15.0
#: How long a run may take to start (a warm spare may still be importing torch on a busy machine).
START = 120.0


def _start(session, events, path: str) -> None:
    session.start(path, stop_on_entry=False)
    events.wait(m.Started, timeout=START)


def _pause_at_done(session, events, path: str) -> dict:
    """Run ``path`` to its ``done = 1`` line; the pause's variables."""
    session.breakpoints[path] = {line_of(path, "done = 1"): None}
    _start(session, events, path)
    return events.pause(timeout=BOUND)["vars"]


def _finish(session, events) -> str:
    """Continue to the end; what the lesson printed."""
    session.resume()
    ended = events.end(timeout=BOUND)
    assert ended.status == "ok", ended.error
    return events.output("stdout")


def test_a_module_whose_parameters_children_and_modules_never_end_lists_its_registered_parameters(
        session, events, lesson):
    path = lesson("""
    import itertools
    import torch

    calls = []

    class Loops(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 3)

        def named_parameters(self, *args, **kwargs):
            calls.append("named_parameters")
            while True:
                pass

        def parameters(self, *args, **kwargs):
            calls.append("parameters")
            for i in itertools.count():
                yield torch.zeros(1)

        def children(self):
            calls.append("children")
            while True:
                pass

        def modules(self):
            calls.append("modules")
            for i in itertools.count():
                yield self

        def named_modules(self, *args, **kwargs):
            calls.append("named_modules")
            while True:
                pass

        def forward(self, x):
            return self.lin(x)

    model = Loops()
    out = model(torch.ones(2))  # stepped: the graph names its nodes after the module calls
    done = 1
    print(calls)
    """)
    session.breakpoints[path] = {line_of(path, "out = model"): None}
    _start(session, events, path)
    events.pause(timeout=BOUND)
    session.step_over()
    shown = events.pause(timeout=BOUND)["vars"]["model"]
    assert [(p["name"], p["shape"]) for p in shown["parameters"]] == [("lin.weight", [3, 2]), ("lin.bias", [3])]
    assert (shown["parameter_count"], shown["parameters_cut"]) == (2, False)
    assert shown["repr"].startswith("Loops(\n  (lin): Linear(in_features=2, out_features=3")
    assert _finish(session, events) == "[]\n"  # none of the module's methods ran


def test_a_module_with_more_parameters_than_listed_says_the_list_is_cut(session, events, lesson):
    path = lesson("""
    import torch

    class Endless(torch.nn.Sequential):
        def named_parameters(self, *args, **kwargs):
            while True:
                yield "p", torch.zeros(1)

    model = Endless(*[torch.nn.Linear(1, 1) for _ in range(300)])
    done = 1
    """)
    shown = _pause_at_done(session, events, path)["model"]
    assert shown["parameter_count"] == 600 and shown["parameters_cut"] and len(shown["parameters"]) == 200
    assert shown["parameters"][0]["name"] == "0.weight"


def test_a_list_and_a_dict_whose_iteration_never_ends_and_whose_len_lies_show_their_real_items(
        session, events, lesson):
    path = lesson("""
    class Forever(list):
        def __iter__(self):
            while True:
                pass

        def __len__(self):
            return 10**18

        def __getitem__(self, index):
            while True:
                pass

    class Lying(dict):
        def items(self):
            while True:
                pass

        def __iter__(self):
            while True:
                pass

        def __len__(self):
            return -1

    class Sets(set):
        def __iter__(self):
            while True:
                pass

    xs = Forever([1, 2, 3])
    d = Lying(a=1)
    s = Sets({5})
    nested = [xs, {"d": d}]
    done = 1
    """)
    shown = _pause_at_done(session, events, path)
    assert (shown["xs"]["type"], shown["xs"]["length"]) == ("Forever", 3)
    assert [item["value"] for item in shown["xs"]["items"]] == [1, 2, 3]
    assert shown["d"]["length"] == 1 and shown["d"]["items"][0][0] == "'a'"
    assert shown["s"]["length"] == 1 and shown["s"]["items"][0]["value"] == 5
    assert shown["nested"]["items"][0]["length"] == 3


def test_an_object_that_iterates_forever_and_whose_len_never_returns_is_shown_by_its_repr(session, events, lesson):
    path = lesson("""
    import itertools

    class Bag:
        def __iter__(self):
            return itertools.count()

        def __len__(self):
            while True:
                pass

    b = Bag()
    done = 1
    """)
    assert _pause_at_done(session, events, path)["b"]["repr"].startswith("<__main__.Bag object at")


def test_a_repr_that_swallows_the_timeout_and_goes_on_still_lets_the_pause_arrive(session, events, lesson):
    path = lesson("""
    class Stubborn:
        def __repr__(self):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass

    s = Stubborn()
    done = 1
    after = 2
    print("finished")
    """)
    assert _pause_at_done(session, events, path)["s"]["repr"] == TIMED_OUT
    session.step_over()
    assert events.pause(timeout=BOUND)["vars"]["s"]["repr"] == TIMED_OUT  # known slow: not run again
    assert _finish(session, events) == "finished\n"


def test_a_repr_str_and_format_that_sleep_let_every_pause_arrive(session, events, lesson):
    # Python 3.11: the timeout raised into the repr's thread, while it slept, held the main thread
    # in place until the sleep ended (the run took 31 s with 30 s sleeps; plain python 0.0 s).
    path = lesson("""
    import time

    class Sleepy(Exception):
        def __repr__(self):
            time.sleep(60)
            return "sleepy"

        __str__ = __repr__

        def __format__(self, spec):
            time.sleep(60)
            return "sleepy"

    s = Sleepy()
    a = 1
    b = a + 1
    print("finished", b)
    raise s
    """)
    session.breakpoints[path] = {line_of(path, "s = Sleepy()"): None}
    _start(session, events, path)
    events.pause(timeout=BOUND)
    shown = []
    for _ in range(4):  # s = ..., a = 1, b = ..., print: each pause within the bound, not only the last
        session.step_over()
        shown.append(events.pause(timeout=BOUND))
    markers = ("a = 1", "b = a", "print(", "raise s")
    assert [snapshot["line"] for snapshot in shown] == [line_of(path, marker) for marker in markers]
    assert shown[0]["vars"]["s"]["repr"] == TIMED_OUT
    session.resume()
    post_mortem = events.pause(timeout=BOUND)
    assert post_mortem["post_mortem"] and post_mortem["exception"]["type"] == "Sleepy"
    session.resume()
    assert events.end(timeout=BOUND).status == "error"
    assert events.output("stdout") == "finished 2\n"


def test_an_uncaught_exception_whose_str_never_returns_still_pauses_post_mortem(session, events, lesson):
    path = lesson("""
    class Stubborn(Exception):
        def __str__(self):
            while True:
                try:
                    while True:
                        pass
                except BaseException:
                    pass

    raise Stubborn()
    """)
    _start(session, events, path)
    snapshot = events.pause(timeout=BOUND)
    assert snapshot["post_mortem"] and snapshot["exception"]["type"] == "Stubborn"
    assert snapshot["exception"]["message"] == TIMED_OUT
    session.resume()
    assert events.end(timeout=BOUND).status == "error"


def test_mocks_are_summarised_as_mocks_and_never_called(session, events, lesson):
    path = lesson("""
    from unittest import mock
    import torch

    plain = mock.Mock()
    magic = mock.MagicMock(name="model")
    tensor_like = mock.MagicMock(spec=torch.Tensor)
    module_like = mock.MagicMock(spec=torch.nn.Module)
    list_like = mock.MagicMock(spec=list)
    inside = [magic, {"m": tensor_like}]
    done = 1
    print([len(m.mock_calls) for m in (plain, magic, tensor_like, module_like, list_like)])
    """)
    shown = _pause_at_done(session, events, path)
    assert (shown["plain"]["type"], shown["plain"]["repr"]) == ("Mock", "<Mock>")
    assert shown["magic"]["repr"] == "<MagicMock name='model'>"
    assert shown["tensor_like"]["repr"] == "<MagicMock spec='Tensor'>" and "shape" not in shown["tensor_like"]
    assert shown["module_like"]["repr"] == "<MagicMock spec='Module'>" and "parameters" not in shown["module_like"]
    assert shown["list_like"]["repr"] == "<MagicMock spec='list'>" and "items" not in shown["list_like"]
    assert shown["inside"]["items"][1]["items"][0][1]["mock"] is True
    assert _finish(session, events) == "[0, 0, 0, 0, 0]\n"


def test_attribute_hooks_that_loop_or_raise_and_slow_properties_are_never_run(session, events, lesson):
    path = lesson("""
    import time

    ran = []

    class Loops:
        def __getattribute__(self, name):
            ran.append("__getattribute__")
            while True:
                pass

    class Missing:
        def __getattr__(self, name):
            ran.append("__getattr__")
            while True:
                pass

    class Raises:
        def __getattr__(self, name):
            ran.append("__getattr__ raising")
            raise RuntimeError(name)

        def __bool__(self):
            ran.append("__bool__")
            raise RuntimeError("bool")

        def __eq__(self, other):
            ran.append("__eq__")
            raise RuntimeError("eq")

        def __hash__(self):
            ran.append("__hash__")
            raise RuntimeError("hash")

        def __len__(self):
            ran.append("__len__")
            raise RuntimeError("len")

    class Slow:
        @property
        def value(self):
            ran.append("property")
            time.sleep(5)
            return 1

    loops, missing, raises, slow = Loops(), Missing(), Raises(), Slow()
    in_a_list = [loops, raises]
    done = 1
    print(ran)
    """)
    shown = _pause_at_done(session, events, path)
    assert shown["loops"]["type"] == "Loops" and shown["loops"]["repr"].startswith("<__main__.Loops object")
    assert shown["raises"]["repr"].startswith("<__main__.Raises object") and shown["in_a_list"]["length"] == 2
    assert _finish(session, events) == "[]\n"


def test_looking_never_changes_what_the_lesson_computes(session, events, lesson):
    """Generators and iterators are not advanced, and no method but a repr runs: the output is plain Python's."""
    path = lesson("""
    import torch

    calls = []

    def numbers():
        for i in range(3):
            calls.append(f"next {i}")
            yield i

    class Counted(list):
        def __iter__(self):
            calls.append("__iter__")
            return super().__iter__()

        def __len__(self):
            calls.append("__len__")
            return super().__len__()

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(1, 1)

        def named_parameters(self, *args, **kwargs):
            calls.append("named_parameters")
            return super().named_parameters(*args, **kwargs)

    gen = numbers()
    it = iter([1, 2, 3])
    counted = Counted([1, 2])
    net = Net()
    done = 1
    print(next(gen), next(it), calls)
    """)
    _pause_at_done(session, events, path)
    session.step_over()
    events.pause(timeout=BOUND)
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120).stdout
    assert plain == "0 1 ['next 0']\n"
    assert _finish(session, events) == plain


def _stall_lesson(lesson, stall: str) -> tuple[str, Path]:
    """A lesson that stalls where ``{reached}`` in ``stall`` marks, and a FIFO it writes a byte into there.

    The test pauses only once that byte came: a pause asked for before the stall would be
    answered (the lesson is still running Python lines), and the test would wait for nothing.
    ``{fifo}`` in ``stall`` is the FIFO's path, for a stall that writes the byte itself.
    """
    reached = Path(lesson("", name="reached"))
    reached.unlink()
    os.mkfifo(reached)
    code = stall.replace("{reached}", f"os.write(os.open({str(reached)!r}, os.O_WRONLY), b'!')")
    code = code.replace("{fifo}", repr(str(reached)))
    path = lesson(f"""
    import itertools, os, stat, struct

    def channel_ends():
        \"\"\"The pipes this process writes to, besides its stdout and stderr.\"\"\"
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
                    yield fd
            except OSError:
                pass

    {code}
    done = 1
    """)
    return path, reached


def _wait_reached(reader: int) -> None:
    """Wait for the lesson's byte on the FIFO opened (without blocking) as ``reader``."""
    assert select.select([reader], [], [], BOUND)[0], "the lesson never reached its stall"
    os.close(reader)


def _reader(reached: Path) -> int:
    return os.open(reached, os.O_RDONLY | os.O_NONBLOCK)  # before the run, so the lesson's open finds it


def test_a_lesson_that_writes_into_the_message_channel_is_said_to_be_stalled_and_stop_ends_it(
        session, events, lesson):
    path, reached = _stall_lesson(lesson, """for fd in channel_ends():
        try:
            os.write(fd, b"GS" + struct.pack("!I", 100_000_000))  # a frame header, and never its body
        except OSError:
            pass
    {reached}""")
    session.breakpoints[path] = {line_of(path, "done = 1"): None}
    reader = _reader(reached)
    _start(session, events, path)
    _wait_reached(reader)
    session.pause()
    notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
    assert notice.kind == "stalled" and "Stop ends it" in notice.text
    session.stop()
    assert events.end(timeout=BOUND).status == "stopped"
    assert not any(isinstance(message, m.Paused) for message in events.seen)


def test_a_call_that_holds_the_interpreter_is_said_to_be_stalled_and_stop_ends_it(session, events, lesson):
    # The byte is written from inside the C call (sum -> chain -> map -> os.write), so once the
    # test reads it no bytecode of the lesson runs again. Written by a Python statement before
    # the call, the byte let the test's pause land on the bytecodes between the write and sum()
    # about one run in ten: a pause, rightly, and the stalled notice the test waited for never came.
    path, reached = _stall_lesson(
        lesson, "fd = os.open({fifo}, os.O_WRONLY)\n"
                "    total = sum(itertools.chain(map(os.write, [fd], [b'!']), itertools.repeat(1)))  # never back")
    reader = _reader(reached)
    _start(session, events, path)
    _wait_reached(reader)
    session.pause()
    notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
    assert notice.kind == "stalled", notice
    assert not any(isinstance(message, m.Paused) for message in events.seen)
    pid = session._process.pid
    session.stop()
    assert events.end(timeout=BOUND).status == "stopped"
    assert process_gone(pid), "the lesson process outlived Stop"


class _LateChannel(PumpedChannel):
    """The portable part's channel, whose pump starts reading only once :attr:`gate` is set."""

    def __init__(self, fd: int) -> None:
        self.gate = threading.Event()
        super().__init__(fd)

    def _pump(self) -> None:
        self.gate.wait()
        super()._pump()


def test_a_message_written_before_the_pause_request_and_read_after_it_is_no_answer(events, lesson, monkeypatch):
    # Where the OS cannot count the bytes still in the pipe (the portable part, on Windows), what
    # the lesson wrote before the request may be read after it: the run's Started was, now and
    # then, under load, and the session took it for the answer and never said the lesson was
    # stalled (ci21 and ci15: a 30 s wait for a notice that never came). Here the app's pump
    # reads nothing until the lesson holds the interpreter and the request is sent.
    channels: list[_LateChannel] = []

    def late_channel(fd: int) -> _LateChannel:
        channels.append(_LateChannel(fd))
        return channels[-1]

    monkeypatch.setattr(lesson_process, "open_channel", late_channel)
    path, reached = _stall_lesson(
        lesson, "fd = os.open({fifo}, os.O_WRONLY)\n"
                "    total = sum(itertools.chain(map(os.write, [fd], [b'!']), itertools.repeat(1)))  # never back")
    reader = _reader(reached)
    session = Session(events, warm_spare=False)
    try:
        session.start(path, stop_on_entry=False)
        _wait_reached(reader)
        session.pause()
        channels[-1].gate.set()  # Ready and Started, written before the request, are read after it
        notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
        assert notice.kind == "stalled", notice
        assert [type(message).__name__ for message in events.seen[:2]] == ["Started", "Notice"]
        session.stop()
        assert events.end(timeout=BOUND).status == "stopped"
    finally:
        session.close()


def test_a_stall_behind_a_recording_the_app_is_still_reading_is_said_to_be_stalled(session, events, lesson):
    # The app reads the recorded pauses slower than the lesson writes them; the lesson then holds
    # the interpreter. Counting every message heard after the request as an answer, the session
    # took the recording's backlog for one and never said the lesson was stalled.
    path, reached = _stall_lesson(
        lesson, "fd = os.open({fifo}, os.O_WRONLY)\n"
                "    for i in range(300):\n"
                "        x = i\n"
                "    total = sum(itertools.chain(map(os.write, [fd], [b'!']), itertools.repeat(1)))  # never back")

    def slow_reader(message):
        if isinstance(message, m.Paused):
            time.sleep(0.005)  # an app busy drawing: the recorded pauses queue up in the channel
        events(message)

    session.listeners[:] = [slow_reader]
    reader = _reader(reached)
    session.start(path, stop_on_entry=True)
    events.pause(timeout=START)
    session.record()
    _wait_reached(reader)
    session.pause()
    notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
    assert notice.kind == "stalled", notice
    paused = [message for message in events.seen if isinstance(message, m.Paused)]
    assert len(paused) > 300 and all(message.snapshot.get("recording") for message in paused[1:])
    session.stop()
    assert events.end(timeout=BOUND).status == "stopped"
