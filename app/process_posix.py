"""The lesson process layer on Linux and macOS: ``pass_fds``, process groups, ``select`` and ``FIONREAD`` on pipes.

The lesson process leads its own process group, so that killing the group ends whatever
the lesson started and left in it (subprocesses, workers, forks). What left the group
(``os.setsid()``, a double fork, ``start_new_session=True``) is found by ancestry
(:mod:`app.process_tree`) as long as the lesson process lives to hold it: on Linux it is a
child subreaper (``PR_SET_CHILD_SUBREAPER``), so a grandchild whose parent exits becomes its
child instead of ``init``'s. On Linux lesson processes are forked from a preloaded server
(:mod:`app.lesson_spawner`).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psutil

from app.process_portable import PIPE_BYTES, PortableOS, Process, ProcessTree
from app.process_tree import END_SECONDS

#: ``prctl`` option that makes the orphaned descendants of the caller its own children (Linux ≥ 3.4).
PR_SET_CHILD_SUBREAPER = 36
#: ``prctl`` option that sends the caller a signal when the thread that started it ends.
PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.005


def group_alive(group: int) -> bool:
    """Whether a living (not zombie) process is left in process group ``group``."""
    for process in psutil.process_iter(["status"]):
        if process.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        try:
            if os.getpgid(process.pid) == group:
                return True
        except OSError:
            continue  # it ended while we looked
    return False


def wait_group_gone(group: int, seconds: float = END_SECONDS) -> bool:
    """Wait until no living process is left in ``group`` (SIGKILLed members take a moment), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while group_alive(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


class PosixTree(ProcessTree):
    """A lesson process that leads its own group: the group and the process's descendants end with it
    (suspended, on Linux it holds the orphaned ones as their subreaper until it dies last)."""

    def end_rest(self) -> None:
        """SIGKILL every process of the lesson's group and wait (bounded) until they are gone.

        The group's id is the lesson process's pid, which stays reserved while any member
        lives, even after the lesson process itself has been reaped.
        """
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return  # the group is already empty
        wait_group_gone(self.process.pid)


class PosixOS(PortableOS):
    """Linux and macOS."""

    name = "posix"
    fork_server = sys.platform.startswith("linux")
    selectable_pipes = True

    @contextmanager
    def hand_over(self, channel: int) -> Iterator[tuple[str, dict[str, Any]]]:
        yield str(channel), {"pass_fds": (channel,), "start_new_session": True}

    def tree(self, process: Process) -> ProcessTree:
        return PosixTree(process)

    def out_of_reach(self, fd: int) -> int:
        """``fd`` moved to a number far above those a lesson opens or closes by range (``for fd in range(3, 21)``).

        The lowest number at or above ``limit - 64`` that is free, below a soft limit of at most
        4096, so 960 under Linux's usual 1024 and 192 under macOS's 256; where none is free, ``fd``
        stays where it is.
        """
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        limit = 4096 if soft == resource.RLIM_INFINITY else min(soft, 4096)
        try:
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, max(3, limit - 64))
        except OSError:
            return fd
        os.close(fd)
        return moved

    def widen_pipe(self, fd: int) -> None:
        if not hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux only: macOS sizes its pipes itself
            return
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:  # above fs.pipe-max-size, or the user's pipe buffers are used up: the usual size stays
            pass

    def unread(self, fd: int) -> int | None:
        waiting = bytearray(4)
        try:
            fcntl.ioctl(fd, termios.FIONREAD, waiting)
        except OSError:
            return 0
        return int.from_bytes(waiting, sys.byteorder)

    def become_subreaper(self) -> bool:
        if not sys.platform.startswith("linux"):
            return False
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0

    def end_with_parent(self, parent: int) -> bool:
        # The signal comes when the thread that started this process ends: the app starts fresh
        # interpreters from a thread that lives as long as it does (app.lesson_spawner).
        if not sys.platform.startswith("linux"):
            return False
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
        if os.getppid() != parent:  # the app died before the line above: no signal will come
            os._exit(1)
        return True
