"""The PyTorch operations a stepped line runs: name, source span, values and the autograd nodes each made.

Runs inside the lesson process. While a line is stepped (into, over, out or by expression;
not in continue or record mode) a ``TorchFunctionMode`` sits at the *bottom* of torch's mode stack
and logs the calls a lesson frame makes directly (calls nested inside torch are passed through
untouched); in continue mode it is not on the stack
at all. Being at the bottom, every mode of the lesson sees each operation first, exactly as
in a plain run, and a lesson's ``with Mode():`` pops its own mode, never ours.

What a lesson can still observe while a stepped line runs: the stack is one mode longer
(``torch._C._len_torch_function_stack()``, ``torch.overrides._get_current_function_mode_stack()``
and ``torch._C._is_torch_function_mode_enabled()`` show it), so torch's Python functions take
their ``handle_torch_function`` path, which computes the same result. During a pause the
mode is off the stack again.

The log keeps summaries with their own copy of the values, never a tensor; the outputs of
the current line are held only through weak references (for the graph of an op-level pause).
"""

from __future__ import annotations

import dis
import linecache
import sys
import weakref
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

import numpy as np

from app.lesson.autograd_nodes import METADATA_KEY, OP_KEY, SPAN_KEY, node_kind
from app.lesson.code_table import CodeTable
from app.lesson.summaries import Summarizer

#: Opcodes that run an operator or attribute slot: the instruction's span is the operation itself.
_SLOT_OPS = frozenset(op for op in dis.opmap if op.startswith(("BINARY_", "UNARY_", "STORE_SUBSCR", "DELETE_SUBSCR",
                                                                "COMPARE_OP", "CONTAINS_OP", "LOAD_ATTR",
                                                                "LOAD_METHOD", "STORE_ATTR", "GET_ITER",
                                                                "FOR_ITER")))
#: Owner names torch gives its C callables, as the learner writes them.
_OWNERS = {"TensorBase": "Tensor", "_TensorBase": "Tensor", "_VariableFunctionsClass": "torch"}
#: Descriptor calls (``x.shape``, ``x.grad``) are logged only when they make autograd nodes (``x.T``).
_ACCESSORS = frozenset({"__get__", "__set__", "__delete__"})

#: Key of an entry's node sequence numbers until the pause turns them into the graph's ``nodes`` ids.
SEQUENCES = "_sequences"
#: Entries logged between two pauses; a stepped-over call running more operations only counts the rest.
LOG_LIMIT = 1000

OpHandler = Callable[[FrameType, dict[str, Any]], None]


def op_name(func: Any) -> str:
    """The qualified name of a torch callable: ``Tensor.matmul``, ``torch.tanh``, ``torch.nn.functional.relu``."""
    if type(func).__name__ == "method-wrapper":  # a descriptor's __get__: name the attribute
        owner = getattr(func, "__self__", None)
        objclass = getattr(owner, "__objclass__", None)
        if objclass is not None:
            return f"{_OWNERS.get(objclass.__name__, objclass.__name__)}.{owner.__name__}.{func.__name__}"
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
    owner, _, rest = qualname.rpartition(".")
    if owner in _OWNERS:
        return f"{_OWNERS[owner]}.{rest}"
    module = getattr(func, "__module__", None)
    if module and not owner:
        return f"{module}.{qualname}"
    return qualname


def caller(frame: FrameType | None, handler_code: CodeType) -> FrameType | None:
    """The frame that called the operation, past torch's dispatch: ``handle_torch_function`` and the
    public function it serves, and the ``__torch_function__`` of the lesson's own modes and subclasses."""
    while frame is not None:
        code = frame.f_code
        if code is handler_code:
            frame = frame.f_back
            frame = frame.f_back if frame is not None else None
        elif code.co_name == "__torch_function__":
            frame = frame.f_back
        else:
            return frame
    return None


