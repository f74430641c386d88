"""``repr`` of lesson values within a size and a time bound (runs in the lesson process).

Sizes are bounded the way :mod:`reprlib` does it: a container shows its first items and
never builds the repr of the rest, a tensor inside one is a short
``tensor(shape=[2, 3], dtype=float32)``.
Time is bounded because a ``repr`` is the lesson's code: one that loops or sleeps must
not stall the pause.

How the time bound works, and why this way: the repr runs in a helper thread (one at a
time, kept between calls) while the main thread, which builds the pause, waits for it at
most :data:`REPR_SECONDS`; past that, the main thread shows a placeholder and goes on
without it. The bound so holds whatever the repr does: an earlier version raised a timeout
exception into the main thread from a ``SIGALRM`` handler, and a repr that caught it
(``except BaseException``) and looped on held the pause for good. The abandoned thread
cannot be killed: once it runs Python code it is sent :class:`ReprTimeout`
(``PyThreadState_SetAsyncExc``), which ends a repr that lets it through, and it is told to
stop when the repr returns; while it still runs,
it shares the GIL with the lesson, so at most :data:`STRAY_LIMIT` are ever abandoned and
no repr is run after that. What no thread can bound is one C call that holds the GIL
without end: the whole process stalls, and the app, which hears nothing, says so and
Stop ends it (:mod:`app.session`). An object whose repr timed out is remembered and not
tried again; a pause spends at most :data:`PAUSE_SECONDS` on slow reprs in all.
"""

from __future__ import annotations

import _thread
import builtins
import ctypes
import queue
import reprlib
import sys
import threading
import time
import weakref
from collections.abc import Callable
from itertools import islice
from typing import Any

#: Characters of ``repr`` kept for values of other types.
REPR_LIMIT = 300
#: How long one repr may run.
REPR_SECONDS = 0.5
#: How long all the slow reprs of one pause may run together.
PAUSE_SECONDS = 1.0
#: Helper threads abandoned inside a repr that did not return, at most; then no repr runs any more.
STRAY_LIMIT = 2

TIMED_OUT = f"<repr() did not return within {REPR_SECONDS:g} s>"
OUT_OF_TIME = f"<repr() not run: this pause already spent {PAUSE_SECONDS:g} s on slow repr() calls>"
STRAYS = f"<repr() not run: {STRAY_LIMIT} earlier repr() calls never returned and still run>"


class ReprTimeout(BaseException):
    """Raised into a repr that ran out of time; a BaseException so ``except Exception`` in it lets it by."""


