"""One autograd node as plain data: its GradStep id, kind and origin, and what it saved for its backward.

Runs inside the lesson process, for :mod:`app.lesson.autograd_graph` and the autograd actions.
Nothing here keeps a node: its id lives in ``node.metadata``.
"""

from __future__ import annotations

import functools
import itertools
import sys
import weakref
from typing import Any

from app.lesson.summaries import ITEM_LIMIT, bounded_repr, tensor_values
from app.lesson.tensor_reading import values_of, why_no_values

#: Key of a node's GradStep id in ``node.metadata``.
METADATA_KEY = "gradstep_id"
#: Key of the source span ``[line, col, end_line, end_col]`` of the operation that made a node, when stepped.
SPAN_KEY = "gradstep_span"
#: Key of ``(name, text)`` of that operation: the callable torch dispatched and the span's source text.
OP_KEY = "gradstep_op"
#: Saved tensors with at most this many elements (one line of numbers) carry their values; larger ones
#: carry their shape and, when it is a variable of the frame, its name.
SAVED_VALUE_LIMIT = 16

#: Entries a tracker keeps between pauses, in each of its two tables (tensor-free saved values, and
#: large saved tensors: see :meth:`SavedReader._lasting_entry`), before it starts that table afresh.
CONSTANT_ENTRIES = 4096
#: ``_sequence_nr()`` of nodes outside the creation order (``AccumulateGrad``).
NO_SEQUENCE = 2**64 - 1
#: Ids are unique in the process, so every tracker and action names a node the same way.
_next_id = itertools.count(1)


def node_id(node: Any) -> int:
    """The GradStep id of an autograd node, given on first sight and kept while the node lives."""
    metadata = node.metadata
    nid = metadata.get(METADATA_KEY)
    if nid is None:
        nid = metadata[METADATA_KEY] = next(_next_id)
    return nid


def node_origin(node: Any) -> dict[str, Any]:
    """Where the code that made a node is, as far as the node itself knows: the op's ``span``, ``op``
    and ``text`` (and its ``line``) when an op recorder saw it made, else None; the tracker adds line,
    pass and module."""
    metadata = node.metadata
    span = metadata.get(SPAN_KEY)
    if span is None:
        return None
    op, text = metadata.get(OP_KEY, (None, None))
    return {"file": None, "line": span[0], "pass": None, "module": None, "span": span, "op": op, "text": text}


def node_kind(node: Any) -> str:
    """``"leaf"`` for ``AccumulateGrad``, ``"custom"`` for a custom ``Function``, else ``"op"``."""
    return _kind_of(type(node))


@functools.cache
def _kind_of(cls: type) -> str:
    if issubclass(cls, sys.modules["torch"].autograd.function.BackwardCFunction):
        return "custom"
    return "leaf" if cls.__name__ == "AccumulateGrad" else "op"


def _is_custom(node: Any) -> bool:
    return _kind_of(type(node)) == "custom"


@functools.cache
def _saved_layout(cls: type) -> tuple[tuple[str, str | None], ...]:
    """``(attribute, its raw twin or None)`` for every ``_saved_*`` attribute of a built-in node class.

    Only attributes holding tensors have a ``_raw_saved_*`` twin, whose ``data`` is None once freed.
    """
    names = set(dir(cls))
    return tuple((n, "_raw" + n if "_raw" + n in names else None) for n in sorted(names) if n.startswith("_saved_"))


def _empty_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and not value


def _raw_empty(raw: Any) -> bool:
    if isinstance(raw, (list, tuple)):
        return all(item.data is None for item in raw)
    return raw.data is None


def released(node: Any) -> bool | None:
    """Whether a backward freed the node's saved tensors; None when it saved no tensor."""
    if _is_custom(node):
        try:
            return False if node._raw_saved_tensors else None
        except RuntimeError:
            return True
    for attr, raw in _saved_layout(type(node)):
        if raw is None:
            continue
        if not _raw_empty(getattr(node, raw)):
            return False
        try:
            getattr(node, attr)  # an empty slot reads as None; a freed one raises
        except RuntimeError:
            return True
    return None


def _saved_tensor_summary(tensor: Any, names: dict[int, str], shape: list[int] | None = None) -> dict[str, Any]:
    """A light summary of a saved tensor: shape, dtype, small values, and its variable name if any."""
    numel = tensor.numel()
    values = None
    if numel <= SAVED_VALUE_LIMIT and why_no_values(tensor) is None:
        strided = tensor.layout is sys.modules["torch"].strided
        values = (values_of(tensor) if strided else tensor_values(tensor)).copy()  # a copy: the node keeps it
    return {
        "type": "Tensor",
        "shape": list(tensor.shape) if shape is None else shape,
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "numel": numel,
        "requires_grad": tensor.requires_grad,
        "values": values,
        "variable": names.get(id(tensor)),
    }


def _entry(name: str, value: Any = None, freed: bool = False, error: str | None = None) -> dict[str, Any]:
    return {"name": name, "value": value, "freed": freed, "error": error}


@functools.cache
def freed_entry(name: str) -> dict[str, Any]:
    """The entry of a saved attribute a backward freed: one object per name, shared by every node (never modified)."""
    return _entry(name, freed=True)


