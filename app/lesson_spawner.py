"""Starts lesson processes: on Linux forked from a server that has imported torch once, elsewhere as fresh interpreters.

How a fresh interpreter gets its channel, and whether there is a server, is the OS part's
(:mod:`app.process_os`); where there is none, the warm spare a session keeps is a fresh
interpreter that has already imported torch.

:func:`spawn` gives a :class:`subprocess.Popen`, or on Linux, once the server
(``app/lesson/zygote.py``) is ready, a :class:`ForkedProcess` that answers the same calls
(``pid``, ``stdin``, ``stdout``, ``stderr``, ``poll``, ``wait``, ``kill``), so
:class:`~app.lesson_process.LessonProcess` does not know which it holds. The server is
started by the first spawn, which does not wait for it and starts a fresh interpreter, as
every spawn does while the server is importing torch or after it is gone: a spawn never
waits for ``import torch``.

A forked child is not the app's own child, so its exit code comes from the server, which
reaps it; it is signalled through a pidfd, which names that process and no later one that
reuses its pid.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from app.messages import APP_PID_VARIABLE, CHANNEL_FD_VARIABLE, SERVER_FD_VARIABLE
from app.process_os import current

T = TypeVar("T")

#: How long a spawn waits for the server's answer before it starts a fresh interpreter instead.
ANSWER_SECONDS = 10.0


class ForkedProcess:
    """A lesson process forked by the server, with the parts of :class:`subprocess.Popen` the app uses."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self.pid = pid
        self.stdin = os.fdopen(stdin, "wb")
        self.stdout = os.fdopen(stdout, "rb")
        self.stderr = os.fdopen(stderr, "rb")
        self.returncode: int | None = None
        self._ended = threading.Event()
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except OSError:  # it has already ended and been reaped: its code is on its way
            self._pidfd = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"lesson process {self.pid}", timeout or 0)
        return self.returncode  # type: ignore[return-value] - set before the event

    def kill(self) -> None:
        if self.returncode is None and self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass  # it has ended

    def ended(self, code: int) -> None:
        """The server reaped the process with return code ``code``."""
        self.returncode = code
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        self._ended.set()


