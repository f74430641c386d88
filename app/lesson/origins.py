"""Where each autograd node came from: the lesson line, its pass, and the ``nn.Module`` running.

Runs inside the lesson process. :class:`LineLog` and :class:`ForwardLog` are fed by the
tracer while it steps (never in continue mode); :class:`OriginBook` turns what they saw
between two pauses into one origin per stretch of autograd sequence numbers, so a node's
origin follows from ``node._sequence_nr()`` even when the node becomes reachable from the
learner's variables only later. The format is documented in the README (headless trace).
"""

from __future__ import annotations

import ast
import bisect
import linecache
import sys
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from app.lesson.frame_lines import line_of
from app.lesson.object_reads import submodules

#: Code objects that are part of the line around them (their lines are that line's pass, not their own).
_EXPRESSION_CODE = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>", "<lambda>"})

#: An execution of a statement: (file, first line of the statement, pass or None).
Execution = tuple[str, int, "int | None"]


def statement_starts(filename: str) -> tuple[dict[int, int], frozenset[int]]:
    """Line → first line of the statement it belongs to, and the first lines of loop statements.

    Compound statements own only their header lines (``for t in range(\\n N):``). Lines that
    are missing map to themselves.
    """
    try:
        tree = ast.parse("".join(linecache.getlines(filename)))
    except (SyntaxError, ValueError):
        return {}, frozenset()
    starts: dict[int, int] = {}
    loops = set()
    for node in ast.walk(tree):  # breadth first: inner statements overwrite outer ones
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        last = node.end_lineno or node.lineno
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(node.lineno, body[0].lineno - 1)
        for line in range(node.lineno, last + 1):
            starts[line] = node.lineno
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            loops.add(node.lineno)
    return starts, frozenset(loops)