class SavedReader:
    """Reads what nodes saved for their backward, during one pause.

    Entries are plain data and never modified, so equal ones are shared: the weight saved by
    1,000 unrolled steps, or the same ``alpha`` of every addition, is one object, which the
    wire sends once (:mod:`app.pause_delta`). Shared tensors are held until the pause's reading
    ends, so an ``id`` cannot be reused by another tensor meanwhile.
    """

    def __init__(self, names: dict[int, str], constants: dict[tuple, dict[str, Any]] | None = None,
                 lasting: dict[tuple, tuple[Any, tuple, dict[str, Any]]] | None = None) -> None:
        self.names = names
        self._entries: dict[tuple, dict[str, Any]] = {}
        # Entries of saved values that hold no tensor (sizes, strides, alpha) depend on the value
        # only, so they may be kept from one pause to the next: every MmBackward0 saves its sizes.
        self._constants = {} if constants is None else constants
        # So may entries of large saved tensors (a weight each step of a loop saves), checked by a
        # weak reference and what their summary shows (see _lasting_entry).
        self._lasting = {} if lasting is None else lasting
        self._tensors: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._shapes: dict[tuple[int, ...], list[int]] = {}

    def shape(self, size: Any) -> list[int]:
        """``size`` as a list, one list object per distinct shape."""
        key = tuple(size)
        shared = self._shapes.get(key)
        if shared is None:
            shared = self._shapes[key] = list(key)
        return shared

    def entries(self, node: Any) -> tuple[list[dict[str, Any]], str | None]:
        """What ``node`` saved, and one attribute that held a live tensor (or None).

        Each entry is ``{"name", "value", "freed", "error"}``: ``freed`` once a backward released
        the tensors, ``error`` holds PyTorch's message when a saved tensor was modified in place.
        """
        if _is_custom(node):
            return self._custom_entries(node)
        entries: list[dict[str, Any]] = []
        live = None
        for attr, raw in _saved_layout(type(node)):
            try:
                value = getattr(node, attr)
            except RuntimeError as exc:  # freed by a backward, or modified in place since saved
                freed = raw is not None and _raw_empty(getattr(node, raw))
                entries.append(freed_entry(attr) if freed else _entry(attr, error=str(exc)))
                continue
            if live is None and raw is not None and value is not None and not _empty_sequence(value):
                live = attr
            entries.append(self._shared_entry(attr, value, raw is not None))
        return entries, live

    def _custom_entries(self, node: Any) -> tuple[list[dict[str, Any]], str | None]:
        attributes = {key: value for key, value in vars(node).items() if not key.startswith("_")}
        entries = [_entry(f"ctx.{key}", self.plain(value)) for key, value in attributes.items()]
        if released(node):
            return [freed_entry("saved_tensors"), *entries], None
        try:
            tensors = node.saved_tensors
        except RuntimeError as exc:
            return [_entry("saved_tensors", error=str(exc)), *entries], None
        saved = [_entry(f"saved_tensors[{i}]", self.plain(t)) for i, t in enumerate(tensors)]
        return saved + entries, "saved_tensors" if tensors else None

    def _shared_entry(self, attr: str, value: Any, holds_tensors: bool) -> dict[str, Any]:
        if not holds_tensors:
            key: tuple = (attr, type(value), value)
            table = self._constants
        elif isinstance(value, sys.modules["torch"].Tensor):
            key = (attr, id(value))  # by identity: comparing tensors by value is elementwise
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = self._lasting_entry(key, value)
            return entry
        else:
            return _entry(attr, self.plain(value))  # a list of tensors, or None
        try:
            entry = table.get(key)
        except TypeError:  # an unhashable value
            return _entry(attr, self.plain(value))
        if entry is None:
            if len(table) >= CONSTANT_ENTRIES:
                table.clear()
            entry = table[key] = _entry(attr, self.plain(value))
        return entry

    def _lasting_entry(self, key: tuple, tensor: Any) -> dict[str, Any]:
        """The entry of a saved tensor, the one of an earlier pause when it would show the same.

        Only entries without values are kept (over :data:`SAVED_VALUE_LIMIT` elements): values
        written through ``.data`` change without a version bump, and nothing else it shows does.
        """
        hit = self._lasting.get(key)
        if hit is not None and hit[0]() is tensor and hit[1] == self._shown(tensor):
            return hit[2]
        entry = _entry(key[0], self.plain(tensor))
        if entry["value"]["values"] is None:
            try:
                ref, shown = weakref.ref(tensor), self._shown(tensor)
            except (TypeError, RuntimeError):  # no weak reference to it; an inference tensor keeps no version
                return entry
            if len(self._lasting) >= CONSTANT_ENTRIES:
                self._lasting.clear()
            self._lasting[key] = (ref, shown, entry)
        return entry

    def _shown(self, tensor: Any) -> tuple:
        """What the entry of a saved tensor without values shows, beside its identity."""
        return tensor._version, tensor.requires_grad, tensor.shape, tensor.dtype, self.names.get(id(tensor))

    def plain(self, value: Any) -> Any:
        """A saved value as plain data: tensors summarised, numbers and size tuples as they are."""
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, (list, tuple)):
            return [self.plain(item) for item in value[:ITEM_LIMIT]]
        if isinstance(value, sys.modules["torch"].Tensor):
            hit = self._tensors.get(id(value))
            if hit is None:
                summary = _saved_tensor_summary(value, self.names, self.shape(value.shape))
                hit = self._tensors[id(value)] = (value, summary)
            return hit[1]
        return bounded_repr(value)


def still_saved(node: Any, attr: str) -> bool:
    """Whether the attribute that held a tensor when the node was first seen still does."""
    if attr == "saved_tensors":
        return released(node) is False
    return not _raw_empty(getattr(node, "_raw" + attr))


def output_shape(node: Any) -> list[int] | None:
    try:
        metadata = node._input_metadata  # describes the gradient the node receives: its forward output
    except (AttributeError, RuntimeError):
        return None
    return metadata[0].shape if metadata else None


def held_tensors(entry: dict[str, Any]) -> bool:
    value = entry["value"]
    if isinstance(value, list):
        return any(isinstance(item, dict) for item in value)
    return isinstance(value, dict)
