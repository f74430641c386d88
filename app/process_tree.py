"""The processes a lesson started, found by ancestry (through psutil, on every OS), and ending them.

A process's descendants are found while it lives: what a dying parent orphans is
re-parented away from the lesson (to ``init``, or on Linux to the lesson process when it is
a child subreaper, see :mod:`app.process_posix`). Each OS adds what reaches the rest: a
process group on POSIX, a Job Object on Windows (:mod:`app.process_os`).
"""

from __future__ import annotations

import time

import psutil

#: How long ending a lesson's processes may wait for them to be gone.
END_SECONDS = 5.0
_POLL_SECONDS = 0.005


def descendants(pid: int) -> list[psutil.Process]:
    """The living (not zombie) descendants of ``pid``; none when it has ended."""
    try:
        found = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []
    return [child for child in found if _alive(child)]


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def end_descendants(pid: int, seconds: float = END_SECONDS) -> bool:
    """Kill the descendants of ``pid`` until none is left alive, for at most ``seconds``.

    Each round kills what it finds; a child that a dying process started meanwhile is found
    in the next round (on Linux ``pid``, the subreaper, holds it). True when none is left.
    """
    deadline = time.monotonic() + seconds
    while found := descendants(pid):
        if time.monotonic() > deadline:
            return False
        for child in found:
            try:
                child.kill()
            except psutil.Error:
                pass  # it ended on its own
        time.sleep(_POLL_SECONDS)
    return True


def suspend(pid: int) -> bool:
    """Stop ``pid`` where it is, a long C call included (SIGSTOP on POSIX, NtSuspendProcess on Windows);
    False when it has ended."""
    try:
        psutil.Process(pid).suspend()
    except psutil.Error:
        return False
    return True

