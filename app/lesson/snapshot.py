"""What a pause looks like as plain data: the stack, the frame's variables, the grad mode.

Runs inside the lesson process and turns live frames into the snapshot dict of a
:class:`~app.messages.Paused` message (its keys are documented in the README).
"""

from __future__ import annotations

import dis
import inspect
import sys
import types
from types import FrameType
from typing import Any

from app.lesson.bounded_repr import REPR_LIMIT, timed
from app.lesson.summaries import Summarizer, unreadable

_HIDDEN_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                 types.MethodType)


#: Variable names whose visibility a :class:`SnapshotBuilder` remembers before it starts afresh.
SHOWN_LIMIT = 4096

#: Globals that ``torch.compile`` (Dynamo) adds to a module it compiled code of: not the lesson's names.
_GENERATED = ("__builtins_dict___", "__compiled_fn_", "__resume_at_", "__import_")


def is_hidden(name: str, value: Any) -> bool:
    """Whether a variable is hidden by default: dunders, Dynamo's generated globals, modules, functions, classes."""
    return _hidden_name(name) or _hidden_kind(type(value))


def _hidden_name(name: str) -> bool:
    return name[:2] == "__" and (name[-2:] == "__" or name.startswith(_GENERATED))


def _hidden_kind(kind: type) -> bool:
    return issubclass(kind, _HIDDEN_TYPES)  # by the real type: isinstance would read value.__class__


def visible(namespace: dict[str, Any], show_hidden: bool = False) -> dict[str, Any]:
    """The variables of ``namespace`` a learner sees, in definition order."""
    if show_hidden:
        return dict(namespace)
    return {k: v for k, v in namespace.items() if not is_hidden(k, v)}