class LineLog:
    """Counts executions of lesson statements and notes which one a stretch between pauses ran.

    Parameters
    ----------
    is_user_code
        Whether a code object is the lesson's (the tracer's cached test).

    Notes
    -----
    An execution starts at a line event that is not the same statement going on (a multi-line
    expression reports ``5, 6, 5, 7, 5``, an inlined comprehension jumps back within its line);
    in a loop statement, an event at the line of the previous one is the next turn. Lines run in frames
    called from the *base* frame (the outermost lesson frame active since the last pause)
    belong to the base frame's execution; when the base returns, everything so far belongs
    to the caller's execution that made the call.
    """

    def __init__(self, is_user_code: Callable[[CodeType], bool]) -> None:
        self._is_user_code = is_user_code
        self.counts: dict[tuple[str, int], int] = {}
        self.exact = True  # every execution since the run began was counted
        self.traced = True  # every lesson line since the last pause was seen
        self._statements: dict[str, tuple[dict[int, int], frozenset[int]]] = {}
        self._last: dict[FrameType, tuple[int, int, int | None]] = {}  # frame -> (statement, line, pass)
        self._base: FrameType | None = None
        self._first: Execution | None = None
        self._count = 0  # executions of the base frame in this stretch
        self._appended: tuple | None = None  # the ``_last`` entry of the latest one
        self._returned: tuple[int, Execution | None, int] | None = None  # the base's stretch before it returned

    def saw(self, frame: FrameType, event: str) -> None:
        """One event of a lesson frame traced by the stepping tracer."""
        if event == "line":
            code = frame.f_code
            file = code.co_filename
            statements = self._statements.get(file)
            if statements is None:
                statements = self._statements[file] = statement_starts(file)
            line = line_of(frame)
            start = statements[0].get(line, line)
            last = self._last.get(frame)
            if last is not None and last[0] == start and (last[1] != line or start not in statements[1]):
                self._last[frame] = (start, line, last[2])
                return  # the same statement goes on at another of its lines
            number = None
            if code.co_name not in _EXPRESSION_CODE:
                number = self.counts.get((file, start), 0) + 1
                self.counts[(file, start)] = number
                if not self.exact:
                    number = None
            state = self._last[frame] = (start, line, number)
            if frame is self._base:
                self._appended = state
                self._count += 1
                if self._first is None:
                    self._first = (file, start, number)
        elif event == "return":
            self._last.pop(frame, None)
            if frame is self._base:
                self._returned = (id(frame), self._first, self._count)
                self._enter_caller(frame)

    def _execution_of(self, frame: FrameType) -> Execution:
        """The statement ``frame`` is executing now."""
        last = self._last.get(frame)
        if last is not None:
            return frame.f_code.co_filename, last[0], last[2]
        file = frame.f_code.co_filename
        starts = self._statements[file][0] if file in self._statements else {}
        line = line_of(frame)
        return file, starts.get(line, line), None

    def _enter_caller(self, frame: FrameType) -> None:
        """The base frame returns: what ran so far was part of its caller's current statement."""
        caller = frame.f_back
        while caller is not None and not self._is_user_code(caller.f_code):
            caller = caller.f_back
        self._base = caller
        self._first = self._execution_of(caller) if caller is not None else None
        self._count = int(caller is not None)

    def close(self, frame: FrameType, event: str) -> tuple[Execution | None, bool]:
        """End the stretch at a pause in ``frame``; returns (its one execution or None, whether traced).

        The next stretch begins here: with the paused statement unless the pause is at a
        call (nothing of the frame ran yet) or at a return (the caller goes on).
        """
        first, count = self._first, self._count
        if event == "return" and self._returned is not None and self._returned[0] == id(frame):
            _, first, count = self._returned  # the return paused at is not the caller's yet
        elif event == "line" and frame is self._base and self._last.get(frame) is self._appended:
            count -= 1  # the statement paused at has not run yet
        self._returned = None
        one = first if count == 1 and self.traced else None
        traced = self.traced
        self.traced = True
        self._base, self._first, self._count = frame, None, 0
        if event == "return":
            self._enter_caller(frame)
        elif event != "call":
            self._first, self._count = self._execution_of(frame), 1
        return one, traced

    def untraced(self) -> None:
        """Lesson lines run unseen from now on (continue mode): passes are unknown for the rest of the run."""
        self.exact = False
        self.traced = False
        self._last.clear()  # keeps no frame alive while the lesson runs freely

    def watch_call(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(*args)`` during a pause; if it runs lesson code (a console call, a hook), passes become unknown.

        The pause runs inside the trace function, where nothing is traced, so the call is run
        through ``sys.call_tracing`` with a trace function that only looks at calls.
        """
        ran: list[bool] = []
        is_user = self._is_user_code

        def detect(frame: FrameType, event: str, arg: Any) -> None:
            if not ran and is_user(frame.f_code):
                ran.append(True)

        def traced_call() -> Any:
            previous = sys.gettrace()
            sys.settrace(detect)
            try:
                return function(*args)
            finally:
                sys.settrace(previous)

        try:
            return sys.call_tracing(traced_call, ())
        finally:
            if ran:
                self.exact = False


class ForwardLog:
    """The ``nn.Module`` calls that ran while stepping, as stretches of autograd sequence numbers.

    Parameters
    ----------
    call_code
        The code of ``torch.nn.Module._call_impl``, which every module call runs.
    peek
        The autograd sequence number the next node of this thread will get.
    """

    def __init__(self, call_code: CodeType, peek: Callable[[], int]) -> None:
        self.code = call_code
        self.peek = peek
        self._open: list[list[Any]] = []  # [module, start, depth], innermost last
        self._closed: list[tuple[int, int, int, Any]] = []  # (start, end, depth, module)
        self._stale = False  # calls may have started or ended unseen (continue mode)

    def entered(self, frame: FrameType) -> Callable[..., Any]:
        """A module call starts while stepping; returns the trace function that sees it return."""
        return self._watch(frame, frame.f_locals.get("self"), len(self._open))

    def _watch(self, frame: FrameType, module: Any, depth: int) -> Callable[..., Any]:
        entry = [module, self.peek(), depth]
        self._open.append(entry)
        frame.f_trace_lines = False

        def returned(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "return":
                self._closed.append((entry[1], self.peek(), entry[2], entry[0]))
                self._open = [e for e in self._open if e is not entry]
            return returned

        return returned

    def close(self) -> list[tuple[int, int, int, Any]]:
        """The module calls of the stretch ending now, those still running included, nodes made only."""
        now = self.peek()
        calls = self._closed + [(start, now, depth, module) for module, start, depth in self._open]
        self._closed = []
        for entry in self._open:
            entry[1] = now
        return [call for call in calls if call[1] > call[0]]

    def restart(self, frame: FrameType | None) -> None:
        """Stepping resumes at ``frame``: after continue mode, the module calls running are those on its stack."""
        if not self._stale:
            return
        self._stale = False
        calls = []
        while frame is not None:
            if frame.f_code is self.code:
                calls.append(frame)
            frame = frame.f_back
        self._open, self._closed = [], []
        for depth, call in enumerate(reversed(calls)):
            call.f_trace = self._watch(call, call.f_locals.get("self"), depth)

    def forget(self) -> None:
        """Continue mode: module calls go unseen, and nothing is held."""
        self._open, self._closed = [], []
        self._stale = True


def module_names(frames: list[FrameType], modules: list[Any]) -> dict[int, str]:
    """``id(module)`` → the learner's dotted name, looked up in the frames' variables, outermost first.

    A module not reachable from any variable gets its class name.
    """
    torch = sys.modules.get("torch")
    wanted = {id(module) for module in modules}
    names: dict[int, str] = {}
    for frame in reversed(frames):
        for name, value in list(frame.f_locals.items()):
            if torch is None or name.startswith("__") or not issubclass(type(value), torch.nn.Module):
                continue
            # From the _modules tables, not named_modules(), which a lesson may override (app.lesson.object_reads).
            for path, sub in submodules(value):
                if id(sub) in wanted:
                    names.setdefault(id(sub), f"{name}.{path}" if path else name)
        if wanted <= names.keys():
            break
    for module in modules:
        names.setdefault(id(module), type(module).__name__)
    return names


def _origin(file: str | None, line: int | None = None, number: int | None = None, **extra: Any) -> dict[str, Any]:
    return {"file": file, "line": line, "pass": number, "module": None, "span": None, "op": None, "text": None,
            **extra}


class _Stretch:
    """One stretch of sequence numbers: its origin, and the module calls that ran in it."""

    __slots__ = ("origin", "calls", "starts", "_by_module")

    def __init__(self, origin: dict[str, Any], calls: list[tuple[int, int, int, str]]) -> None:
        self.origin = origin
        self.calls = sorted(calls, key=lambda call: (call[0], call[2])) if calls else calls
        self.starts = [call[0] for call in self.calls]
        self._by_module: dict[str, dict[str, Any]] = {}

    def origin_of(self, seq: int) -> dict[str, Any]:
        """The origin of the node numbered ``seq``: the innermost module call that contains it."""
        for index in range(bisect.bisect_right(self.starts, seq) - 1, -1, -1):
            start, end, _, name = self.calls[index]
            if start <= seq < end:
                shared = self._by_module.get(name)
                if shared is None:
                    shared = self._by_module[name] = {**self.origin, "module": name}
                return shared
        return self.origin


#: GradStep's own stretches kept for reuse, one per line paused at (a lesson has a few hundred lines).
AT_PAUSE_LIMIT = 4096


class OriginBook:
    """The origins of a run, one per stretch of autograd sequence numbers between boundaries.

    Parameters
    ----------
    peek
        The sequence number the next autograd node of the lesson's thread will get, or None
        when torch does not offer it (then a node's origin is that of the pause that first saw it).
    """

    def __init__(self, peek: Callable[[], int] | None) -> None:
        self._peek = peek
        self._starts: list[int] = []
        self._stretches: list[_Stretch] = []
        self._run_start = peek() if peek else 0
        self._left: tuple[str | None, int | None] = (None, None)  # the pause the run resumed from
        self._last_run: _Stretch | None = _Stretch(_origin(None, lines=[None, None]), [])
        self._last_ran: tuple[Execution | None, str, int | None, int] | None = None
        self._at_pause: dict[tuple[str, int], _Stretch] = {}  # GradStep's own stretch at each line paused at
        self._unknown = _Stretch(_origin(None), [])

    def paused(self, frames: list[FrameType], event: str, lines: LineLog | None,
               forwards: ForwardLog | None) -> None:
        """The run reached a pause in ``frames[0]`` (user frames, innermost first).

        Most runs between two pauses of a recording make no node: their stretch is then empty, and
        its origin is only worked out if an ``AccumulateGrad`` node asks for it (:meth:`origin`).
        """
        frame = frames[0]
        file, line = frame.f_code.co_filename, line_of(frame)
        one, traced = lines.close(frame, event) if lines else (None, False)
        calls = forwards.close() if forwards else []
        now = self._now()
        self._last_run, self._last_ran = None, (one, file, self._left[1], line)
        if now != self._run_start or self._peek is None:
            if calls and traced:
                names = module_names(frames, [call[3] for call in calls])
                named = [(start, end, depth, names[id(module)]) for start, end, depth, module in calls]
            else:
                named = []
            self._add(self._run_start, self._run_stretch(named))
        self._left = (file, line)
        stretch = self._at_pause.get(self._left)
        if stretch is None:
            if len(self._at_pause) >= AT_PAUSE_LIMIT:
                self._at_pause.clear()
            stretch = self._at_pause[self._left] = _Stretch(_origin(file, by="gradstep", at=line), [])
        self._add(now, stretch)

    def _run_stretch(self, named: list[tuple[int, int, int, str]] | None = None) -> _Stretch:
        """The stretch of the run that ended at the latest pause (named: its module calls)."""
        if self._last_run is None:
            one, file, left, line = self._last_ran
            origin = _origin(*one) if one is not None else _origin(file, lines=[left, line])
            self._last_run = _Stretch(origin, named or [])
        return self._last_run

    def request(self, kind: str, frame: FrameType) -> None:
        """A request from the app (console, Backward panel) starts: nodes it makes are its own."""
        by = "console" if kind == "evaluate" else kind
        self._add(self._now(), _Stretch(_origin(frame.f_code.co_filename, by=by, at=line_of(frame)), []))

    def resumed(self) -> None:
        """The lesson runs on: nodes made from now on belong to the next pause's stretch."""
        self._run_start = self._now()

    def origin(self, seq: int | None) -> dict[str, Any]:
        """The origin of the node numbered ``seq``; None (``AccumulateGrad``) → the latest pause's stretch."""
        if seq is None or self._peek is None:
            return self._run_stretch().origin
        index = bisect.bisect_right(self._starts, seq) - 1
        stretch = self._stretches[index] if index >= 0 else self._unknown
        return stretch.origin_of(seq)

    def _now(self) -> int:
        return self._peek() if self._peek else 0

    def _add(self, start: int, stretch: _Stretch) -> None:
        if self._starts and self._starts[-1] >= start:  # the previous stretch made no node: replace it
            self._starts.pop()
            self._stretches.pop()
        self._starts.append(start)
        self._stretches.append(stretch)


def sequence_peek() -> Callable[[], int] | None:
    """torch's reader of the next autograd sequence number of this thread, if torch has one."""
    torch = sys.modules.get("torch")
    return getattr(torch._C._autograd, "_get_sequence_nr", None) if torch is not None else None


def forward_log() -> ForwardLog | None:
    """A :class:`ForwardLog` for the torch imported in this process, or None without torch."""
    torch = sys.modules.get("torch")
    peek = sequence_peek()
    if torch is None or peek is None:
        return None
    return ForwardLog(torch.nn.Module._call_impl.__code__, peek)
