"""Nothing the lesson starts outlives the run, and nothing the lesson does hangs it or passes silently."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import line_of

from app import messages as m
from app.process_os import current
from app.session import STALL_SECONDS, Session
from app.trace import trace_records

#: Lessons that start another process, print its pid and stop at the line marked "here".
CHILDREN = {
    "subprocess": """
    import subprocess
    child = subprocess.Popen(["sleep", "60"])
    print(child.pid, flush=True)
    here = 1
    """,
    "multiprocessing": """
    import multiprocessing
    pool = multiprocessing.get_context("fork").Pool(2)
    print(*[p.pid for p in pool._pool], flush=True)
    here = 1
    """,
    "fork": """
    import os
    import time
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    print(pid, flush=True)
    here = 1
    """,
}


#: Lessons whose descendant leaves the lesson's process group, print its pid and stop at the line marked "here".
DETACHED = {
    "fork-setsid": """
    import os
    import time
    pid = os.fork()
    if pid == 0:
        os.setsid()
        time.sleep(60)
        os._exit(0)
    print(pid, flush=True)
    here = 1
    """,
    "double-fork": """
    import os
    import time
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            time.sleep(60)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
    print(os.read(read, 32).decode(), flush=True)
    here = 1
    """,
    "popen-new-session": """
    import subprocess
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    print(child.pid, flush=True)
    here = 1
    """,
}

STARTED = {**CHILDREN, **DETACHED}

#: A double fork's orphan is re-parented away from the lesson: only a subreaper (Linux) or a Job Object
#: (Windows) still reaches it, and the portable part has neither.
ORPHAN_UNREACHED = pytest.mark.skipif(current().name == "portable", reason="no subreaper or Job Object")


def kinds(table: dict[str, str]) -> list:
    """The names of ``table``'s lessons as test parameters, the double fork's marked :data:`ORPHAN_UNREACHED`."""
    return [pytest.param(kind, marks=ORPHAN_UNREACHED) if kind == "double-fork" else kind for kind in table]


def gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (a zombie waiting for a reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(map(gone, pids)):
            return True
        time.sleep(0.01)
    return all(map(gone, pids))


def children_at_pause(session, events, path: str) -> list[int]:
    session.breakpoints[path] = {line_of(path, "here = 1"): None}
    session.start(path, stop_on_entry=False)
    events.pause()
    pids = [int(word) for word in events.output("stdout").split()]
    assert pids and not any(map(gone, pids))
    return pids


@pytest.mark.parametrize("kind", kinds(STARTED))
def test_stop_ends_every_process_the_lesson_started(session, events, lesson, kind):
    pids = children_at_pause(session, events, lesson(STARTED[kind]))
    session.stop()
    assert gone_within(pids, 1.0)


@pytest.mark.parametrize("kind", kinds(STARTED))
def test_closing_ends_every_process_the_lesson_started(session, events, lesson, kind):
    pids = children_at_pause(session, events, lesson(STARTED[kind]))
    session.close()
    assert gone_within(pids, 1.0)


def test_the_end_of_a_run_ends_the_processes_it_started(session, events, lesson):
    path = lesson("""
    import subprocess
    child = subprocess.Popen(["sleep", "60"])
    print(child.pid, flush=True)
    """)
    session.start(path, stop_on_entry=False)
    assert events.end().status == "ok"
    assert gone_within([int(events.output("stdout"))], 1.0)


@pytest.mark.parametrize("kind", kinds(DETACHED))
def test_the_end_of_a_run_ends_what_the_lesson_started_however_it_detached(session, events, lesson, kind):
    session.start(lesson(DETACHED[kind]), stop_on_entry=False)
    assert events.end().status == "ok"
    assert gone_within([int(word) for word in events.output("stdout").split()], 1.0)


@pytest.mark.parametrize("kind", ["subprocess", "popen-new-session"])
def test_a_run_has_ended_only_once_what_it_started_is_gone(session, events, lesson, kind):
    session.start(lesson(STARTED[kind]), stop_on_entry=False)
    assert events.end().status == "ok"
    pids = [int(word) for word in events.output("stdout").split()]
    assert pids and all(map(gone, pids))  # the end waited for them: no grace period


def test_stopping_a_run_spares_the_warm_spare(events, lesson):
    path = lesson("x = 1\n")
    session = Session(events, warm_spare=True)
    try:
        session.start(path)
        events.pause()
        deadline = time.monotonic() + 10
        while session._spare is None and time.monotonic() < deadline:  # refilled just after the pause
            time.sleep(0.01)
        spare = session._spare
        assert spare is not None and spare.pid != session._process.pid
        session.stop()
        time.sleep(0.2)  # give a stray group kill the time to land; the assertion is the spare's state
        assert spare.alive() and not gone(spare.pid)
    finally:
        session.close()


def test_stepping_over_a_fork_steps_the_parent_and_lets_the_child_run_untraced(lesson):
    path = lesson("""
    import os
    pid = os.fork()
    if pid == 0:
        print("child says hi", flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    print("parent done")
    """)
    records = trace_records(path, timeout=60)
    assert records[-1]["status"] == "ok"
    assert "".join(r["stdout"] for r in records) == "child says hi\nparent done\n"
    # every line the parent runs is a record, and none of the child's lines is
    assert [r["line"] for r in records if r["event"] == "line"] == [1, 2, 3, 6, 7]


def test_a_forked_child_that_runs_to_the_end_of_the_lesson_ends_as_a_script_does(lesson):
    path = lesson("""
    import os
    pid = os.fork()
    who = "child" if pid == 0 else "parent"
    if pid:
        os.waitpid(pid, 0)
    print(who, flush=True)
    """)
    records = trace_records(path, timeout=60)
    assert records[-1]["status"] == "ok"
    assert sorted("".join(r["stdout"] for r in records).split()) == ["child", "parent"]


@pytest.mark.parametrize("setup", [
    "",
    "import signal\nsignal.signal(signal.SIGUSR1, lambda *args: hits.append(1))\n",
    "import signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\n",
], ids=["plain", "own-sigusr1-handler", "sigusr1-ignored"])
def test_pause_reaches_a_loop_on_one_line(session, events, lesson, setup):
    path = lesson("hits = []\n" + setup + "print('looping', flush=True)\nwhile True: pass\n")
    session.start(path, stop_on_entry=False)
    while "looping" not in events.output("stdout"):
        events.wait(m.Output)
    session.pause()
    snap = events.pause(timeout=10)
    assert snap["line"] == line_of(path, "while True")
    assert snap["vars"]["hits"]["length"] == 0  # the lesson's own handler was never called


def test_a_pause_inside_one_long_call_says_so_and_stop_still_ends_it(session, events, lesson):
    path = lesson("""
    import threading
    import time
    threading.Timer(1.0, print, ("sleeping",), {"flush": True}).start()  # said from inside the sleep
    time.sleep(30)
    """)
    session.start(path, stop_on_entry=False)
    while "sleeping" not in events.output("stdout"):
        events.wait(m.Output)
    session.pause()
    notice = events.wait(m.Notice, timeout=5)
    assert notice.kind == "busy" and notice.line == line_of(path, "time.sleep")
    assert "cannot be interrupted" in notice.text and "time.sleep(30)" in notice.text
    with pytest.raises(queue.Empty):  # past a second look (bytes came in): the busy notice answered the request
        events.wait(m.Notice, timeout=2 * STALL_SECONDS + 0.5)
    pid = session._process.pid
    session.stop()
    assert gone_within([pid], 1.0)


def test_a_breakpoint_in_a_helper_module_is_hit(session, events, lesson):
    helper = lesson("""
    def double(x):
        y = 2 * x
        return y
    """, "helper.py")
    path = lesson("""
    import helper
    z = helper.double(21)
    """)
    session.breakpoints[helper] = {2: None}
    session.start(path, stop_on_entry=False)
    snap = events.pause()
    assert (snap["file"], snap["line"], snap["vars"]["x"]["value"]) == (helper, 2, 21)


def test_a_breakpoint_in_another_thread_says_it_will_not_be_hit(session, events, lesson):
    path = lesson("""
    import threading
    def work():
        total = 1
        return total
    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()
    """)
    session.breakpoints[path] = {line_of(path, "total = 1"): None}
    session.start(path, stop_on_entry=False)
    notice = events.wait(m.Notice)
    assert notice.kind == "breakpoint" and notice.line == line_of(path, "total = 1")
    assert "worker" in notice.text and "will not stop" in notice.text
    assert events.end().status == "ok"


OWN_TRACE = """
import sys

seen = []

def local(frame, event, arg):
    seen.append((event, frame.f_code.co_name, frame.f_lineno))
    return local

def tracer(frame, event, arg):
    seen.append((event, frame.f_code.co_name, frame.f_lineno))
    return local if frame.f_code.co_name == "f" else None

def f(x):
    y = x + 1
    return y

sys.settrace(tracer)
mine = sys.gettrace() is tracer
f(1)
f(2)
sys.settrace(None)
print(mine, sys.gettrace(), seen)
"""


@pytest.mark.parametrize("stepping", [True, False], ids=["stepped", "continued"])
def test_the_lessons_own_trace_function_sees_what_it_sees_under_plain_python_and_stepping_goes_on(
        session, events, lesson, stepping):
    path = lesson(OWN_TRACE)
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60).stdout
    assert plain.startswith("True None [('call', 'f', 13), ('line', 'f', 14)")
    session.start(path, stop_on_entry=stepping)
    lines = []
    while isinstance(message := events.wait((m.Paused, m.Ended)), m.Paused):
        lines.append(message.snapshot["line"])
        session.step_into()
    assert message.status == "ok" and events.output("stdout") == plain
    if stepping:  # every line after sys.settrace(tracer) was still a pause, f's body included
        assert {line_of(path, "y = x + 1"), line_of(path, "sys.settrace(None)"), line_of(path, "print(mine")} \
            <= set(lines)
    assert not any(isinstance(message, m.Notice) for message in events.seen)
