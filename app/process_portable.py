"""The lesson process layer with only what every OS has: pipes, threads and psutil.

:class:`PortableOS` is what :mod:`app.process_os` gives where neither the POSIX nor the
Windows part applies, and on Linux when ``GRADSTEP_PORTABLE=1`` forces it (so that the path
Windows and macOS take cannot rot where the tests run); :mod:`app.process_posix` and
:mod:`app.process_windows` override the parts their OS does better. Here:

- the channel's write end reaches a fresh interpreter by inheritance (no ``pass_fds``), and
  there is no fork server;
- the app reads its pipes with blocking reads on threads (no ``select`` on a pipe, no
  ``FIONREAD``: :mod:`app.lesson_pipes`);
- Stop suspends the lesson process and kills its descendants found by ancestry
  (:mod:`app.process_tree`); there is no process group.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from app.process_tree import end_descendants, suspend


class Process(Protocol):
    """What the layer uses of a lesson process: :class:`subprocess.Popen` or a forked one."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class ProcessTree:
    """A lesson process and what it started, as far as the OS lets the app reach them."""

    def __init__(self, process: Process) -> None:
        self.process = process

    def end(self) -> None:
        """End the process and all it started now, whatever they are doing (a long C call included).

        The lesson process is suspended first, so that it starts nothing more while its
        descendants are found and killed; it dies last.
        """
        if self.process.poll() is None and suspend(self.process.pid):
            end_descendants(self.process.pid)
        self.end_rest()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def end_rest(self) -> None:
        """End what the lesson started and may have left running (its run is over, or it is being ended)."""
        if self.process.poll() is None:
            end_descendants(self.process.pid)


#: The buffer :meth:`PortableOS.widen_pipe` asks for: about 550 recorded steps of messages, 100 ms of a recording.
PIPE_BYTES = 1 << 20


class PortableOS:
    """The lesson process layer's OS-specific parts, as any OS can do them."""

    #: Named in messages and tests.
    name = "portable"
    #: Whether lesson processes may be forked from a preloaded server (:mod:`app.lesson_spawner`).
    fork_server = False
    #: Whether ``select`` waits on a pipe and :meth:`unread` counts its bytes (:mod:`app.lesson_pipes`).
    selectable_pipes = False

    _inheriting = threading.Lock()  # one inheritable channel end at a time: no lesson gets another's

    @contextmanager
    def hand_over(self, channel: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """While starting a fresh interpreter: what names ``channel`` (a write end) to it, and the
        :class:`subprocess.Popen` options that let it inherit ``channel`` and nothing of the app's."""
        with self._inheriting:
            os.set_inheritable(channel, True)
            try:
                yield str(channel), {"close_fds": False}
            finally:
                os.set_inheritable(channel, False)

    def tree(self, process: Process) -> ProcessTree:
        """The handle that ends ``process`` (just started) and what it starts."""
        return ProcessTree(process)

    def widen_pipe(self, fd: int) -> None:
        """Give the pipe on ``fd`` a buffer of :data:`PIPE_BYTES` where the OS lets us.

        A recording does not wait for the app at its pauses, so its messages queue in the channel
        pipe while the app is busy (a garbage collection of a long history held it for 49 ms): in
        the OS's usual 64 KiB pipe, 35 recorded steps, after which the lesson waits for the app.
        """

    # ---- in the lesson process ----------------------------------------------------------

    def open_channel(self, name: str) -> int:
        """The file descriptor of the channel's write end that :meth:`hand_over` named ``name``.

        Called first thing in the lesson process: on POSIX, what else of the app's was inheritable came
        along with it (``close_fds=False``), and is closed here, as ``Popen`` would have closed it.
        """
        fd = int(name)
        if os.name == "posix":
            os.closerange(3, fd)
            os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))
        return fd

    def out_of_reach(self, fd: int) -> int:
        """``fd``, moved out of the numbers a lesson opens or closes by range where the OS lets us."""
        return fd

    def unread(self, fd: int) -> int | None:
        """Bytes waiting in the pipe on ``fd``; None where the OS cannot tell."""
        return None

    def become_subreaper(self) -> bool:
        """Make this process the reaper of its orphaned descendants; False where the OS cannot."""
        return False

    def end_with_parent(self, parent: int) -> bool:
        """Have the OS kill this process when its parent, the app (pid ``parent``), dies; False where it cannot.

        The lesson's own thread that hears its channel close cannot run while the lesson holds the
        interpreter (a long C call), and an app killed outright ends nothing.
        """
        return False

