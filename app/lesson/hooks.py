"""The lesson process's few hooks into the interpreter, each there so the lesson runs as with plain python.

They let the engine see what it must report (a breakpoint in another thread, the grad mode
where an exception was raised), chain the lesson's own trace function after the engine's, and keep
GradStep's own package out of the lesson's way, without changing what the lesson computes.
"""

from __future__ import annotations

import builtins
import errno
import functools
import importlib
import os
import pkgutil
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from types import FrameType
from typing import Any

from app.i18n import N_
from app.lesson.code_table import CodeTable
from app.lesson.snapshot import grad_mode

#: The folder of the lesson process's modules (``app/lesson``).
LESSON_SIDE_DIR = os.path.dirname(os.path.abspath(__file__))
#: The folders of the engine's modules in this process (``app/lesson`` and the shared ``app``):
#: frames whose code is in one of them are the engine's own.
ENGINE_DIRS = frozenset((LESSON_SIDE_DIR, os.path.dirname(LESSON_SIDE_DIR)))
#: The folder that holds the ``app`` package (on the lesson process's PYTHONPATH).
ENGINE_ROOT = os.path.dirname(os.path.dirname(LESSON_SIDE_DIR))

#: What the app is told of a breakpoint in code another thread runs (formatted there, in the learner's language).
OTHER_THREAD = N_("The breakpoint at line {line} is in {function}(), which runs in thread '{thread}': GradStep "
                  "pauses only the main thread, so it will not stop there.")

#: The last exception seen leaving a grad-mode ``with`` block, and the grad mode inside it.
_raised: list[Any] = [None, None]


def hide_engine_frames(namespace: dict[str, Any]) -> None:
    """Leave the engine's frames out of every stack the lesson formats, as under plain python.

    ``traceback.format_stack()``, ``print_stack()`` and torch's anomaly mode (which calls
    ``format_stack``) walk the stack outwards through ``traceback.walk_stack``. Below the
    lesson's module frame (the one running with ``namespace`` as its globals) are only the
    runner's frames; above a lesson's torch call, while stepping, the op recorder's
    ``__torch_function__``. The lesson wrote neither, nor would it see them under plain python.
    """
    walk_stack = traceback.walk_stack
    if getattr(walk_stack, "__wrapped__", None) is not None:
        walk_stack = walk_stack.__wrapped__

    @functools.wraps(walk_stack)
    def lesson_stack(f: FrameType | None) -> Any:
        for frame, line in walk_stack(f):
            if os.path.dirname(frame.f_code.co_filename) not in ENGINE_DIRS:
                yield frame, line
            if frame.f_globals is namespace and frame.f_code.co_name == "<module>":
                return

    traceback.walk_stack = lesson_stack


def import_engine() -> None:
    """Import every module of the lesson side (``app.lesson``) now, in the warm spare, before any lesson.

    They import the shared modules they use (``app.messages``…); the app's own modules are
    never loaded here. :func:`hide_engine` then takes the package's name away from the lesson;
    the engine's lazy ``from app.lesson.x import y`` imports keep working because the modules
    are in ``sys.modules``.
    """
    package = sys.modules["app.lesson"]
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"app.lesson.{info.name}")


def hide_engine(lesson_dir: str) -> None:
    """Let ``import app`` (or ``main``, ``widgets``) find the learner's module next to the lesson, as plain python does.

    GradStep's folder leaves ``sys.path`` and its ``app`` package leaves ``sys.modules``;
    an import of ``app`` made by the engine's own code (a lazy import, the message decoder) still
    finds the engine's package, lent back to ``sys.modules`` for the time of that import.
    """
    root = os.path.realpath(ENGINE_ROOT)
    rest = [entry for entry in sys.path[1:] if os.path.realpath(entry or os.curdir) != root]
    sys.path[:] = [lesson_dir, *rest]
    engine = sys.modules.pop("app", None)
    if engine is None:
        return
    original = builtins.__import__

    def engine_aware_import(name: str, globals: dict[str, Any] | None = None, locals: Any = None,
                            fromlist: Any = (), level: int = 0) -> Any:
        if level or not (name == "app" or name.startswith("app.")) or not globals or \
                os.path.dirname(globals.get("__file__") or "") not in ENGINE_DIRS:
            return original(name, globals, locals, fromlist, level)
        learners = sys.modules.get("app")
        sys.modules["app"] = engine
        try:
            return original(name, globals, locals, fromlist, level)
        finally:
            if learners is None:
                sys.modules.pop("app", None)
            else:
                sys.modules["app"] = learners

    builtins.__import__ = engine_aware_import


