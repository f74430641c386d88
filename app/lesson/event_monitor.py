"""The lesson's events through ``sys.monitoring`` (Python 3.12+): breakpoints while continuing, every
event of the lesson's own frames while stepping, and nothing from anyone else's code.

Under ``sys.settrace`` every Python call of the lesson's libraries calls the global trace function,
and on 3.12 every line of every function runs instrumented while a trace function is set, the
engine's own pause code included (1.46x slower, measured in a pause's loop). With PEP 669 the
engine arms line events on the lesson's own code objects only and answers ``DISABLE`` everywhere
else, as coverage.py and pdb's 3.14 backend do:

- **Breakpoints** (continuing): ``LINE`` and ``JUMP`` everywhere, ``DISABLE`` at every place that
  cannot hold a breakpoint, so each place costs one call per change of the breakpoints, then nothing.
- **Stepping** (step into, over, out, and recording): ``PY_START`` everywhere, answered ``DISABLE``
  in library code; in the lesson's code objects, armed as they start, the local events that make up
  ``sys.settrace``'s ``line``, ``return`` and ``call`` events, plus the global ``RAISE``, ``PY_UNWIND``
  and ``PY_THROW``. Each is turned into the event ``sys.settrace`` would give that frame (the
  mapping of CPython's ``Python/legacy_tracing.c``, line de-duplication included) and handed to the
  :class:`~app.lesson.tracer.Tracer`, so both backends pause at the same places.

The lesson's own tools keep their ids: the engine takes one of the two ids PEP 669 leaves unnamed
(3 and 4), and none when both are taken, in which case the tracer stays on ``sys.settrace``. So does
a run whose environment sets ``GRADSTEP_TRACER=settrace``, or a lesson with its own trace function.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from types import CodeType, FrameType
from typing import Any

from app.lesson.code_table import CodeTable
from app.lesson.frame_lines import line_at, line_of

#: The environment variable that keeps the tracer on ``sys.settrace`` (``settrace``), for comparisons.
BACKEND_VARIABLE = "GRADSTEP_TRACER"
#: The ``sys.monitoring`` tool ids the engine may take, in order: those PEP 669 names no use for.
TOOL_IDS = (4, 3)
TOOL_NAME = "gradstep"

OFF, BREAKPOINTS, STEPPING = "off", "breakpoints", "stepping"


class EventMonitor:
    """Pauses the lesson through ``sys.monitoring`` on the main thread: at breakpoints, or at every event.

    Parameters
    ----------
    is_user_code
        Whether a code object is the lesson's (only those are watched).
    lines_to_stop
        The breakpoint (and run-to) lines of a code object; asked again after :meth:`changed`.
    on_line
        Runs the pause check at a breakpoint line, in the frame about to run it.
    on_event
        ``on_event(frame, event, arg)`` while stepping: a ``sys.settrace`` event of a lesson frame.
    module_call
        A library code object whose frames' ``f_trace`` sees them return while stepping (the
        :class:`~app.lesson.origins.ForwardLog`'s ``nn.Module`` calls), or None.
    on_module_call
        Gives a ``module_call`` frame that starts while stepping the function that sees it return.
    """

    def __init__(self, tool: int, is_user_code: Callable[[CodeType], bool],
                 lines_to_stop: Callable[[CodeType], frozenset[int]], on_line: Callable[[FrameType], None],
                 on_event: Callable[[FrameType, str, Any], Any], module_call: CodeType | None = None,
                 on_module_call: Callable[[FrameType], Any] | None = None) -> None:
        self.tool = tool
        self._is_user_code = is_user_code
        self._lines_to_stop = lines_to_stop
        self._on_line = on_line
        self._on_event = on_event
        self._module_call = module_call
        self._on_module_call = on_module_call
        self._main = threading.main_thread().ident
        self._dirty = True
        self._mode = OFF
        self._busy = False
        #: Code objects armed with the stepping events, and per running frame the line it last
        #: reported and the line its next ``LINE`` event would report again (see :meth:`_line`).
        self._armed: CodeTable[bool] = CodeTable()
        self._last: dict[FrameType, int] = {}
        self._echo: dict[FrameType, int] = {}
        monitoring = sys.monitoring
        events = monitoring.events
        self._disable = monitoring.DISABLE
        self._breakpoint_events = events.LINE | events.JUMP
        self._global_step_events = events.PY_START | events.PY_THROW | events.PY_UNWIND | events.RAISE
        self._local_step_events = (events.LINE | events.JUMP | events.BRANCH | events.PY_RESUME
                                   | events.PY_RETURN | events.PY_YIELD)
        callbacks = {events.LINE: self._line, events.JUMP: self._jump, events.BRANCH: self._branch,
                     events.PY_START: self._start, events.PY_RESUME: self._resume, events.PY_THROW: self._throw,
                     events.PY_RETURN: self._return, events.PY_YIELD: self._yield, events.PY_UNWIND: self._unwind,
                     events.RAISE: self._raise}
        for event, callback in callbacks.items():
            monitoring.register_callback(tool, event, callback)
        self._callbacks = tuple(callbacks)

    @classmethod
    def create(cls, is_user_code: Callable[[CodeType], bool], lines_to_stop: Callable[[CodeType], frozenset[int]],
               on_line: Callable[[FrameType], None], on_event: Callable[[FrameType, str, Any], Any],
               module_call: CodeType | None = None,
               on_module_call: Callable[[FrameType], Any] | None = None) -> EventMonitor | None:
        """A monitor on a free tool id, or None (before 3.12, both ids taken, or settrace asked for)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None or os.environ.get(BACKEND_VARIABLE) == "settrace":
            return None
        for tool in TOOL_IDS:
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, TOOL_NAME)
                return cls(tool, is_user_code, lines_to_stop, on_line, on_event, module_call, on_module_call)
        return None

    @property
    def mode(self) -> str:
        """``off``, ``breakpoints`` or ``stepping``."""
        return self._mode

    def changed(self) -> None:
        """The breakpoints, the run-to target or the lesson's files changed: ask again where ``DISABLE`` answered."""
        self._dirty = True

    def watch(self, on: bool) -> None:
        """Continuing: take line events where breakpoints may be (``on``), or none at all."""
        monitoring = sys.monitoring
        self._leave_stepping()
        if on and self._dirty:
            self._dirty = False
            monitoring.restart_events()
        mode = BREAKPOINTS if on else OFF
        if mode != self._mode:
            self._mode = mode
            monitoring.set_events(self.tool, self._breakpoint_events if on else 0)

    def step(self, running: Callable[[], Iterable[CodeType]]) -> None:
        """Stepping: every event of the lesson's frames.

        ``running()`` gives the code of the lesson's frames on the stack, asked only when stepping
        starts: while it goes on, every frame that starts is armed as it starts.
        """
        monitoring = sys.monitoring
        if self._mode != STEPPING:
            if self._dirty or self._mode == BREAKPOINTS:  # what breakpoints answered DISABLE, stepping wants
                self._dirty = False
                monitoring.restart_events()
            self._mode = STEPPING
            monitoring.set_events(self.tool, self._global_step_events)
            if self._module_call is not None:
                monitoring.set_local_events(self.tool, self._module_call, monitoring.events.PY_RETURN)
            for code in running():
                self._arm(code)
        elif self._dirty:  # a file became the lesson's: its code answered DISABLE as a library's
            self._dirty = False
            monitoring.restart_events()
            for code in running():
                self._arm(code)

    def stepping_as_set(self) -> bool:
        """Whether :meth:`step` would do nothing now: stepping, with nothing changed since it armed the frames."""
        return self._mode == STEPPING and not self._dirty

    @contextlib.contextmanager
    def quiet(self) -> Iterator[None]:
        """No pause while the engine runs code of its own outside a monitoring callback (an operation's pause)."""
        busy, self._busy = self._busy, True
        try:
            yield
        finally:
            self._busy = busy

    def close(self) -> None:
        """No events any more, and the tool id given back."""
        monitoring = sys.monitoring
        self.watch(False)
        for event in self._callbacks:
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)

    # ---- stepping ---------------------------------------------------------------------

    def _arm(self, code: CodeType) -> None:
        if code not in self._armed:
            self._armed[code] = True
            sys.monitoring.set_local_events(self.tool, code, self._local_step_events)

    def _leave_stepping(self) -> None:
        if self._mode != STEPPING:
            return
        monitoring = sys.monitoring
        for code in self._armed:
            monitoring.set_local_events(self.tool, code, 0)
        if self._module_call is not None:
            monitoring.set_local_events(self.tool, self._module_call, 0)
        self._armed.clear()
        self._last.clear()
        self._echo.clear()
        monitoring.set_events(self.tool, 0)
        self._mode = OFF

    def _frame(self) -> FrameType | None:
        """The frame of the event being reported, when the main thread reports it while stepping and no pause runs."""
        if self._mode != STEPPING or self._busy or threading.get_ident() != self._main:
            return None
        return sys._getframe(2)

    def _report(self, frame: FrameType, event: str, arg: Any) -> None:
        self._busy = True
        try:
            self._on_event(frame, event, arg)
        finally:
            self._busy = False

    def _report_line(self, frame: FrameType, line: int) -> None:
        self._last[frame] = line
        self._report(frame, "line", None)

    def _start(self, code: CodeType, offset: int) -> Any:
        if not self._is_user_code(code):
            if code is not self._module_call:
                return self._disable
            frame = self._frame()
            if frame is not None:
                frame.f_trace = self._on_module_call(frame)
            return None
        self._arm(code)
        frame = self._frame()
        if frame is not None:
            self._echo.pop(frame.f_back, None)  # the caller moved on: its next LINE event is no echo
            self._report(frame, "call", None)
        return None

    def _resume(self, code: CodeType, offset: int) -> Any:
        frame = self._frame()
        if frame is not None:
            self._resumed(frame)

    def _throw(self, code: CodeType, offset: int, exception: BaseException) -> Any:
        if self._is_user_code(code):
            frame = self._frame()
            if frame is not None:
                self._resumed(frame)

    def _resumed(self, frame: FrameType) -> None:
        line = self._last[frame] = line_of(frame)  # the line it yielded at was the last one reported
        self._echo[frame] = line
        self._report(frame, "call", None)

    def _return(self, code: CodeType, offset: int, value: Any) -> Any:
        frame = self._frame()
        if frame is not None:
            self._returned(frame, code, value)

    def _yield(self, code: CodeType, offset: int, value: Any) -> Any:
        frame = self._frame()
        if frame is not None:
            self._returned(frame, code, value)

    def _unwind(self, code: CodeType, offset: int, exception: BaseException) -> Any:
        if code is self._module_call or self._is_user_code(code):
            frame = self._frame()
            if frame is not None:
                self._returned(frame, code, None)

    def _returned(self, frame: FrameType, code: CodeType, value: Any) -> None:
        """``sys.settrace``'s ``return`` event: a return, a yield, or an exception leaving the frame."""
        self._last.pop(frame, None)
        self._echo.pop(frame, None)
        if code is not self._module_call:
            self._report(frame, "return", value)
        elif frame.f_trace is not None:
            frame.f_trace(frame, "return", value)

    def _raise(self, code: CodeType, offset: int, exception: BaseException) -> Any:
        if self._is_user_code(code):
            frame = self._frame()
            if frame is not None:
                self._report(frame, "exception", (type(exception), exception, exception.__traceback__))

    def _branch(self, code: CodeType, source: int, target: int) -> Any:
        frame = self._frame()
        if frame is not None:
            self._jumped_to(frame, code, source, target)

    def _jumped_to(self, frame: FrameType, code: CodeType, source: int, target: int) -> None:
        """As ``sys.settrace`` has it: a backward jump is a line event, a forward one when it changes the line.

        The event is reported in the frame about to run its line: a jump to another line waits for
        that line's ``LINE`` event (a jump target starts a line), where ``f_lineno`` is the target's.
        """
        self._echo.pop(frame, None)
        line = line_at(code, target)
        if line is None or (target > source and self._last.get(frame) == line):
            return
        if line == line_of(frame):
            self._report_line(frame, line)
            self._echo[frame] = line

    # ---- both modes ----------------------------------------------------------------------

    def _line(self, code: CodeType, line: int) -> Any:
        if not self._is_user_code(code):  # a signal handler's lines while the breakpoints' global events are on
            return self._disable
        if self._mode == STEPPING:
            # Every LINE event is a line event of sys.settrace's but the one that echoes the line a jump
            # or a resumption just reported. On 3.12 that includes a second event of a line whose
            # branches meet again, after a Python function it called returned (sys.settrace reports it).
            frame = self._frame()
            if frame is not None and self._echo.pop(frame, None) != line:
                self._report_line(frame, line)
            return None
        if line not in self._lines_to_stop(code):
            return self._disable
        if threading.get_ident() == self._main and not self._busy:  # GradStep pauses the main thread only
            self._paused_at_breakpoint(sys._getframe(1))
        return None

    def _jump(self, code: CodeType, source: int, target: int) -> Any:
        """A backward jump within one line (a one-line loop) is a line event too, as ``sys.settrace`` has it."""
        if not self._is_user_code(code):
            return self._disable
        if self._mode == STEPPING:
            frame = self._frame()
            if frame is not None:
                self._jumped_to(frame, code, source, target)
            return None
        if target > source:
            return self._disable
        lines = self._lines_to_stop(code)
        if not lines:
            return self._disable
        line = line_at(code, target)
        if line in lines and line == line_at(code, source) and threading.get_ident() == self._main \
                and not self._busy:
            self._paused_at_breakpoint(sys._getframe(1))
        return None

    def _paused_at_breakpoint(self, frame: FrameType) -> None:
        self._busy = True
        try:
            self._on_line(frame)
        finally:
            self._busy = False

