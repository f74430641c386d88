"""The processes a lesson started, found by ancestry in ``/proc``, and ending them however they detached.

A process group reaches what a lesson starts only while it stays in the group: a child
that calls ``os.setsid()``, a double fork, or ``subprocess.Popen(..., start_new_session=True)``
leaves it. Ancestry reaches those too, as long as the lesson process lives to hold them:
it is a child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``), so a grandchild whose parent
exits becomes its child instead of ``init``'s. Elsewhere only the group is known.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

#: ``prctl`` option that makes the orphaned descendants of the caller its own children (Linux ≥ 3.4).
PR_SET_CHILD_SUBREAPER = 36
#: How long ending a lesson's processes may wait for them to be gone.
END_SECONDS = 5.0
_POLL_SECONDS = 0.005


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants; False where the system cannot."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _processes() -> list[tuple[int, int, int]]:
    """``(pid, parent pid, process group)`` of every living (not zombie) process, from ``/proc``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()  # the name before ")" may hold spaces
        except (OSError, IndexError):
            continue  # it ended while we looked
        if fields[0] not in (b"Z", b"X"):
            found.append((int(name), int(fields[1]), int(fields[2])))
    return found


def descendants(pid: int) -> list[int]:
    """The living descendants of ``pid`` (Linux; elsewhere none are known)."""
    if not os.path.isdir("/proc/self"):
        return []
    children: dict[int, list[int]] = {}
    for child, parent, _ in _processes():
        children.setdefault(parent, []).append(child)
    found, todo = [], list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        found.append(child)
        todo.extend(children.get(child, ()))
    return found


def group_alive(group: int) -> bool:
    """Whether a living process is left in process group ``group``."""
    if os.path.isdir("/proc/self"):
        return any(member_group == group for _, _, member_group in _processes())
    try:
        os.killpg(group, 0)  # zombies count here: the bounded wait then simply runs out
    except (ProcessLookupError, PermissionError):
        return False
    return True


def end_descendants(pid: int, seconds: float = END_SECONDS) -> bool:
    """SIGKILL the descendants of ``pid`` until none is left alive, for at most ``seconds``.

    Each round kills what it finds; a child that a dying process forked meanwhile becomes
    ``pid``'s (the subreaper's) and is found in the next round. True when none is left.
    """
    deadline = time.monotonic() + seconds
    while found := descendants(pid):
        if time.monotonic() > deadline:
            return False
        for child in found:
            try:
                os.kill(child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # it ended on its own
        time.sleep(_POLL_SECONDS)
    return True


def wait_group_gone(group: int, seconds: float = END_SECONDS) -> bool:
    """Wait until no living process is left in ``group`` (SIGKILLed members take a moment), at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while group_alive(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True