class _ReprThread:
    """The helper thread that runs the reprs of one stretch of the run, one call at a time."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self.interrupted = False
        self.thread = threading.Thread(target=self._serve, name="gradstep-repr", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        sys.settrace(None)  # not the lesson's code: no breakpoint notices (threading.settrace), no stepping
        torch = sys.modules.get("torch")
        try:
            while True:
                job = self.jobs.get()
                if job is None:
                    return
                fn, value, done, out = job
                try:
                    if torch is None:
                        out.append(fn(value))
                    else:  # as under engine_reads(): a tensor subclass's __torch_function__ stays out of it
                        with torch._C.DisableTorchFunction():
                            out.append(fn(value))
                except BaseException as exc:  # SystemExit in a __repr__, say: the lesson's, not this thread's
                    out.append(f"<repr failed: {type(exc).__name__}>")
                finally:
                    done.release()
        except BaseException:  # the ReprTimeout sent after abandoning it, landing between two calls
            return

    def call(self, fn: Callable[[Any], str], value: Any, seconds: float) -> str | None:
        """``fn(value)`` on this thread, or None when it did not return within ``seconds``."""
        done = _thread.allocate_lock()
        done.acquire()
        out: list[str] = []
        self.jobs.put((fn, value, done, out))
        if done.acquire(timeout=seconds):
            return out[0]
        return None

    def abandon(self) -> None:
        """Leave the thread to its repr: it ends once the repr returns; :meth:`interrupt` asks the repr to stop."""
        self.jobs.put(None)
        self.interrupt()

    def interrupt(self) -> None:
        """Raise :class:`ReprTimeout` into the repr, once, when it runs Python code (see :func:`_runs_python`)."""
        ident = self.thread.ident
        if self.interrupted or ident is None or not _runs_python(self.thread):
            return
        self.interrupted = True
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(ReprTimeout))


#: How long :func:`_runs_python` watches a thread.
_WATCH_SECONDS = 0.01


def _runs_python(thread: threading.Thread) -> bool:
    """Whether ``thread`` runs Python code now, rather than waiting inside a C call (``time.sleep``, a read).

    Python 3.11 flags a pending asynchronous exception for the whole interpreter, and only
    the thread it is meant for clears the flag, when it next runs bytecode: until then every
    traced thread runs in place (a repr inside ``time.sleep(30)`` held the lesson's main
    thread for the 30 s). 3.12 flags the thread alone, so there it is always safe to send.
    The test is the thread's CPU time over a short watch where the OS gives it, else whether
    its innermost frame moved.
    """
    if sys.version_info >= (3, 12):
        return True
    try:
        clock = time.pthread_getcpuclockid(thread.ident)
        before = time.clock_gettime(clock)
        time.sleep(_WATCH_SECONDS)
        return time.clock_gettime(clock) - before > _WATCH_SECONDS / 4
    except (AttributeError, OSError):  # no per-thread clock here (Windows, macOS)
        frame = sys._current_frames().get(thread.ident)
        where = (frame, frame.f_lasti) if frame is not None else None
        time.sleep(_WATCH_SECONDS)
        frame = sys._current_frames().get(thread.ident)
        return frame is not None and (frame, frame.f_lasti) != where


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
        if torch is not None and issubclass(type(x), torch.Tensor):  # not isinstance: it reads x.__class__
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
        self._reader: _ReprThread | None = None
        self._strays: list[_ReprThread] = []

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
        reader = self._reader
        if reader is not None and threading.current_thread() is reader.thread:
            return fn(value)  # the helper thread itself: no thread to wait on
        if reader is None:
            self._strays = [stray for stray in self._strays if stray.thread.is_alive()]
            for stray in self._strays:
                stray.interrupt()  # one that was waiting in a C call when abandoned may run Python now
            if len(self._strays) >= STRAY_LIMIT:
                return STRAYS
            reader = self._reader = _ReprThread()
        start = time.perf_counter()
        try:
            text = reader.call(fn, value, remaining)
        finally:
            self.spent += time.perf_counter() - start
        if text is None:
            reader.abandon()
            self._strays.append(reader)
            self._reader = None
            self._remember(value)
            return TIMED_OUT
        return text

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


#: Sets and dicts up to this size are checked item by item for :func:`_engine_only` (reprlib sorts them whole).
_CHECKED_SORT = 100


def _engine_only(value: Any, level: int = _REPR.maxlevel) -> bool:
    """Whether ``_REPR`` shows ``value`` running no lesson code: builtin scalars, exact builtin containers
    of such (as deep and as far as reprlib looks), plain tensors. Those need no helper thread."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return True
    if level <= 0 and kind in _CONTAINER_TYPES:
        return True  # shown as "[...]": its items are not looked at
    if kind is list or kind is tuple:
        return all(_engine_only(item, level - 1) for item in value[: _REPR.maxlist])
    if kind is set or kind is frozenset:
        return len(value) <= _CHECKED_SORT and all(type(item) in _PLAIN_TYPES for item in value)
    if kind is dict:
        return len(value) <= _CHECKED_SORT and all(type(key) in _PLAIN_TYPES for key in value) \
            and all(_engine_only(item, level - 1) for item in islice(value.values(), _REPR.maxdict))
    torch = sys.modules.get("torch")
    return torch is not None and (kind is torch.Tensor or kind is torch.nn.Parameter)


_CONTAINER_TYPES = frozenset({list, tuple, set, frozenset, dict})


def bounded_repr(value: Any, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` built within bounds and cut to ``limit`` characters; never raises."""
    _REPR.top_limit = limit
    # What runs no lesson code needs no helper thread (a call on it costs ~30 µs more).
    text = _repr(value) if _engine_only(value) else BUDGET.call(_repr, value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def timed(fn: Callable[[Any], str], value: Any) -> str:
    """``fn(value)`` (lesson code that builds text) under the same time bound as a repr."""
    return BUDGET.call(fn, value)
