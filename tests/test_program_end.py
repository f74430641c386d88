"""After the last line: the engine waits for the lesson's threads and runs its exit handlers, as Python does,
and says so when the program does not end."""

from __future__ import annotations

import subprocess
import sys

from conftest import process_gone

from app import messages as m
from app.session import STALL_SECONDS

#: How long a test waits for a message before it counts the run as hung (seconds).
BOUND = 15.0


def _run(session, events, path: str) -> None:
    session.start(path, stop_on_entry=False)
    events.wait(m.Started, timeout=120)


def test_threads_atexit_handlers_and_finalizers_run_after_the_last_line_as_under_plain_python(
        session, events, lesson):
    path = lesson("""
    import atexit
    import threading
    import time
    import weakref

    class Box:
        pass

    box = Box()
    weakref.finalize(box, print, "finalized")
    atexit.register(print, "atexit handler")
    worker = threading.Thread(target=lambda: (time.sleep(0.2), print("thread done")))
    worker.start()
    print("last line")
    """)
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60)
    assert plain.stdout == "last line\nthread done\natexit handler\nfinalized\n"
    _run(session, events, path)
    assert events.end(timeout=BOUND).status == "ok"
    assert events.output("stdout") == plain.stdout
    assert not any(isinstance(message, m.Notice) for message in events.seen)  # "exiting" is the session's


def test_an_exit_handler_that_never_returns_is_said_to_keep_the_program_from_ending(session, events, lesson):
    path = lesson("""
    import atexit

    def never():
        while True:
            pass

    atexit.register(never)
    print("last line")
    """)
    _run(session, events, path)
    notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
    assert notice.kind == "stalled" and "exit handler" in notice.text and "Stop ends it" in notice.text
    assert not any(isinstance(message, m.Ended) for message in events.seen)  # it did not end "ok"
    pid = session._process.pid
    session.stop()
    ended = events.end(timeout=BOUND)
    assert ended.status == "stopped" and ended.error["type"] == "NotFinished"
    assert events.output("stdout") == "last line\n"
    assert process_gone(pid), "the lesson process outlived Stop"


def test_a_thread_that_never_ends_is_named_when_the_program_does_not_end(session, events, lesson):
    path = lesson("""
    import threading
    import time

    threading.Thread(target=lambda: time.sleep(3600), name="forever").start()
    print("last line")
    """)
    _run(session, events, path)
    notice = events.wait(m.Notice, timeout=BOUND + STALL_SECONDS)
    assert notice.kind == "stalled" and "forever" in notice.text
    session.stop()
    assert events.end(timeout=BOUND).status == "stopped"


def test_a_lesson_that_ends_at_once_is_told_no_stall(session, events, lesson):
    path = lesson("""
    x = 1
    print(x)
    """)
    _run(session, events, path)
    assert events.end(timeout=BOUND).status == "ok"
    assert not any(isinstance(message, m.Notice) for message in events.seen)
