"""The line tracer that runs inside the lesson process: where to pause (and, while stepping,
which lines and module calls ran, for :mod:`app.lesson.origins`).

Only frames whose code comes from the lesson's own file(s) are ever traced line by line;
library frames get no local trace function, and while nothing is stepped and no
breakpoint is set the global trace function is removed altogether, so a lesson that is
simply continuing runs at full speed. A pause is requested asynchronously through
:meth:`Tracer.arm`, which a signal handler calls in the main thread.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import inspect
import linecache
import os
import sys
from collections.abc import Callable, Iterator
from types import CodeType, FrameType
from typing import Any

from app.lesson import event_monitor
from app.lesson.code_table import CodeTable
from app.lesson.engine_reads import engine_reads
from app.lesson.event_monitor import EventMonitor
from app.lesson.frame_lines import line_of
from app.lesson.hooks import ENGINE_DIRS
from app.lesson.origins import ForwardLog, LineLog
from app.lesson.snapshot import frame_locals, return_kind

#: Resume actions that pause at the next event of some user frame.
STEPPING = frozenset({"step_into", "step_over", "step_out"})

TraceFn = Callable[[FrameType, str, Any], Any]

#: The user frames a pause reads, innermost first: a 20,000-deep recursion must not cost each step its depth.
#: Stepping needs no more: every step pauses at the first event of the stepped frame or of its nearest
#: ancestor, and each pause gives the frames within this window their tracers again.
STACK_LIMIT = 100


#: Code flags of generators, coroutines and async generators.
_GENERATOR_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _without_tracing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, run with the thread's trace function removed for the duration of the call."""

    def call(*args: Any, **kwargs: Any) -> Any:
        tracer = sys.gettrace()
        if tracer is None:
            return function(*args, **kwargs)
        sys.settrace(None)
        try:
            return function(*args, **kwargs)
        finally:
            sys.settrace(tracer)

    call.__wrapped__ = function
    call.__name__ = function.__name__
    call.__doc__ = function.__doc__
    return call


def untrace_imports() -> None:
    """Run every import of the lesson process without the global trace function.

    An import runs library code only, and plenty of it: torch's first ``torch.optim``
    step imports modules worth ~580k Python calls, each of which would otherwise call the
    global trace function (a 1.35x slowdown measured here; with imports untraced, 1.03x).
    """
    if not hasattr(builtins.__import__, "__wrapped__"):
        builtins.__import__ = _without_tracing(builtins.__import__)
        importlib.import_module = _without_tracing(importlib.import_module)


@functools.lru_cache(maxsize=4096)
def canonical(path: str) -> str:
    """The spelling of a file path the tracer compares: absolute, symlinks resolved.

    Cached: the tracer asks at pauses and breakpoint checks, and ``realpath`` costs a system
    call per path component (4% of a recording's time). A lesson process runs one lesson, whose
    files do not move while it runs.
    """
    return os.path.realpath(os.path.abspath(path))


def code_lines(code: CodeType) -> frozenset[int]:
    """The lines that have bytecode in ``code`` itself (not in nested functions)."""
    return frozenset(line for _, _, line in code.co_lines() if line is not None)


def _engines(code: CodeType) -> bool:
    """Whether ``code`` is the engine's own."""
    return os.path.dirname(code.co_filename) in ENGINE_DIRS


class _Chained:
    """The local trace function of a frame that both the engine and the lesson's own trace function trace.

    The engine's part runs first (it may pause there), then the lesson's, each fed the event and
    keeping what its last call returned, as each would as the frame's only ``f_trace``.
    """

    __slots__ = ("engine", "lesson")

    def __init__(self, engine: TraceFn | None, lesson: TraceFn | None) -> None:
        self.engine = engine
        self.lesson = lesson

    def __call__(self, frame: FrameType, event: str, arg: Any) -> _Chained | None:
        if self.engine is not None:
            self.engine = self.engine(frame, event, arg)
        if self.lesson is not None:
            self.lesson = self.lesson(frame, event, arg)
        return self if self.engine is not None or self.lesson is not None else None