def own_values(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with values that do not share memory with a live tensor (numpy views keep storage alive)."""
    values = summary.get("values")
    grad = summary.get("grad")
    if not isinstance(values, np.ndarray) and not isinstance(grad, dict):
        return summary
    out = dict(summary)
    if isinstance(values, np.ndarray) and values.base is not None:
        out["values"] = values.copy()
    if isinstance(grad, dict):
        out["grad"] = own_values(grad)
    return out


def grad_fn_of(tensor: Any) -> Any:
    """``tensor.grad_fn``, or None where reading it raises.

    A view made under ``torch.no_grad()`` whose base then changed in place raises on that read
    ("A view was created in no_grad mode…"); the lesson itself never read it, so neither do we.
    """
    try:
        return tensor.grad_fn
    except RuntimeError:
        return None


def _tensors(value: Any, torch: Any) -> list[Any]:
    """The tensors in an argument or result, one level into lists, tuples and dicts."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, torch.Tensor)]
    if isinstance(value, dict):
        return [item for item in value.values() if isinstance(item, torch.Tensor)]
    return []


class OpRecorder:
    """Logs the operations lesson frames call while a line is stepped.

    Parameters
    ----------
    is_user_code
        Whether a code object belongs to the lesson (the tracer's test).
    summarizer
        Summarises inputs and outputs (shared with the snapshots, so cached summaries are reused).
    on_op
        ``on_op(frame, entry)`` serves an op-level pause; called after each operation of the frame
        given to :meth:`pause_in`.

    Attributes
    ----------
    values : bool
        Whether every entry carries summaries of its ``inputs`` (and ``kwargs``) and ``output``;
        without, only the entries of op-level pauses do (summaries are most of the cost).
    dropped : int
        Operations past ``LOG_LIMIT`` since the last :meth:`take`, counted only.
    """

    def __init__(self, is_user_code: Callable[[CodeType], bool], summarizer: Summarizer, on_op: OpHandler) -> None:
        self.is_user_code = is_user_code
        self.summarizer = summarizer
        self.on_op = on_op
        self.entries: list[dict[str, Any]] = []
        self.outputs: list[tuple[str, weakref.ref]] = []
        self.active = False
        self.values = False
        self.dropped = 0
        self.pause_frame: FrameType | None = None
        self._torch = sys.modules.get("torch")
        self._mode = self._make_mode() if self._torch is not None else None
        self._positions: CodeTable[list[tuple]] = CodeTable()

    # ---- the mode stack -------------------------------------------------------------

    def _make_mode(self) -> Any:
        recorder = self
        handler_code = self._torch.overrides.handle_torch_function.__code__
        compiling = self._torch.compiler.is_compiling

        class OpRecordingMode(self._torch.overrides.TorchFunctionMode):
            """GradStep's op log (see :mod:`app.lesson.op_recorder`)."""

            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                if compiling() or not recorder.active:  # torch.compile / torch.cond trace through this: pass by
                    return func(*args, **kwargs)
                frame = caller(sys._getframe(1), handler_code)
                if frame is None or not recorder.is_user_code(frame.f_code):
                    return func(*args, **kwargs)
                return recorder.record(frame, func, args, kwargs)

        return OpRecordingMode()

    def _rebuild_stack(self, keep_ours: bool) -> None:
        C = self._torch._C
        stack = [C._pop_torch_function_stack() for _ in range(C._len_torch_function_stack())]
        stack = [mode for mode in stack if mode is not self._mode]
        if keep_ours:
            C._push_on_torch_function_stack(self._mode)
        for mode in reversed(stack):
            C._push_on_torch_function_stack(mode)

    def attach(self) -> None:
        """Start logging: put the mode at the bottom of the stack (the lesson's modes stay above it)."""
        if self._mode is None:
            self._torch = sys.modules.get("torch")
            if self._torch is None:
                return
            self._mode = self._make_mode()
        if not self.active:
            self._rebuild_stack(True)
            self.active = True

    def detach(self) -> None:
        """Stop logging and take the mode off the stack (called while the lesson is paused)."""
        if self.active:
            self._rebuild_stack(False)
            self.active = False

    def pause_in(self, frame: FrameType | None) -> None:
        """Pause after every operation ``frame`` calls (None: stop pausing at operations)."""
        self.pause_frame = frame

    def take(self) -> list[dict[str, Any]]:
        """The log since the last line pause, and forget it (and the line's outputs)."""
        entries, self.entries = self.entries, []
        self.outputs = []
        self.dropped = 0
        return entries

    def live_outputs(self) -> dict[str, Any]:
        """The outputs of this line's operations that are still alive, by pseudo-variable name."""
        live = {}
        for name, ref in self.outputs:
            value = ref()
            if value is not None:
                live[name] = value
        return live

    # ---- one operation --------------------------------------------------------------

    def record(self, frame: FrameType, func: Any, args: tuple, kwargs: dict) -> Any:
        """Run ``func`` for a lesson frame and log it; pauses afterwards when stepping by expression."""
        torch = self._torch
        summarize = self.summarizer.summarize
        pausing = frame is self.pause_frame
        detailed = (self.values or pausing) and len(self.entries) < LOG_LIMIT
        with torch._C.DisableTorchFunction():  # our reads reach no __torch_function__ of the lesson
            inputs = [tensor for arg in (*args, *kwargs.values()) for tensor in _tensors(arg, torch)]
            before = [grad_fn_of(tensor) for tensor in inputs]
            if detailed:  # before the call: an in-place operation changes its input
                input_summaries = [own_values(summarize(arg)) for arg in args]
                kw_summaries = {key: own_values(summarize(value)) for key, value in kwargs.items()}
        result = func(*args, **kwargs)
        name = op_name(func)
        with torch._C.DisableTorchFunction():
            span, exact = self._span(frame, name)
            text = self._text(frame.f_code.co_filename, span)
            outputs = _tensors(result, torch)
            nodes = self._new_nodes(outputs, before, span, (name, text))
            del before
            if name.rpartition(".")[2] in _ACCESSORS and not nodes:
                return result
            if len(self.entries) >= LOG_LIMIT:
                self.dropped += 1
                return result
            entry = {"name": name, "span": span, "span_exact": exact, "text": text, SEQUENCES: nodes}
            if detailed:
                entry["inputs"] = input_summaries
                entry["output"] = own_values(summarize(result))
                if kw_summaries:
                    entry["kwargs"] = kw_summaries
        entry["variable"] = pseudo_name(entry)
        self.entries.append(entry)
        if outputs:
            try:
                self.outputs.append((entry["variable"], weakref.ref(outputs[0])))
            except TypeError:
                pass
        if pausing:
            del outputs, inputs
            self.on_op(frame, entry)
        return result

    def _new_nodes(self, outputs: list[Any], before: list[Any], span: list[int], op: tuple[str, str]) -> list[int]:
        """Sequence numbers of the nodes behind ``outputs`` that did not exist before the call; they get
        ``span`` and ``op`` (the operation's name and source text).

        Ids are left to the graph tracker, so a node is numbered the same whether or not it was
        made while stepping.
        """
        stop = {id(node) for node in before if node is not None}
        nodes: list[int] = []
        seen: set[int] = set()
        stack = [node for t in reversed(outputs) if (node := grad_fn_of(t)) is not None]
        while stack:
            node = stack.pop()
            key = id(node)
            if key in seen or key in stop:
                continue
            seen.add(key)
            metadata = node.metadata
            if METADATA_KEY in metadata or SPAN_KEY in metadata or node_kind(node) == "leaf":
                continue  # known before this call, or a leaf's accumulator: not made by it
            metadata[SPAN_KEY] = span
            metadata[OP_KEY] = op
            nodes.append(node._sequence_nr())
            stack.extend(child for child, _ in reversed(node.next_functions) if child is not None)
        return nodes

    # ---- where in the source ----------------------------------------------------------

    def _span(self, frame: FrameType, name: str) -> tuple[list[int], bool]:
        """``[line, col, end_line, end_col]`` of the instruction running, and whether it is exact.

        Columns are UTF-8 byte offsets as in ``co_positions()``. A call whose text does not
        name the operation (``print(x)`` reaching ``Tensor.__repr__``, an op called by C code
        such as ``map``) and an instruction without positions fall back to the whole line.
        """
        code = frame.f_code
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = list(code.co_positions())
        lasti = frame.f_lasti
        line, end_line, col, end_col = positions[lasti // 2] if 0 <= lasti // 2 < len(positions) else (None,) * 4
        if None not in (line, end_line, col, end_col):
            span = [line, col, end_line, end_col]
            opname = dis.opname[code.co_code[lasti]]
            if opname in _SLOT_OPS:
                return span, True
            short = name.rpartition(".")[2].strip("_")
            if short and callee(self._text(code.co_filename, span)).rstrip("_").endswith(short):
                return span, True
        line = frame.f_lineno
        return [line, 0, line, len(self._line(code.co_filename, line).rstrip("\r\n").encode("utf-8"))], False

    @staticmethod
    def _line(filename: str, line: int) -> str:
        return linecache.getline(filename, line)

    def _text(self, filename: str, span: list[int]) -> str:
        """The source between the span's ends (columns in UTF-8 bytes)."""
        line, col, end_line, end_col = span
        lines = [self._line(filename, n).encode("utf-8") for n in range(line, end_line + 1)]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0][col:end_col].decode("utf-8", "replace")
        parts = [lines[0][col:], *lines[1:-1], lines[-1][:end_col]]
        return b"".join(parts).decode("utf-8", "replace")


def callee(call: str) -> str:
    """The called part of a call expression's text: ``torch.tanh`` of ``torch.tanh(a + b)``."""
    text = call.rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            return text[:index].rstrip()
    return text


def pseudo_name(entry: dict[str, Any]) -> str:
    """The Variables view's name of an operation's result: its source text in angle brackets."""
    text = " ".join(entry["text"].split()) if entry["span_exact"] else entry["name"]
    return f"⟨{text}⟩"
