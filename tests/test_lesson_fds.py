"""The lesson's own file descriptors: closing or replacing them leaves GradStep's channel alone, and a lesson
that breaks the channel anyway ends the run at once, with a message, leaving no process behind."""

from __future__ import annotations

import subprocess
import sys

from conftest import process_gone

from app import messages as m

#: How long a test waits for a message before it counts the run as hung (seconds).
BOUND = 15.0

CLOSE_ALL = """
import os

closed = 0
for fd in range(3, 1024):
    try:
        os.close(fd)
        closed += 1
    except OSError:
        pass
os.closerange(3, 4096)
a = 1
b = 2
print("after", a + b, closed)
"""

DUP_OVER = """
import os

r, w = os.pipe()
for fd in range(3, 21):
    if fd not in (r, w):
        try:
            os.dup2(w, fd)
        except OSError:
            pass
a = 1
b = 2
print("after", a + b)
"""

BREAK_WITH_LIBC = """
import ctypes, os, stat

libc = ctypes.CDLL(None)
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode):
            libc.close(fd)  # past every guard: GradStep's channel goes too
    except OSError:
        pass
a = 1
print("after")
"""


def _plain(path: str) -> str:
    return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=60).stdout


def _stepped_to_the_end(session, events, path: str) -> m.Ended:
    """Step into every event to the end, as ``gradstep --trace`` does; the end."""
    session.start(path, stop_on_entry=True)
    while True:
        message = events.wait((m.Paused, m.Ended), timeout=BOUND)
        if isinstance(message, m.Ended):
            return message
        session.step_into()


def test_a_lesson_that_closes_every_fd_it_did_not_open_runs_as_under_plain_python(session, events, lesson):
    path = lesson(CLOSE_ALL)
    assert _stepped_to_the_end(session, events, path).status == "ok"
    assert events.output("stdout") == _plain(path) == "after 3 0\n"  # under plain python nothing was open


def test_a_lesson_that_copies_a_pipe_over_low_fds_runs_as_under_plain_python(session, events, lesson):
    path = lesson(DUP_OVER)
    assert _stepped_to_the_end(session, events, path).status == "ok"
    assert events.output("stdout") == _plain(path) == "after 3\n"


def test_a_lesson_that_breaks_the_channel_anyway_ends_the_run_at_once_and_leaves_nothing(session, events, lesson):
    path = lesson(BREAK_WITH_LIBC)
    session.start(path, stop_on_entry=False)
    pid = session._process.pid
    ended = events.end(timeout=BOUND)
    assert ended.status == "crashed" and ended.error["type"] == "ChannelLost"
    assert "message channel" in ended.error["message"]
    assert process_gone(pid), "the lesson process outlived its run"