class _Server:
    """The app's handle on the lesson-process server: asks it for children and hears how they end."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self._socket, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {name: value for name, value in env.items() if name != CHANNEL_FD_VARIABLE}
        env[SERVER_FD_VARIABLE] = str(theirs.fileno())
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, cwd=cwd, env=env,
                                            start_new_session=True, pass_fds=(theirs.fileno(),))
        finally:
            theirs.close()
        self.ready = False
        self.gone = False
        self._lock = threading.Lock()  # one request at a time: answers come in the order asked
        self._answers: queue.Queue[int | None] = queue.Queue()
        self._children: dict[int, ForkedProcess] = {}
        self._ended: dict[int, int] = {}  # codes heard before their child was handed out
        self._books = threading.Lock()
        threading.Thread(target=self._listen, name="lesson-server", daemon=True).start()

    def spawn(self, env: dict[str, str], cwd: str, channel: int) -> ForkedProcess | None:
        """A child on ``channel`` (the write end of the message pipe), or None if the server cannot give one now."""
        if not self.ready or self.gone:
            return None
        with self._lock:
            stdin_read, stdin_write = os.pipe()
            stdout_read, stdout_write = os.pipe()
            stderr_read, stderr_write = os.pipe()
            theirs = [stdin_read, stdout_write, stderr_write]
            try:
                socket.send_fds(self._socket, [json.dumps({"env": env, "cwd": cwd}).encode()], [*theirs, channel])
                pid = self._answers.get(timeout=ANSWER_SECONDS)
            except (OSError, queue.Empty):
                pid = None
            finally:
                for fd in theirs:
                    os.close(fd)
            if pid is None:
                self.gone = True  # a server that does not answer is not asked again
                for fd in (stdin_write, stdout_read, stderr_read):
                    os.close(fd)
                return None
            child = ForkedProcess(pid, stdin_write, stdout_read, stderr_read)
            with self._books:
                code = self._ended.pop(pid, None)
                if code is None:
                    self._children[pid] = child
            if code is not None:
                child.ended(code)
            return child

    def close(self) -> None:
        """End the server (its children are not touched: each ends with its run)."""
        self.gone = True
        self._socket.close()
        if not self.ready:  # still importing torch, so it has no children; it would hear the close only after
            self.process.kill()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _listen(self) -> None:
        while True:
            try:
                data = self._socket.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            message: dict[str, Any] = json.loads(data)
            if message.get("ready"):
                self.ready = True
            elif "pid" in message:
                self._answers.put(int(message["pid"]))
            elif "exited" in message:
                self._on_exit(int(message["exited"]), int(message["code"]))
        self.gone = True
        self._answers.put(None)
        with self._books:
            orphans, self._children = list(self._children.values()), {}
        for child in orphans:  # nobody can reap or report them any more: end them
            child.kill()
            child.ended(-signal.SIGKILL)

    def _on_exit(self, pid: int, code: int) -> None:
        with self._books:
            child = self._children.pop(pid, None)
            if child is None:
                self._ended[pid] = code
        if child is not None:
            child.ended(code)


class _Starter:
    """The thread that starts fresh interpreters, alive as long as the app.

    A fresh lesson process asks Linux to kill it when the thread that started it ends
    (:meth:`~app.process_portable.PortableOS.end_with_parent`), so that it cannot outlive an app
    killed outright. Runs are started from reader threads that end with their run, so every
    start goes through this thread, which never ends before the app does.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue]] = queue.Queue()
        threading.Thread(target=self._serve, name="lesson-starter", daemon=True).start()

    def run(self, start: Callable[[], T]) -> T:
        """``start()``, called on the starter thread; its result, or what it raised."""
        done: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._jobs.put((start, done))
        ok, value = done.get()
        if not ok:
            raise value
        return value

    def _serve(self) -> None:
        while True:
            start, done = self._jobs.get()
            try:
                done.put((True, start()))
            except BaseException as exc:  # handed to the caller, which raises it
                done.put((False, exc))
            del start, done


_server: _Server | None = None
_server_lock = threading.Lock()
_starter: _Starter | None = None


def spawn(env: dict[str, str], cwd: str, channel: int, forked: bool = True,
          outputs: tuple[int, int] | None = None) -> subprocess.Popen | ForkedProcess:
    """A lesson process (``python -X utf8 -m app.lesson.runner`` or its fork) with pipes for fd 0, 1 and 2.

    ``outputs``: the write ends to give a fresh interpreter as fd 1 and fd 2 (the caller reads the
    pipes); without them it gets pipes of its own, read through the process's ``stdout`` and ``stderr``.

    ``channel`` is the write end of its message pipe, named to it by its environment's
    :data:`~app.messages.CHANNEL_FD_VARIABLE` in a fresh interpreter (a forked child is told its own number).
    Without ``forked`` it is a fresh interpreter and no server is started (a one-shot command's
    server would import torch beside the lesson for nothing).
    """
    global _server, _starter
    layer = current()
    if forked and layer.fork_server and outputs is None:
        with _server_lock:
            if _server is None or (_server.gone and _server.process.poll() is not None):
                _server = _Server([sys.executable, "-X", "utf8", "-m", "app.lesson.zygote"], env, cwd)
                atexit.register(_server.close)
            server = _server
        if (child := server.spawn(env, cwd, channel)) is not None:
            return child

    def start() -> subprocess.Popen:
        with layer.hand_over(channel) as (name, options):
            return subprocess.Popen([sys.executable, "-X", "utf8", "-m", "app.lesson.runner"],
                                    stdin=subprocess.PIPE, stdout=outputs[0] if outputs else subprocess.PIPE,
                                    stderr=outputs[1] if outputs else subprocess.PIPE, cwd=cwd,
                                    env={**env, CHANNEL_FD_VARIABLE: name, APP_PID_VARIABLE: str(os.getpid())},
                                    **options)

    with _server_lock:
        if _starter is None:
            _starter = _Starter()
        starter = _starter
    return starter.run(start)