def grad_mode() -> dict[str, bool]:
    """Whether autograd records (``torch.is_grad_enabled``), whether inference mode is on, and whether a
    backward pass is running (a hook called from autograd's engine: grad mode is off there)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {"grad_enabled": True, "inference_mode": False, "in_backward": False}
    task = getattr(torch._C, "_current_graph_task_id", None)  # -1 outside a backward pass
    return {"grad_enabled": torch.is_grad_enabled(),
            "inference_mode": torch.is_inference_mode_enabled(),
            "in_backward": task is not None and task() != -1}


def frame_locals(frame: FrameType) -> dict[str, Any]:
    """A frame's local namespace, read without side effects on the frame.

    A module frame's is its globals, taken as such: on Python 3.12, reading ``f_locals``
    marks the frame so that, when the trace function returns, the interpreter writes the
    namespace back into the frame's fast locals, and the variable of a comprehension
    inlined at module level (PEP 709), which the namespace lacks, becomes None ("assigning
    None to unbound local 'seq'").
    """
    if frame.f_code.co_name == "<module>":
        return frame.f_globals
    return frame.f_locals


_RETURNS = frozenset(dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)
_YIELDS = frozenset((dis.opmap["YIELD_VALUE"],))
_RESUME = dis.opmap["RESUME"]


def return_kind(frame: FrameType) -> str:
    """How a frame at a ``return`` trace event leaves: by ``return``, by ``yield`` (a generator
    handing out a value), by ``await`` (a coroutine suspended: it comes back) or by ``raise``
    (unwinding with an exception). The trace event is the same for all four; the instruction
    the frame stopped at tells them apart."""
    code = frame.f_code
    lasti = frame.f_lasti
    op = code.co_code[lasti] if 0 <= lasti < len(code.co_code) else None
    if op == _RESUME and lasti >= 2:  # Python 3.13 reports a yield from the RESUME that follows it
        op = code.co_code[lasti - 2]
    if op in _YIELDS:
        return "await" if code.co_flags & inspect.CO_COROUTINE else "yield"
    return "return" if op in _RETURNS else "raise"


#: Characters of an uncaught exception's message that a pause and the run's end carry; the output
#: still has the whole traceback as Python prints it. A 1,000,000-character message held the
#: window for 30 s (its error card, status and console lines lay it out whole).
MESSAGE_LIMIT = 2_000


def bounded_message(message: str) -> str:
    """An exception's message up to :data:`MESSAGE_LIMIT` characters, then how many more it had."""
    if len(message) <= MESSAGE_LIMIT:
        return message
    return f"{message[:MESSAGE_LIMIT]} … (+{len(message) - MESSAGE_LIMIT:,})"


def raised(arg: Any) -> dict[str, str] | None:
    """The exception an ``exception`` trace event carries (its ``arg``), as type and message.

    The message is the exception's ``str()``, lesson code, so it runs under the repr time bound.
    """
    if not (isinstance(arg, tuple) and len(arg) == 3 and isinstance(arg[1], BaseException)):
        return None
    kind, value, _ = arg
    message = timed(str, value)
    return {"type": getattr(kind, "__name__", type(value).__name__), "message": message[:REPR_LIMIT]}


def frame_entry(frame: FrameType, line: int | None = None) -> dict[str, Any]:
    """One row of the call stack."""
    return {"function": frame.f_code.co_name, "file": frame.f_code.co_filename,
            "line": line if line is not None else frame.f_lineno}


class SnapshotBuilder:
    """Builds pause snapshots; keeps one :class:`Summarizer` so unchanged tensors cost nothing."""

    def __init__(self, summarizer: Summarizer | None = None) -> None:
        self.summarizer = summarizer or Summarizer()
        self._names: dict[str, bool] = {}  # variable name -> shown (see _summaries)

    def variables(self, frame: FrameType, show_hidden: bool = False) -> dict[str, Any]:
        """Summaries of a frame's locals (and, for a function frame, its globals apart)."""
        self.summarizer.new_pause()
        return self._variables(frame, show_hidden)

    def module_variables(self, namespace: dict[str, Any]) -> dict[str, Any]:
        """Summaries of the lesson module's variables once it has run to its end."""
        self.summarizer.new_pause()
        return self._summaries(namespace, False)

    def _variables(self, frame: FrameType, show_hidden: bool) -> dict[str, Any]:
        local_ns = frame_locals(frame)
        out = {"vars": self._summaries(local_ns, show_hidden)}
        out["globals"] = {} if local_ns is frame.f_globals else self._summaries(frame.f_globals, show_hidden)
        return out

    def _summaries(self, namespace: dict[str, Any], show_hidden: bool) -> dict[str, Any]:
        """The summaries of :func:`visible` variables, in one pass (it runs at every step of a recording).

        Whether a name is shown is worked out once per name (a module has thirty, mostly the same
        at every step). Kinds are not remembered: a dict keyed by a lesson's class would hash it
        with its metaclass's ``__hash__`` and keep the class alive.
        """
        summarize = self.summarizer.summarize
        if show_hidden:
            return {name: summarize(value) for name, value in namespace.items()}
        names = self._names
        plain_tensor, tensors = self.summarizer.tensor_type, self.summarizer.tensors.summarize
        out = {}
        for name, value in namespace.items():
            shown = names.get(name)
            if not (self._shown_name(name) if shown is None else shown):
                continue
            kind = type(value)
            if kind is plain_tensor:  # Summarizer.summarize's first case, inlined: most of a recording's values
                try:
                    out[name] = tensors(value)
                except Exception as exc:
                    out[name] = unreadable(value, exc)
            elif not _hidden_kind(kind):
                out[name] = summarize(value)
        return out

    def _shown_name(self, name: str) -> bool:
        if len(self._names) >= SHOWN_LIMIT:
            self._names.clear()
        shown = self._names[name] = not _hidden_name(name)
        return shown

    def build(self, frames: list[tuple[FrameType, int]], event: str, step: int,
              selected: int = 0, arg: Any = None, cut: bool = False) -> dict[str, Any]:
        """The snapshot of a pause.

        Parameters
        ----------
        frames
            User frames with their current lines, innermost first.
        event
            ``line``, ``call``, ``return`` or ``exception``.
        step
            The pause counter.
        selected
            Index in ``frames`` of the frame whose variables are shown.
        arg
            The trace event's argument: the return value at ``return``.
        cut
            ``frames`` are only the innermost user frames of a deeper stack (``stack_cut``).
        """
        self.summarizer.new_pause()
        frame, line = frames[0]
        snapshot: dict[str, Any] = {
            "step": step,
            "event": event,
            "file": frame.f_code.co_filename,
            "line": line,
            "function": frame.f_code.co_name,
            "depth": len(frames) - 1,
            **grad_mode(),
            "stack": [frame_entry(f, ln) for f, ln in frames],
            "frame_index": selected,
            "return_value": self.summarizer.summarize(arg) if event == "return" else None,
            "return_kind": return_kind(frame) if event == "return" else None,
            "exception": raised(arg) if event == "exception" else None,
            "post_mortem": False,
        }
        if cut:
            snapshot["stack_cut"] = True
        snapshot.update(self._variables(frames[selected][0], False))
        return snapshot
