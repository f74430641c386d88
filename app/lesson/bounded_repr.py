"""``repr`` of lesson values within a size and a time bound (runs in the lesson process).

Sizes are bounded the way :mod:`reprlib` does it: a container shows its first items and
never builds the repr of the rest, a tensor inside one is a short
``tensor(shape=[2, 3], dtype=float32)``.
Time is bounded because a ``repr`` is the lesson's code: one that loops or sleeps must
not stall the pause.

How the time bound works, and why this way: the repr runs in the main thread, as every
engine read at a pause does, under a real-time interval timer whose ``SIGALRM`` handler
raises :class:`ReprTimeout` there (and again every 50 ms, in case the repr swallows it).
Running the repr in a helper thread and abandoning it after the timeout was the other
option; it is worse here: the abandoned thread cannot be killed, so a ``while True`` repr
would go on burning a core and holding the GIL for the rest of the run, and it would run
concurrently with the lesson, touching the lesson's objects while the lesson uses them.
Raising in the main thread leaves the lesson as consistent as any exception raised inside
its ``__repr__`` would. What the timer cannot interrupt is one long C call; ``time.sleep``
and lock waits are interrupted (PEP 475). An object whose repr timed out is remembered
and not tried again; a pause spends at most :data:`PAUSE_SECONDS` on slow reprs in all.
"""

from __future__ import annotations

import builtins
import reprlib
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

#: Characters of ``repr`` kept for values of other types.
REPR_LIMIT = 300
#: How long one repr may run.
REPR_SECONDS = 0.5
#: How long all the slow reprs of one pause may run together.
PAUSE_SECONDS = 1.0
#: After the first alarm, how often it repeats while the repr still runs.
_REPEAT_SECONDS = 0.05

TIMED_OUT = f"<repr() did not return within {REPR_SECONDS:g} s>"
OUT_OF_TIME = f"<repr() not run: this pause already spent {PAUSE_SECONDS:g} s on slow repr() calls>"


class ReprTimeout(BaseException):
    """Raised into a repr that ran out of time; a BaseException so ``except Exception`` in it lets it by."""


class _LessonRepr(reprlib.Repr):
    """reprlib with room for the values a lesson holds, and tensors as a shape and dtype."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxtuple = self.maxlist = self.maxarray = self.maxdict = 10
        self.maxset = self.maxfrozenset = self.maxdeque = 10
        self.maxstring = 120
        self.maxlong = 60
        self.maxother = 120
        #: The length kept of the value asked for itself (its items keep ``maxother``).
        self.top_limit = REPR_LIMIT

    def repr1(self, x: Any, level: int) -> str:
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            return short_tensor_repr(x)
        return super().repr1(x, level)

    def repr_str(self, x: str, level: int) -> str:
        limit = self.top_limit if level == self.maxlevel else self.maxstring
        return builtins.repr(x[:limit])

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = builtins.repr(x)
        except Exception as exc:  # a lesson's broken __repr__ must not break the pause
            return f"<repr failed: {type(exc).__name__}: {exc}>"
        limit = self.top_limit if level == self.maxlevel else self.maxother
        return text if len(text) <= limit else text[: limit - 1] + "…"


_REPR = _LessonRepr()


def short_tensor_repr(tensor: Any) -> str:
    """``tensor(shape=[2, 3], dtype=float32)``, with the layout when it is not strided; reads no values."""
    try:
        shape = ", ".join(str(d) for d in tensor.shape)
    except RuntimeError:  # a strided nested tensor has no single shape
        shape = "nested"
    layout = str(tensor.layout).removeprefix("torch.")
    dtype = str(tensor.dtype).removeprefix("torch.")
    return f"tensor(shape=[{shape}], dtype={dtype}" + ("" if layout == "strided" else f", layout={layout}") + ")"


class ReprBudget:
    """Runs reprs under the time bound and remembers the objects whose repr did not return."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._slow: dict[int, Any] = {}

    def new_pause(self) -> None:
        """Start a pause's budget afresh (objects already known to be slow stay known)."""
        self.spent = 0.0

    def call(self, fn: Callable[[Any], str], value: Any) -> str:
        """``fn(value)``, or a placeholder when it does not return in time."""
        if self._known_slow(value):
            return TIMED_OUT
        remaining = min(REPR_SECONDS, PAUSE_SECONDS - self.spent)
        if remaining <= 0:
            return OUT_OF_TIME
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return fn(value)
        armed = True

        def on_alarm(signum: int, frame: Any) -> None:
            if armed:
                raise ReprTimeout

        start = time.perf_counter()
        previous = signal.signal(signal.SIGALRM, on_alarm)
        lesson_timer = signal.setitimer(signal.ITIMER_REAL, remaining, _REPEAT_SECONDS)
        try:
            try:
                return fn(value)
            finally:
                armed = False  # first thing: a late alarm must not raise into the engine's own code
        except ReprTimeout:  # also catches an alarm that landed in the line above
            self._remember(value)
            return TIMED_OUT
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if lesson_timer[0]:  # the lesson's own timer goes on
                signal.setitimer(signal.ITIMER_REAL, *lesson_timer)
            self.spent += time.perf_counter() - start

    def _remember(self, value: Any) -> None:
        key = id(value)
        try:
            self._slow[key] = weakref.ref(value, lambda _ref: self._slow.pop(key, None))
        except TypeError:  # lists, dicts: not weakly referable; an id reused by another list is a small risk
            self._slow[key] = type(value)

    def _known_slow(self, value: Any) -> bool:
        known = self._slow.get(id(value))
        if known is None:
            return False
        if isinstance(known, weakref.ref):
            return known() is value
        return known is type(value)


_PLAIN_TYPES = frozenset({int, float, complex, bool, str, bytes, type(None)})

#: One budget for the lesson process: every repr of a pause draws on it.
BUDGET = ReprBudget()


def _repr(value: Any) -> str:
    try:
        return _REPR.repr(value)
    except Exception as exc:  # a container whose __len__ or iteration fails, say
        return f"<repr failed: {type(exc).__name__}: {exc}>"


def bounded_repr(value: Any, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` built within bounds and cut to ``limit`` characters; never raises."""
    _REPR.top_limit = limit
    # Builtin scalars cannot run lesson code: no timer for them (arming one costs ~30 µs).
    text = _repr(value) if type(value) in _PLAIN_TYPES else BUDGET.call(_repr, value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def timed(fn: Callable[[Any], str], value: Any) -> str:
    """``fn(value)`` (lesson code that builds text) under the same time bound as a repr."""
    return BUDGET.call(fn, value)
