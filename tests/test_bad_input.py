"""Bad input and bad luck: every failure of a lesson is a clear message, never a dead engine."""

from __future__ import annotations

from conftest import line_of

from app import messages as m
from app.lesson.snapshot import MESSAGE_LIMIT
from app.session import LessonFileError


def test_syntax_error_is_reported_before_any_step(session, events, lesson):
    path = lesson("""
    a = 1
    b = (2 +
    c = 3
    """)
    session.start(path)
    ended = events.end()
    assert ended.status == "error"
    assert ended.error["type"] == "SyntaxError"
    assert ended.error["line"] == 2 and ended.error["column"] >= 5
    assert "never closed" in ended.error["message"]
    assert not any(isinstance(msg, m.Paused) for msg in events.seen)


def test_uncaught_exception_pauses_post_mortem_at_the_raising_line(session, events, lesson):
    path = lesson("""
    import torch
    def divide(a, b):
        ratio = a / b
        raise ValueError(f"bad ratio {ratio}")   # raises

    x = torch.ones(2)
    divide(4, 2)
    """)
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["post_mortem"] and snap["event"] == "exception"
    assert (snap["function"], snap["line"]) == ("divide", line_of(path, "raises"))
    assert snap["vars"]["ratio"]["value"] == 2.0
    assert [f["function"] for f in snap["stack"]] == ["divide", "<module>"]
    error = snap["exception"]
    assert (error["type"], error["message"]) == ("ValueError", "bad ratio 2.0")
    assert all(entry["file"] == path for entry in error["traceback"])
    # the frame stays inspectable: evaluate in it, and in its caller
    assert events.reply(session.request("evaluate", expression="a * 10"))["value"]["value"] == 40
    assert events.reply(session.request("evaluate", expression="x.sum()", frame=1))["value"]["values"] == 2.0
    session.resume()
    ended = events.end()
    assert ended.status == "error" and ended.error["line"] == line_of(path, "raises")
    assert "ValueError: bad ratio 2.0" in events.output("stderr")



def test_a_huge_exception_message_reaches_the_window_cut_and_the_output_whole(session, events, lesson):
    """A 1,000,000-character message held the window for 30 s: the pause and the run's end carry its
    first MESSAGE_LIMIT characters and how many more it had; stderr has the traceback as Python prints it."""
    path = lesson("""
    x = 1
    raise ValueError("ab" * 500_000)   # raises
    """)
    session.start(path, stop_on_entry=False)
    message = events.pause()["exception"]["message"]
    assert message == "ab" * (MESSAGE_LIMIT // 2) + f" … (+{1_000_000 - MESSAGE_LIMIT:,})"
    session.resume()
    ended = events.end()
    assert ended.status == "error" and ended.error["message"] == message
    assert "ValueError: " + "ab" * 500_000 in events.output("stderr")

def test_sys_exit_ends_as_exited_not_crashed(session, events, lesson):
    path = lesson("""
    import sys
    print("before")
    sys.exit(3)
    """)
    session.start(path, stop_on_entry=False)
    ended = events.end()
    assert (ended.status, ended.exit_code) == ("exited", 3)
    assert events.output("stdout") == "before\n"


def test_input_gives_a_clear_message(session, events, lesson):
    path = lesson("""
    name = input("your name? ")
    """)
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert snap["post_mortem"]
    assert "keyboard input" in snap["exception"]["message"]


def test_segfault_is_reported_and_the_next_run_works(session, events, lesson):
    crash = lesson("""
    import ctypes
    print("about to crash", flush=True)
    ctypes.string_at(0)
    """, "crash.py")
    session.start(crash, stop_on_entry=False)
    ended = events.end()
    assert (ended.status, ended.exit_code, ended.signal) == ("crashed", -11, "SIGSEGV")
    assert "Segmentation fault" in events.output("stderr")  # faulthandler writes its dump to fd 2
    ok = lesson("print('still here')\n", "ok.py")
    session.start(ok, stop_on_entry=False)
    assert events.end().status == "ok"
    assert "still here" in events.output("stdout")


def test_os_exit_is_a_crash_with_its_exit_code(session, events, lesson):
    path = lesson("""
    import os
    os._exit(7)
    """)
    session.start(path, stop_on_entry=False)
    ended = events.end()
    assert (ended.status, ended.exit_code, ended.signal) == ("crashed", 7, None)


def test_print_flood_arrives_in_bounded_chunks(session, events, lesson):
    path = lesson("""
    line = "x" * 99
    for i in range(50_000):
        print(line)
    """)
    session.start(path, stop_on_entry=False)
    assert events.end(timeout=60).status == "ok"
    chunks = [msg.text for msg in events.seen if isinstance(msg, m.Output) and msg.stream == "stdout"]
    assert sum(map(len, chunks)) == 5_000_000
    assert len(chunks) > 50 and max(map(len, chunks)) <= 65536


def test_output_arrives_before_the_pause_that_follows_it(session, events, lesson):
    path = lesson("""
    print("one")
    import sys
    print("two", file=sys.stderr)
    done = 1
    """)
    session.breakpoints[path] = {4: None}
    session.start(path, stop_on_entry=False)
    events.pause()
    assert events.output("stdout") == "one\n"
    assert events.output("stderr") == "two\n"


def test_unusable_files_start_nothing(session, tmp_path):
    missing = tmp_path / "nope.py"
    latin = tmp_path / "latin.py"
    latin.write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    for path, words in ((missing, "There is no file"), (latin, "not UTF-8"), (tmp_path, "folder")):
        try:
            session.start(str(path))
        except LessonFileError as exc:
            assert words in str(exc)
        else:
            raise AssertionError(f"{path} started")
    assert session._process is None


def test_lesson_code_runs_as_main_with_its_source_available(session, events, lesson):
    path = lesson("""
    import inspect, sys, warnings, os
    def shown():
        return 42
    print(__name__, __file__ == sys.argv[0], os.path.dirname(__file__) == sys.path[0])
    print(inspect.getsource(shown).splitlines()[0])
    warnings.warn("careful")
    """)
    session.start(path, stop_on_entry=False)
    assert events.end().status == "ok"
    assert events.output("stdout") == "__main__ True True\ndef shown():\n"
    assert "UserWarning: careful" in events.output("stderr")