#: What importing a module the learner's own file shadows raises (the file is not what ``import`` gives here).
SHADOWED = N_("{file} is not what 'import {name}' gives under GradStep: the engine has already imported the real "
              "{name}, where plain python would import your file. Rename {filename} so that it does not shadow {name}.")

_startup_modules: frozenset[str] | None = None


def plain_startup_modules() -> frozenset[str]:
    """The modules a plain ``python lesson.py`` has imported before the lesson's first line (asked of a
    fresh interpreter once, and only when a lesson's folder holds a file named like a loaded module)."""
    global _startup_modules
    if _startup_modules is None:
        env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
        listing = subprocess.run([sys.executable, "-X", "utf8", "-c", "import sys; print(' '.join(sys.modules))"],
                                 capture_output=True, text=True, env=env, timeout=60, check=False).stdout
        _startup_modules = frozenset(listing.split())
    return _startup_modules


def shadowed_modules(lesson_dir: str) -> dict[str, str]:
    """Modules the engine has loaded that a file in ``lesson_dir`` would replace under plain python: name → file."""
    try:
        entries = list(os.scandir(lesson_dir))
    except OSError:
        return {}
    found = {}
    for entry in entries:
        if entry.name.endswith(".py"):
            name = entry.name.removesuffix(".py")
        elif os.path.isfile(os.path.join(entry.path, "__init__.py")):
            name = entry.name  # a package
        else:
            continue
        if name.isidentifier() and name in sys.modules and name != "__main__":
            found[name] = entry.path
    if found:
        found = {name: file for name, file in found.items() if name not in plain_startup_modules()}
    return found


def refuse_shadowed(lesson_dir: str) -> None:
    """Make the lesson's own ``import`` of a module that a file in ``lesson_dir`` shadows raise, naming the file.

    Plain python would import the learner's ``torch.py``; here the engine's ``torch`` is already
    loaded and cannot make way, so the lesson is told rather than handed the wrong module.
    """
    shadowed = shadowed_modules(lesson_dir)
    if not shadowed:
        return
    original = builtins.__import__
    home = os.path.realpath(lesson_dir)

    def shadow_aware_import(name: str, globals: dict[str, Any] | None = None, locals: Any = None,
                            fromlist: Any = (), level: int = 0) -> Any:
        top = name.partition(".")[0]
        if not level and top in shadowed and globals is not None and \
                os.path.dirname(os.path.realpath(globals.get("__file__") or "")) == home:
            file = shadowed[top]
            raise ImportError(SHADOWED.format(file=file, name=top, filename=os.path.basename(file)), name=top,
                              path=file)
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = shadow_aware_import


def chain_settrace(tracer: Any) -> None:
    """Give the lesson's ``sys.settrace`` / ``sys.gettrace`` (main thread) to ``tracer``, which chains the
    lesson's trace function after its own (:meth:`app.lesson.tracer.Tracer.set_lesson_trace`).

    The lesson's function sees the events of its own and its libraries' frames, never the engine's,
    and ``sys.gettrace()`` gives it back, as under plain python; the engine's own calls (and other
    threads', which the engine does not trace) go through unchanged.
    """
    settrace = getattr(sys.settrace, "__wrapped__", sys.settrace)
    gettrace = getattr(sys.gettrace, "__wrapped__", sys.gettrace)
    main = threading.get_ident()

    def lesson_calls() -> bool:
        # builtins only: a Python call here would be an event for the lesson's own trace function
        return threading.get_ident() == main and \
            sys._getframe(2).f_code.co_filename.rpartition(os.sep)[0] not in ENGINE_DIRS

    @functools.wraps(settrace)
    def chained_settrace(function: Any) -> None:
        if lesson_calls():
            tracer.set_lesson_trace(function)
        else:
            settrace(function)

    @functools.wraps(gettrace)
    def chained_gettrace() -> Any:
        return tracer.lesson_trace if lesson_calls() else gettrace()

    sys.settrace, sys.gettrace = chained_settrace, chained_gettrace


