"""Breakpoints through ``sys.monitoring`` (Python 3.12+): a continued lesson runs at full speed until one is hit.

Under ``sys.settrace`` a breakpoint anywhere costs every Python call of the lesson's libraries
a call of the global trace function (a training loop through ``nn.Module.__call__`` pays for
each of torch's frames). With PEP 669 the engine takes ``LINE`` and ``JUMP`` events instead and
answers ``DISABLE`` at every place that can never hold a breakpoint (library code, lines
without one), so each place costs one call per change of the breakpoints, then nothing (as
coverage.py and pdb's 3.14 backend do). Stepping still uses ``sys.settrace``
(:mod:`app.lesson.tracer`): the tracer hands over to it at the pause.

The lesson's own tools keep their ids: the engine takes one of the two ids PEP 669 leaves
unnamed (3 and 4), and none when both are taken, in which case breakpoints stay on
``sys.settrace``. So does a run whose environment sets ``GRADSTEP_TRACER=settrace``.
"""

from __future__ import annotations

import bisect
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

#: The environment variable that keeps breakpoints on ``sys.settrace`` (``settrace``), for comparisons.
BACKEND_VARIABLE = "GRADSTEP_TRACER"
#: The ``sys.monitoring`` tool ids the engine may take, in order: those PEP 669 names no use for.
TOOL_IDS = (4, 3)
TOOL_NAME = "gradstep-breakpoints"


class BreakpointMonitor:
    """Calls ``on_line(frame)`` where the main thread reaches a line of ``lines_to_stop(code)``.

    Parameters
    ----------
    is_user_code
        Whether a code object is the lesson's (only those can hold breakpoints).
    lines_to_stop
        The breakpoint (and run-to) lines of a code object; asked again after :meth:`changed`.
    on_line
        Runs the pause check at a breakpoint line, in the frame about to run it.
    """

    def __init__(self, tool: int, is_user_code: Callable[[CodeType], bool],
                 lines_to_stop: Callable[[CodeType], frozenset[int]], on_line: Callable[[FrameType], None]) -> None:
        self.tool = tool
        self._is_user_code = is_user_code
        self._lines_to_stop = lines_to_stop
        self._on_line = on_line
        self._main = threading.main_thread().ident
        self._line_starts: dict[CodeType, tuple[list[int], list[int | None]]] = {}
        self._dirty = True
        self._on = False
        monitoring = sys.monitoring
        self._disable = monitoring.DISABLE
        self._events = monitoring.events.LINE | monitoring.events.JUMP
        monitoring.register_callback(tool, monitoring.events.LINE, self._line)
        monitoring.register_callback(tool, monitoring.events.JUMP, self._jump)

    @classmethod
    def create(cls, is_user_code: Callable[[CodeType], bool], lines_to_stop: Callable[[CodeType], frozenset[int]],
               on_line: Callable[[FrameType], None]) -> BreakpointMonitor | None:
        """A monitor on a free tool id, or None (before 3.12, both ids taken, or settrace asked for)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None or os.environ.get(BACKEND_VARIABLE) == "settrace":
            return None
        for tool in TOOL_IDS:
            if monitoring.get_tool(tool) is None:
                monitoring.use_tool_id(tool, TOOL_NAME)
                return cls(tool, is_user_code, lines_to_stop, on_line)
        return None

    def changed(self) -> None:
        """The breakpoints (or the run-to target) changed: places answered ``DISABLE`` are asked again."""
        self._dirty = True

    def watch(self, on: bool) -> None:
        """Take line events (continuing with breakpoints) or none (stepping, or nothing to stop at)."""
        monitoring = sys.monitoring
        if on and self._dirty:
            self._dirty = False
            monitoring.restart_events()
        if on != self._on:
            self._on = on
            monitoring.set_events(self.tool, self._events if on else 0)

    def close(self) -> None:
        """Give the tool id back."""
        monitoring = sys.monitoring
        monitoring.set_events(self.tool, 0)
        monitoring.register_callback(self.tool, monitoring.events.LINE, None)
        monitoring.register_callback(self.tool, monitoring.events.JUMP, None)
        monitoring.free_tool_id(self.tool)

    def _line(self, code: CodeType, line: int) -> Any:
        if not self._is_user_code(code) or line not in self._lines_to_stop(code):
            return self._disable
        if threading.get_ident() == self._main:  # another thread's frame: GradStep pauses the main thread only
            self._on_line(sys._getframe(1))
        return None

    def _jump(self, code: CodeType, source: int, target: int) -> Any:
        """A backward jump within one line (a one-line loop) is a line event too, as ``sys.settrace`` has it."""
        if target > source or not self._is_user_code(code):
            return self._disable
        lines = self._lines_to_stop(code)
        if not lines:
            return self._disable
        line = self._line_at(code, target)
        if line in lines and line == self._line_at(code, source) and threading.get_ident() == self._main:
            self._on_line(sys._getframe(1))
        return None

    def _line_at(self, code: CodeType, offset: int) -> int | None:
        starts = self._line_starts.get(code)
        if starts is None:
            table = list(code.co_lines())
            starts = self._line_starts[code] = ([start for start, _, _ in table], [line for _, _, line in table])
        index = bisect.bisect_right(starts[0], offset) - 1
        return starts[1][index] if index >= 0 else None