def set_local(frame: FrameType, local: TraceFn | None) -> None:
    """Make ``local`` the engine's local trace function of ``frame``, keeping the lesson's, if it has one."""
    current = frame.f_trace
    if isinstance(current, _Chained):
        current.engine = local
    else:
        frame.f_trace = local


class Tracer:
    """Decides at which events a lesson pauses, and calls ``on_pause`` there.

    Parameters
    ----------
    user_files
        Canonical paths of the files whose lines may pause.
    on_pause
        ``on_pause(frame, event, arg)`` runs the pause (snapshot, command loop) and returns
        the resume action with its target, as ``(action, file, line)``.
    forwards
        Notes the ``nn.Module`` calls made while stepping (None: not watched).
    """

    def __init__(self, user_files: set[str], on_pause: Callable[[FrameType, str, Any], tuple],
                 forwards: ForwardLog | None = None) -> None:
        self.user_files = {canonical(f) for f in user_files}
        self.on_pause = on_pause
        self.action = "continue"
        self.breakpoints: dict[str, dict[int, str | None]] = {}
        self.target: tuple[str, int] | None = None
        self._stop_frame: FrameType | None = None
        self._ancestors: tuple[FrameType, ...] = ()
        self._is_user_file: dict[str, bool] = {}
        self._bp_lines: CodeTable[frozenset[int]] = CodeTable()
        self._bp_tracers: CodeTable[TraceFn | None] = CodeTable()
        self._decorated_codes: CodeTable[bool] = CodeTable()
        self.condition_error: dict[str, Any] | None = None
        self.hit_breakpoint = False
        #: ``(function name, value)`` of the frame a step out left, until the pause where it lands.
        self.returned: tuple[str, Any] | None = None
        #: ``(frame, arg)`` of the last exception event while its frame has had no other event since:
        #: at that frame's ``return`` event it is the exception the frame unwinds with.
        self.unwinding: tuple[FrameType, Any] | None = None
        self.lines = LineLog(self.is_user_code)
        self.forwards = forwards
        #: The lesson's own ``sys.settrace`` function: called at every event of the lesson's (and its
        #: libraries') frames after the engine's, as if it were the only one (see ``lesson_hooks.chain_settrace``).
        self.lesson_trace: TraceFn | None = None
        self._local_fn = self._local
        self._global = self._make_global()
        #: The events by ``sys.monitoring`` (3.12+), or None: ``sys.settrace`` throughout.
        self.monitor = EventMonitor.create(self.is_user_code, self._lines_to_stop, self._monitored_line, self._local,
                                           forwards.code if forwards else None, self._module_call)

    # ---- configuration ------------------------------------------------------------

    def set_breakpoints(self, file: str, lines: dict[int, str | None]) -> None:
        """Replace the breakpoints of one file (line → condition or None).

        A file with breakpoints is the learner's code from then on (a helper module next to
        the lesson), so its frames are traced and its breakpoints honoured.
        """
        path = canonical(file)
        self.breakpoints[path] = dict(lines)
        if lines and path not in self.user_files:
            self.user_files.add(path)
            self._is_user_file.clear()
        self._bp_lines.clear()
        self._bp_tracers.clear()
        if self.monitor is not None:
            self.monitor.changed()

    def breakpoint_lines(self, code: CodeType) -> frozenset[int]:
        """The lines of ``code`` where a breakpoint (or the run-to target) is set."""
        return self._lines_to_stop(code)

    def is_user_code(self, code: CodeType) -> bool:
        """Whether ``code`` was compiled from one of the lesson's files (cached per filename)."""
        name = code.co_filename
        known = self._is_user_file.get(name)
        if known is None:
            known = self.is_user_code_file(name)
            self._is_user_file[name] = known
        return known

    def is_user_code_file(self, filename: str) -> bool:
        """Whether a traceback's filename is one of the lesson's files."""
        return not filename.startswith("<") and canonical(filename) in self.user_files

    def _lines_to_stop(self, code: CodeType) -> frozenset[int]:
        lines = self._bp_lines.get(code)
        if lines is None:
            wanted = set(self.breakpoints.get(canonical(code.co_filename), ()))
            if self.target and self.target[0] == canonical(code.co_filename):
                wanted.add(self.target[1])
            lines = frozenset(wanted & code_lines(code)) if wanted else frozenset()
            self._bp_lines[code] = lines
        return lines

    def _needs_tracing(self) -> bool:
        return self.action in STEPPING or self.target is not None or any(self.breakpoints.values())

    # ---- trace functions ------------------------------------------------------------

    def _make_global(self) -> TraceFn:
        """The global trace function. It runs at every Python call (600k of them in torch's lazy
        imports), so the common case, a library frame, is one cached lookup by filename."""
        file_is_user = self._is_user_file
        classify = self.is_user_code
        enter = self._enter
        forwards = self.forwards
        module_call = forwards.code if forwards else None

        def global_trace(frame: FrameType, event: str, arg: Any) -> TraceFn | None:
            code = frame.f_code
            user = file_is_user.get(code.co_filename)
            if user is None:
                user = classify(code)
            if user:
                local = enter(frame, event, arg)
            elif code is module_call and self.action in STEPPING:
                local = forwards.entered(frame)
            else:
                local = None
            lesson = self.lesson_trace
            if lesson is None or _engines(code) or (frame.f_back is not None and _engines(frame.f_back.f_code)):
                return local  # the engine's frames, and what they call, are no part of the lesson's run
            theirs = lesson(frame, event, arg)
            return local if theirs is None else _Chained(local, theirs)

        return global_trace

    def set_lesson_trace(self, function: TraceFn | None) -> None:
        """The lesson called ``sys.settrace(function)``: chain it after the engine's trace function from now on."""
        self.lesson_trace = function
        self._install()

    def _install(self) -> None:
        """Watch the lesson's events as the action asks: by the monitor where there is one, else by
        the global trace function, or by nothing (continuing without breakpoints runs at full speed).

        A lesson with a trace function of its own is traced by ``sys.settrace`` throughout, which
        chains the lesson's function after the engine's.
        """
        monitor = self.monitor
        if monitor is None or self.lesson_trace is not None:
            if monitor is not None:
                monitor.watch(False)
            sys.settrace(self._global if self.lesson_trace is not None or self._needs_tracing() else None)
            return
        sys.settrace(None)
        if self.action in STEPPING:
            caller = sys._getframe(1)
            monitor.step(lambda: [frame.f_code for frame in self.user_frames(caller)])
        else:
            monitor.watch(self._needs_tracing())

    def _monitored_line(self, frame: FrameType) -> None:
        """The monitor found ``frame`` at a breakpoint line: pause there as the line tracer would."""
        local = self._local(frame, "line", None)
        if self.action in STEPPING and self.monitor.mode != event_monitor.STEPPING:  # handed over to sys.settrace
            set_local(frame, local)

    def _module_call(self, frame: FrameType) -> TraceFn:
        """An ``nn.Module`` call starts while the monitor steps: the function that sees it return."""
        return self.forwards.entered(frame)

    @contextlib.contextmanager
    def untraced(self) -> Iterator[None]:
        """No event of the lesson is watched meanwhile: the engine runs a pause outside any trace callback."""
        settrace = getattr(sys.settrace, "__wrapped__", sys.settrace)  # Python's own: this is no lesson's call
        tracer = getattr(sys.gettrace, "__wrapped__", sys.gettrace)()
        settrace(None)
        try:
            with self.monitor.quiet() if self.monitor is not None else contextlib.nullcontext():
                yield
        finally:
            settrace(tracer)

    def stop(self) -> None:
        """The run is over (or this is a forked child): no trace function and no monitoring from now on."""
        sys.settrace(None)
        if self.monitor is not None:
            self.monitor.watch(False)

    def _enter(self, frame: FrameType, event: str, arg: Any) -> TraceFn | None:
        """A user frame starts: trace it if stepping, or if its code holds a breakpoint."""
        if self.action in STEPPING:
            return self._local(frame, event, arg)
        return self._bp_tracer(frame.f_code)

    def _bp_tracer(self, code: CodeType) -> TraceFn | None:
        """A minimal local tracer for a frame that only has breakpoints to check."""
        tracer = self._bp_tracers.get(code)
        if tracer is None and code not in self._bp_tracers:
            lines = self._lines_to_stop(code)
            if lines:
                local = self._local

                def tracer(frame: FrameType, event: str, arg: Any) -> TraceFn | None:
                    if event == "line" and frame.f_lineno in lines:
                        return local(frame, event, arg)
                    return tracer

            self._bp_tracers[code] = tracer
        return tracer

    def _local(self, frame: FrameType, event: str, arg: Any) -> TraceFn | None:
        if self.action in STEPPING:
            self.lines.saw(frame, event)
        if event == "opcode":  # only a frame interrupted inside a one-line loop traces opcodes
            event = "line"
        elif event == "return" and self.action == "step_out" and frame is self._stop_frame:
            self.returned = (frame.f_code.co_name, arg)
        if self.unwinding is not None and (event != "return" or self.unwinding[0] is not frame):
            self.unwinding = None  # handled (a line ran) or another frame moved on
        if self._should_pause(frame, event, arg):
            action, file, line = self.on_pause(frame, event, arg)
            local = self.resume(frame, action, file, line)
        else:
            local = self._local_fn if self.action in STEPPING else self._bp_tracer(frame.f_code)
        if event == "exception" and self.action in STEPPING:  # after any pause here, which starts afresh
            self.unwinding = (frame, arg)
        return local

    def _should_pause(self, frame: FrameType, event: str, arg: Any = None) -> bool:
        if event == "exception":
            # Pause where an exception is raised only while stepping; the uncaught ones are
            # shown post mortem by the runner anyway.
            return self.action == "step_into" and not self._boring_exception(frame, arg)
        if event == "call" and (frame.f_code.co_name == "<module>" or self._decorated(frame.f_code)):
            # The module's own call event is not a step; a decorated function's call event sits on
            # its first decorator (``@staticmethod``): its first line event, in the body, is the step.
            return False
        self.hit_breakpoint = event == "line" and self._at_breakpoint(frame)
        if self.hit_breakpoint:
            return True
        action = self.action
        if action == "step_into":
            return True
        if action == "step_over":
            if event == "return" and frame is self._stop_frame and return_kind(frame) == "await":
                return False  # a coroutine suspended at an await comes back: step over it to its next line
            return (frame is self._stop_frame and event != "call") or frame in self._ancestors
        if action == "step_out":
            return frame in self._ancestors
        return False

    def _decorated(self, code: CodeType) -> bool:
        """Whether ``code`` is a function whose first line is a decorator."""
        decorated = self._decorated_codes.get(code)
        if decorated is None:
            text = linecache.getline(code.co_filename, code.co_firstlineno)
            decorated = self._decorated_codes[code] = text.lstrip().startswith("@")
        return decorated

    @staticmethod
    def _boring_exception(frame: FrameType, arg: Any) -> bool:
        """An exception event that is no news to the learner.

        ``arg`` is the exception being raised (``sys.exc_info()`` would be the one being
        handled). As in ``bdb``, the ``StopIteration`` without a traceback that ends a
        ``yield from`` or ``await`` inside a generator or coroutine is the interpreter's own.
        Unlike ``bdb``, ``SystemExit`` is no pause either (a teaching choice, see the README):
        the exit is told once, by the frame's return ("raises SystemExit") and the run's end.
        ``GeneratorExit`` is a pause, as in ``bdb``: it is why a closed generator's ``finally`` runs.
        """
        kind, _, tb = arg if isinstance(arg, tuple) and len(arg) == 3 else (None, None, None)
        if kind is None or issubclass(kind, SystemExit):
            return True
        internal = frame.f_code.co_flags & _GENERATOR_FLAGS and tb is None
        return bool(internal and issubclass(kind, (StopIteration, StopAsyncIteration)))

    def _at_breakpoint(self, frame: FrameType) -> bool:
        code = frame.f_code
        line = line_of(frame)
        if line not in self._lines_to_stop(code):
            return False
        file = canonical(code.co_filename)
        if self.target == (file, line):
            return True
        condition = self.breakpoints.get(file, {}).get(line, "")
        if not condition:
            return line in self.breakpoints.get(file, {})
        try:
            with engine_reads():
                return bool(eval(condition, frame.f_globals, frame_locals(frame)))
        except Exception as exc:  # a broken condition pauses and says why, as debuggers do
            self.condition_error = {"type": type(exc).__name__, "message": str(exc),
                                    "condition": condition, "line": line}
            return True

    # ---- arming and resuming ------------------------------------------------------------

    def user_frames(self, frame: FrameType | None, limit: int = STACK_LIMIT) -> list[FrameType]:
        """The user frames on the stack from ``frame`` outwards, the innermost ``limit`` of them."""
        frames = []
        while frame is not None and len(frames) < limit:
            if self.is_user_code(frame.f_code):
                frames.append(frame)
            frame = frame.f_back
        return frames

    def more_frames(self, shown: int, outermost: FrameType) -> bool:
        """Whether user frames lie beyond the ``shown`` innermost ones :meth:`user_frames` gave, ``outermost`` last."""
        return shown >= STACK_LIMIT and bool(self.user_frames(outermost.f_back, 1))

    def resume(self, frame: FrameType, action: str, file: str | None = None,
               line: int | None = None) -> TraceFn | None:
        """Apply a resume action at ``frame``; returns the frame's new local tracer."""
        self.returned = None
        self.unwinding = None
        if self._stepping_on(frame, action):  # a recording's every step: all is in place already
            return self._local_fn
        self.action = "continue" if action == "run_to" else action
        target = (canonical(file), line) if action == "run_to" and file and line else None
        if target != self.target:  # the lines to stop at are the breakpoints' and the target's
            self._bp_lines.clear()
            self._bp_tracers.clear()
            if self.monitor is not None:
                self.monitor.changed()
        self.target = target
        # Continuing, a breakpoint may be in any frame outwards: all get their tracers, once per continue.
        stack = self.user_frames(frame, STACK_LIMIT if self.action in STEPPING else sys.maxsize)
        self._stop_frame = frame
        self._ancestors = tuple(stack[1:])
        if action == "step_out" and not self._ancestors:
            self.action = "continue"
        for outer in stack[1:]:
            set_local(outer, self._frame_tracer(outer))
        self._watch_lines(frame)
        self._install()
        return self._frame_tracer(frame) if self._needs_tracing() else None

    def _stepping_on(self, frame: FrameType, action: str) -> bool:
        """Whether ``resume`` would change nothing: stepping into again from the frame it last resumed, under
        the monitor (whose events, like the frames' tracers and the stack above, are those of that resume)."""
        monitor = self.monitor
        return (action == "step_into" and self.action == "step_into" and frame is self._stop_frame
                and self.target is None and self.lesson_trace is None and monitor is not None
                and monitor.stepping_as_set())

    def _watch_lines(self, frame: FrameType | None) -> None:
        """Origins are watched while stepping only; continue mode leaves them unknown."""
        if self.action not in STEPPING:
            self.lines.untraced()
            if self.forwards:
                self.forwards.forget()
        elif self.forwards:
            self.forwards.restart(frame)

    def _frame_tracer(self, frame: FrameType) -> TraceFn | None:
        if self.action in STEPPING:
            return self._local_fn
        return self._bp_tracer(frame.f_code)

    def arm(self, frame: FrameType | None, action: str = "step_into") -> None:
        """Start tracing from inside a running lesson (a signal handler): pause at the next user line."""
        self.action = action
        stack = self.user_frames(frame, STACK_LIMIT if action in STEPPING else sys.maxsize)
        self._stop_frame = stack[0] if stack else None
        self._ancestors = tuple(stack[1:])
        for user_frame in stack:
            set_local(user_frame, self._frame_tracer(user_frame))
        self._install()

    def start(self, stop_on_entry: bool) -> None:
        """Install the tracer before the lesson's module code starts."""
        self.action = "step_into" if stop_on_entry else "continue"
        self._watch_lines(None)
        self._install()
