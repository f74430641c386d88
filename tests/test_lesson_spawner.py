"""Lesson processes forked from the preloaded server behave as fresh interpreters, and the app copes without it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from app import lesson_spawner
from app.lesson_spawner import ForkedProcess
from app.session import Session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the server forks on Linux only")

PROBE = """
import multiprocessing, os, random, sys
print(__name__, os.path.basename(sys.argv[0]), multiprocessing.current_process().name,
      multiprocessing.parent_process(),
      [name for name in os.environ if name.startswith("GRADSTEP_")])
print(os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid(), random.random())
"""


def _server_ready(seconds: float = 120.0) -> lesson_spawner._Server:
    """The spawner's server, started by a first spawn if need be, once it has imported torch."""
    deadline = time.monotonic() + seconds
    session = Session(warm_spare=True)  # its spare's spawn starts the server
    try:
        while (lesson_spawner._server is None or not lesson_spawner._server.ready) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        session.close()
    assert lesson_spawner._server is not None and lesson_spawner._server.ready, "the server never got ready"
    return lesson_spawner._server


def test_a_forked_lesson_sees_what_a_plain_python_run_sees(events, lesson):
    _server_ready()
    path = lesson(PROBE)
    session = Session(events, warm_spare=False)
    try:
        session.start(path, stop_on_entry=False)
        process = session._process.process
        assert events.end(timeout=60).status == "ok"
        session.start(path, stop_on_entry=False)
        assert events.end(timeout=60).status == "ok"
    finally:
        session.close()
    assert isinstance(process, ForkedProcess)
    plain = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL, cwd=os.path.dirname(path))
    first, leader, second, leader_again = events.output("stdout").splitlines()
    assert first == second == plain.stdout.splitlines()[0]
    # it leads its own session and group (so Stop can end all it started), and two forks of one
    # server do not draw the same random numbers
    assert leader.split()[:2] == leader_again.split()[:2] == ["True", "True"]
    assert leader.split()[2] != leader_again.split()[2]


