"""The lesson-process server: imports torch and the runner once, then forks each lesson process from itself.

A fresh interpreter spends about 2.5 s of CPU on ``import torch`` before a run can start; a
child forked from a process that has already imported it starts in milliseconds, and shares
those pages with its siblings. The server runs no lesson code and starts no thread of its
own, so each child is what a warm spare was: an interpreter with torch and the runner
imported, waiting for its ``RunLesson``. It is Linux-only (``app/lesson_spawner.py`` starts it
there, and a fresh interpreter elsewhere).

Why not ``multiprocessing``'s forkserver: its children run multiprocessing's bootstrap
(``sys.stdin`` swapped for ``/dev/null``, the process named ``Process-1`` and registered as
a multiprocessing child, its own exit handling), which a lesson would see; here the child
is a bare ``os.fork()`` that goes straight into :func:`app.lesson.runner.main`.

Protocol, on the ``SOCK_SEQPACKET`` socket the app passes as the fd named by
:data:`app.messages.SERVER_FD_VARIABLE`,
one JSON object a packet:

- server → app ``{"ready": true}`` once torch is imported;
- app → server ``{"env": {...}, "cwd": "..."}`` with four fds attached: the lesson's stdin,
  stdout, stderr and message channel; the server answers ``{"pid": n}``;
- server → app ``{"exited": n, "code": c}`` when a child ends, ``c`` as
  :attr:`subprocess.Popen.returncode` gives it (``-11`` for SIGSEGV).

The server ends when the app closes its end of the socket, and ends the children still running
then, each with its process group: the app closes it after ending its runs, unless it was killed
outright or crashed, and a lesson in a call that holds the interpreter cannot hear its own
channel close.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import warnings
from typing import Any, NoReturn

from app.messages import CHANNEL_FD_VARIABLE, SERVER_FD_VARIABLE

#: The largest request: an environment of a few hundred variables fits many times over.
MAX_PACKET = 1 << 20


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the app is gone: the loop ends on its next read


def _reap(sock: socket.socket, children: set[int]) -> None:
    """Report every child that has ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        _send(sock, {"exited": pid, "code": os.waitstatus_to_exitcode(status)})


def _end(children: set[int]) -> None:
    """End the lesson processes still running, each with its process group, once the app is gone.

    An app that ends normally has ended its runs by then; one killed outright or crashed ended
    nothing, and a lesson in a call that holds the interpreter never hears its channel close.
    """
    for pid in children:
        for kill in (os.killpg, os.kill):  # the group it leads; itself, if it has not made one yet
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _become_lesson(request: dict[str, Any], fds: list[int], own: list[int]) -> NoReturn:
    """In the child: take the request's fds as 0, 1, 2 and the channel, its environment and folder, and run."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in own:
            os.close(fd)
        os.setsid()  # its own session and group, as Popen(start_new_session=True) gives
        stdin, stdout, stderr, channel = fds
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[CHANNEL_FD_VARIABLE] = str(channel)
        os.chdir(request["cwd"])
        from app.lesson import runner

        runner.main()  # ends the process itself
    finally:
        os._exit(1)  # only if the runner raised: never return into the server's loop


def serve(sock: socket.socket) -> None:
    """Fork a lesson process for each request on ``sock`` until the app closes it."""
    import torch  # noqa: F401 - the import that each child is spared

    from app.lesson import runner  # noqa: F401 - and the runner's own imports

    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so that SIGCHLD wakes the select below
    own = [sock.fileno(), wake_read, wake_write]
    children: set[int] = set()
    _send(sock, {"ready": True})
    try:
        _serve_requests(sock, wake_read, own, children)
    finally:
        _end(children)


def _serve_requests(sock: socket.socket, wake_read: int, own: list[int], children: set[int]) -> None:
    """Fork a child per request and report the ends of children, in ``children``, until the app is gone."""
    while True:
        try:
            readable, _, _ = select.select([sock, wake_read], [], [])
        except InterruptedError:
            continue
        if wake_read in readable:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
            _reap(sock, children)
        if sock not in readable:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_PACKET, 4)
        except OSError:
            return
        if not data:
            return  # the app closed its end
        request = json.loads(data)
        with warnings.catch_warnings():
            # Python 3.12+ warns about fork() with other threads running; the only one here is
            # OpenBLAS's pool, which numpy starts and which shuts itself down around a fork.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            _become_lesson(request, fds, own)
        children.add(pid)
        for fd in fds:
            os.close(fd)
        _send(sock, {"pid": pid})


def main() -> None:
    """Entry point of the server process."""
    sock = socket.socket(fileno=int(os.environ.pop(SERVER_FD_VARIABLE)))
    try:
        serve(sock)
    finally:
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
