"""The engine's own reads of lesson values, kept out of the lesson's sight (runs in the lesson process).

At a pause the engine reads tensors (summaries, the autograd graph, watches, breakpoint
conditions). Those reads are tensor operations like any other, so without care a lesson's
``TorchFunctionMode``, ``TorchDispatchMode`` or ``__torch_function__`` subclass would see
and count them, ``torch.jit.trace`` would record them, and Dynamo, whose frame hook stays
set while the lesson is inside a ``torch.compile``d function, would compile the engine's
own code. :func:`engine_reads` lifts all of that for the duration of the engine's work;
:func:`learner_code` puts it back for code the learner typed (the console, the watch
panel's evaluations), which keeps the semantics it has in the lesson.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

#: The lifts in force, innermost last; :func:`learner_code` undoes the innermost for a while.
_active: list[_Lift] = []
#: What :func:`engine_reads` gives before the lesson imported torch.
_NOTHING_TO_LIFT = nullcontext()
#: Whether the engine's code objects are already marked for Dynamo to leave alone.
_dynamo_skips_engine = False


class _Lift:
    """What one :func:`engine_reads` took away from the lesson, and how to give it back."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.torch_function: Any = None
        self.dispatch_modes: Any = None
        self.jit_state: Any = None
        self.eval_frame: Any = None

    def __enter__(self) -> _Lift:
        self.lift()
        _active.append(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _active.pop()
        self.restore()

    def lift(self) -> None:
        torch = self.torch
        C = torch._C
        # Modes and subclass handlers together: with torch functions disabled, neither runs.
        self.torch_function = C.DisableTorchFunction()
        self.torch_function.__enter__()
        if C._len_torch_dispatch_stack() or torch._ops._len_torch_dispatch_stack_pre_dispatch():
            from torch.utils._python_dispatch import _disable_current_modes

            self.dispatch_modes = _disable_current_modes()
            self.dispatch_modes.__enter__()
        self.jit_state = C._get_tracing_state()
        if self.jit_state is not None:
            C._set_tracing_state(None)
        if "torch._dynamo" in sys.modules:  # only a lesson that used torch.compile has the hook
            _skip_engine_code()
            self.eval_frame = C._dynamo.eval_frame.set_eval_frame(None)

    def restore(self) -> None:
        C = self.torch._C
        if self.eval_frame is not None:
            C._dynamo.eval_frame.set_eval_frame(self.eval_frame)
            self.eval_frame = None
        if self.jit_state is not None:
            C._set_tracing_state(self.jit_state)
            self.jit_state = None
        if self.dispatch_modes is not None:
            self.dispatch_modes.__exit__(None, None, None)
            self.dispatch_modes = None
        self.torch_function.__exit__(None, None, None)
        self.torch_function = None


def _skip_engine_code() -> None:
    """Mark every code object of GradStep's modules so Dynamo runs them, and what they call, as is.

    Setting the frame hook aside (``set_eval_frame(None)``) covers what the engine does
    inside a pause, but the tracer's own trace functions start before any of it: without
    this mark Dynamo would compile them the first time they run inside a compiled function.
    """
    global _dynamo_skips_engine
    if _dynamo_skips_engine:
        return
    _dynamo_skips_engine = True
    from torch._C._dynamo.eval_frame import set_code_exec_strategy
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    strategy = FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP)
    from app.lesson.hooks import ENGINE_DIRS

    for module in list(sys.modules.values()):
        if os.path.dirname(getattr(module, "__file__", None) or "") in ENGINE_DIRS:
            for code in _codes_of(module.__name__, vars(module).values()):
                set_code_exec_strategy(code, strategy)


def _codes_of(module: str, values: Any) -> Iterator[types.CodeType]:
    """The code objects of the functions and methods ``module`` defines among ``values``, nested ones included."""
    pending = []
    for value in values:
        if isinstance(value, type) and value.__module__ == module:
            pending.extend(vars(value).values())
        else:
            pending.append(value)
    codes = []
    for value in pending:
        value = getattr(value, "__func__", value)
        value = getattr(value, "fget", value)
        code = getattr(value, "__code__", None)
        if isinstance(code, types.CodeType):
            codes.append(code)
    while codes:
        code = codes.pop()
        yield code
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))


def engine_reads() -> AbstractContextManager[Any]:
    """Run the engine's reads with the lesson's torch modes, subclass handlers, JIT tracing and Dynamo aside.

    A :class:`_Lift` is its own context manager: every pause enters one, and a generator-based
    one cost 3.8 µs a time.
    """
    torch = sys.modules.get("torch")
    return _NOTHING_TO_LIFT if torch is None else _Lift(torch)


@contextmanager
def learner_code() -> Iterator[None]:
    """Inside :func:`engine_reads`, run what the learner typed as the lesson would run it."""
    if not _active:
        yield
        return
    lift = _active.pop()
    lift.restore()
    try:
        yield
    finally:
        lift.lift()
        _active.append(lift)