def test_once_the_server_is_ready_each_lesson_process_is_forked_and_its_crash_is_reported(events, lesson):
    _server_ready()
    path = lesson("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    session = Session(events, warm_spare=False)
    try:
        session.start(path, stop_on_entry=False)
        assert isinstance(session._process.process, ForkedProcess)
        ended = events.end(timeout=60)
    finally:
        session.close()
    assert (ended.status, ended.signal) == ("crashed", "SIGSEGV")


def test_without_the_server_a_lesson_starts_as_a_fresh_interpreter_and_the_next_spawn_starts_it_again(
        events, lesson):
    server = _server_ready()
    server.process.kill()
    server.process.wait()
    deadline = time.monotonic() + 30
    while not server.gone and time.monotonic() < deadline:
        time.sleep(0.02)
    run_to_the_end_unforked(Session(events, warm_spare=False), events, lesson, "fresh")
    assert lesson_spawner._server is not server  # that spawn started a new server
    _server_ready()


def test_a_child_of_a_server_that_died_is_ended_not_left_running(lesson):
    server = _server_ready()
    read, write = os.pipe()
    try:
        child = server.spawn(dict(os.environ, PYTHONPATH=str(lesson_spawner_root())), str(lesson_spawner_root()), write)
    finally:
        os.close(write)
    assert isinstance(child, ForkedProcess)
    server.process.send_signal(signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert _ends_within(child.pid, 30)
    os.close(read)



#: An app that starts a lesson holding the interpreter on a forked lesson process, prints the
#: lesson's pid, and waits to be killed outright.
DYING_APP = """
import signal, sys, threading, time
from app import lesson_spawner, messages as m
from app.session import Session

session = Session(warm_spare=True)  # its spare's spawn starts the server
deadline = time.monotonic() + 120
while (lesson_spawner._server is None or not lesson_spawner._server.ready) and time.monotonic() < deadline:
    time.sleep(0.05)
session.close()
said = threading.Event()
def listen(message):
    if isinstance(message, m.Output) and message.text.strip().isdigit():
        print(message.text.strip(), flush=True)
        said.set()
session = Session(listen, warm_spare=False)
session.start(sys.argv[1], stop_on_entry=False)
said.wait(60)
print(type(session._process.process).__name__, flush=True)
signal.pause()  # until the test kills this app
"""


def test_a_lesson_holding_the_interpreter_ends_when_its_app_is_killed_outright(lesson):
    """A test run stopped with SIGTERM left a lesson process spinning at 90% CPU for good: the app,
    killed, ended nothing, and the lesson, in a call that holds the interpreter, never heard its
    channel close. The fork server hears the app's socket close and ends the lessons still running."""
    assert killing_the_app_ends_its_lesson(DYING_APP, lesson, "ForkedProcess")


#: A lesson that says its pid, then holds the interpreter for good.
SPINNING = "import itertools, os\nprint(os.getpid(), flush=True)\ntotal = sum(itertools.repeat(1))\n"


def killing_the_app_ends_its_lesson(script: str, lesson, kind: str) -> bool:
    """Run ``script`` (an app whose session runs :data:`SPINNING` in a lesson process of class ``kind``), kill it
    with SIGKILL once the lesson spins (no atexit, no Session.close, nothing of the app's runs), and tell whether
    the lesson ends within 10 s. The lesson must be alive at least a second before, past any thread that ended."""
    app = subprocess.Popen([sys.executable, "-c", script, lesson(SPINNING)], stdout=subprocess.PIPE, text=True,
                           cwd=str(lesson_spawner_root()), env=dict(os.environ, PYTHONPATH=str(lesson_spawner_root())),
                           start_new_session=True)
    pid = None
    try:
        pid = int(app.stdout.readline())
        assert app.stdout.readline().strip() == kind
        assert not _ends_within(pid, 1)
        app.kill()
        app.wait()
        return _ends_within(pid, 10)
    finally:
        app.kill()
        if pid is not None and _alive(pid):
            os.kill(pid, signal.SIGKILL)

FRESH_APP = """
import signal, sys, threading
from app import messages as m
from app.session import Session

said = threading.Event()
def listen(message):
    if isinstance(message, m.Output) and message.text.strip().isdigit():
        print(message.text.strip(), flush=True)
        said.set()
session = Session(listen, warm_spare=False, forked=False)
starter = threading.Thread(target=session.start, args=(sys.argv[1],), kwargs={"stop_on_entry": False})
starter.start()
starter.join()  # started from a thread that ends, as a run's reader thread does
said.wait(60)
print(type(session._process.process).__name__, flush=True)
signal.pause()  # until the test kills this app
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the OS kills it on Linux only (PR_SET_PDEATHSIG)")
def test_a_fresh_interpreter_holding_the_interpreter_ends_when_its_app_is_killed_outright(lesson):
    """Where there is no fork server yet (the first seconds) a lesson is a fresh interpreter: one that held the
    interpreter when its app was killed outright lived on. It asks Linux to kill it when the app's thread that
    starts lessons ends, and that thread lives as long as the app, not as the thread that asked for the run."""
    assert killing_the_app_ends_its_lesson(FRESH_APP, lesson, "Popen")


def run_to_the_end_unforked(session: Session, events, lesson, word: str) -> None:
    """Run a lesson printing ``word`` to its end in ``session`` and check it was a fresh interpreter."""
    try:
        session.start(lesson(f"print({word!r})\n"), stop_on_entry=False)
        assert isinstance(session._process.process, subprocess.Popen)
        assert events.end(timeout=120).status == "ok"
    finally:
        session.close()
    assert word in events.output("stdout")


def lesson_spawner_root():
    from app.lesson_process import ROOT

    return ROOT


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` ends within ``seconds``, waited for on a pidfd (readable once the process has ended)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], seconds)[0])
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (FileNotFoundError, IndexError):
        return False


def test_a_server_still_importing_torch_is_ended_at_once_on_close():
    env = dict(os.environ, PYTHONPATH=str(lesson_spawner_root()))
    server = lesson_spawner._Server([sys.executable, "-X", "utf8", "-m", "app.lesson.zygote"], env,
                                    str(lesson_spawner_root()))
    assert not server.ready  # it has only just started: torch is far from imported
    server.close()
    # Killed, not left to hear the close once its import is over (the trace command waited 5 s for that).
    assert server.process.returncode == -signal.SIGKILL


def test_a_run_that_is_not_forked_starts_no_server(events, lesson, monkeypatch):
    monkeypatch.setattr(lesson_spawner, "_server", None)
    run_to_the_end_unforked(Session(events, warm_spare=False, forked=False), events, lesson, "alone")
    assert lesson_spawner._server is None