def unchain_settrace() -> None:
    """The run is over: give back Python's own ``sys.settrace`` / ``sys.gettrace`` (undoes :func:`chain_settrace`).

    A check that runs the lesson again under its own trace function (``course.after``) then
    traces that run, as under plain python, instead of handing it to the stopped engine.
    """
    sys.settrace = getattr(sys.settrace, "__wrapped__", sys.settrace)
    sys.gettrace = getattr(sys.gettrace, "__wrapped__", sys.gettrace)


def guard_fds(fds: tuple[int, ...]) -> None:
    """Keep the engine's file descriptors out of the lesson's ``os.close``, ``os.closerange`` and ``os.dup2``.

    To the lesson they are not open, as under plain python: closing one raises ``EBADF``, a
    range skips them. Making one a copy of another file cannot be passed over, and says whose
    it is. (The channel also sits far above the numbers lessons use, and a lesson that breaks
    it anyway ends the run at once: :func:`app.lesson.lesson_io.channel_lost`.)
    """
    guarded = frozenset(fds)
    close, closerange, dup2 = os.close, os.closerange, os.dup2

    @functools.wraps(close)
    def guarded_close(fd: int) -> None:
        if fd in guarded:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        close(fd)

    @functools.wraps(closerange)
    def guarded_closerange(low: int, high: int) -> None:
        for fd in sorted(fd for fd in guarded if low <= fd < high):
            closerange(low, fd)
            low = fd + 1
        closerange(low, high)

    @functools.wraps(dup2)
    def guarded_dup2(fd: int, fd2: int, inheritable: bool = True) -> int:
        if fd2 in guarded:
            raise OSError(errno.EBUSY, f"file descriptor {fd2} is GradStep's message channel")
        return dup2(fd, fd2, inheritable)

    os.close, os.closerange, os.dup2 = guarded_close, guarded_closerange, guarded_dup2


def watch_other_threads(is_user_code: Callable[[Any], bool], breakpoint_lines: Callable[[Any], frozenset[int]],
                        notify: Callable[..., None]) -> None:
    """Say once per function when lesson code holding a breakpoint runs in a thread other than the main one.

    GradStep pauses the main thread only; a breakpoint elsewhere would otherwise be
    silently passed by.
    """
    warned: CodeTable[bool] = CodeTable()

    def thread_trace(frame: FrameType, event: str, arg: Any) -> None:
        code = frame.f_code
        if code in warned or not is_user_code(code):
            return None
        lines = breakpoint_lines(code)
        if lines:
            warned[code] = True
            line = min(lines)
            notify("breakpoint", OTHER_THREAD, line, line=line, function=code.co_name,
                   thread=threading.current_thread().name)
        return None

    threading.settrace(thread_trace)


def record_grad_mode_at_raise() -> None:
    """Remember the grad mode inside a ``torch.no_grad()`` (or similar) block that an exception leaves.

    By the time the runner catches an uncaught exception every ``with`` block has exited
    and restored the mode; the post-mortem pause shows the one the raising line ran under.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    from torch.autograd import grad_mode as modes

    for cls in (modes.no_grad, modes.enable_grad, modes.set_grad_enabled, modes.inference_mode):
        exit_ = cls.__dict__.get("__exit__")
        if exit_ is None or hasattr(exit_, "__wrapped__"):
            continue

        @functools.wraps(exit_)
        def recording_exit(self: Any, exc_type: Any, exc_value: Any, traceback: Any, _exit: Any = exit_) -> Any:
            if exc_value is not None and _raised[0] is not exc_value:  # the innermost block is the truth
                _raised[:] = [exc_value, grad_mode()]
            return _exit(self, exc_type, exc_value, traceback)

        cls.__exit__ = recording_exit


def grad_mode_at_raise(exc: BaseException) -> dict[str, bool]:
    """The grad mode where ``exc`` was raised: inside its innermost grad-mode block, else the current one."""
    exception, mode = _raised
    _raised[:] = [None, None]
    return mode if exception is exc else grad_mode()
