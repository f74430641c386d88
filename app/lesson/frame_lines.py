"""The line a frame is at, as ``frame.f_lineno`` gives it, without reading the code's line table from its start.

Outside a ``sys.settrace`` call for the frame, ``f_lineno`` is worked out from the frame's last
instruction by scanning the code's line table from the beginning, at every read (CPython 3.11 to
3.13, ``PyCode_Addr2Line``): 2.4% of a recorded step under ``sys.monitoring`` went there. Here each
code object's line starts are read once and searched by bisection.
"""

from __future__ import annotations

import bisect
import sys
from types import CodeType, FrameType

from app.lesson.code_table import CodeTable

#: Of each code object: the start offset of each range of its bytecode, and the range's line (None: no line).
_STARTS: CodeTable[tuple[list[int], list[int | None]]] = CodeTable()
#: Code objects kept before the table starts again (the lesson's own are a few hundred).
_LIMIT = 4096
#: Python's own ``sys.gettrace``, whatever the lesson's hooks later put in its place.
_gettrace = getattr(sys.gettrace, "__wrapped__", sys.gettrace)


def line_at(code: CodeType, offset: int) -> int | None:
    """The line of the instruction at byte ``offset`` of ``code`` (None for one that has no line)."""
    known = _STARTS.get(code)
    if known is None:
        if len(_STARTS) >= _LIMIT:
            _STARTS.clear()
        table = list(code.co_lines())
        known = _STARTS[code] = ([start for start, _, _ in table], [line for _, _, line in table])
    index = bisect.bisect_right(known[0], offset) - 1
    return known[1][index] if index >= 0 else None


def line_of(frame: FrameType) -> int | None:
    """``frame.f_lineno``.

    While ``sys.settrace`` traces the thread, a frame with a trace function may be in a trace
    call, where the line is the one set for the event (a backward jump's target, say), so it is
    asked; any other frame's line is its last instruction's (under ``sys.monitoring``, every
    frame's).
    """
    if frame.f_trace is not None and _gettrace() is not None:
        return frame.f_lineno
    lasti = frame.f_lasti
    code = frame.f_code
    return code.co_firstlineno if lasti < 0 else line_at(code, lasti)
