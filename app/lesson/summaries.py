"""Plain-data summaries of lesson values: what crosses from the lesson process to the app.

Runs inside the lesson process. A summary is a dict of builtins and numpy arrays; no
torch object ever leaves this module. Tensor summaries are cached by identity and
version, so a tensor that did not change between pauses costs a dictionary lookup.
Every summary is bounded in the memory and time it takes, whatever the value: see
:mod:`app.lesson.tensor_reading` for tensors and :mod:`app.lesson.bounded_repr` for everything shown as text.
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import Any

from app.lesson.bounded_repr import BUDGET, REPR_LIMIT, bounded_repr, timed
from app.lesson.object_reads import (
    container_base,
    first_items,
    is_a,
    is_mock,
    length,
    mock_repr,
    module_tensors,
    own_dict,
)
from app.lesson.tensor_reading import (
    NO_STATS,
    SPARSE_LAYOUTS,
    gather,
    layout_name,
    numpy_stats,
    sample_indices,
    shape_of,
    sparse_summary,
    strided_stats,
    tensor_values,
    values_of,
    why_no_values,
)

__all__ = ["DEPTH_LIMIT", "ITEM_LIMIT", "REPR_LIMIT", "VALUE_LIMIT", "Summarizer", "TensorSummarizer",
           "bounded_repr", "node_name", "tensor_values", "version_of"]

#: Tensors with more elements than this send a sample of their values, not all of them.
VALUE_LIMIT = 10_000
#: Items of a list, tuple, dict or set summarised before the rest is counted only.
ITEM_LIMIT = 20
#: How deep containers nest before their items are only counted.
DEPTH_LIMIT = 3
#: Parameters of a module listed; beyond, they are counted only.
PARAMETER_LIMIT = 200
#: Sets up to this size list their items sorted by repr; larger ones in iteration order.
SORTED_SET_LIMIT = 200
#: Lines of a module's structure shown in its repr.
MODULE_REPR_LINES = 40
#: Settings of an optimizer's first parameter group sent (``lr``, ``momentum``…); the rest are left out.
OPTIMIZER_SETTINGS = 12

def _torch():
    """The lesson's torch module, or None when the lesson never imported it."""
    return sys.modules.get("torch")


class TensorSummarizer:
    """Summarises tensors, reusing the summary of a tensor whose data did not change.

    A tensor is unchanged when it is the same object with the same ``_version``, the same
    ``requires_grad``, ``retains_grad``, ``grad_fn`` and shape, and the same ``.grad`` object
    with the same ``_version``. A summary whose tensor or ``.grad`` has died (so that its id
    may name another object) is never handed back: both are held by weak reference and
    compared by identity. A hit costs a dict lookup and a few attribute reads, at every
    step of a recording for every tensor in scope.
    """

    def __init__(self, value_limit: int = VALUE_LIMIT) -> None:
        self.value_limit = value_limit
        # id(tensor) -> (weakref to it, its key, weakref to its .grad or None, summary, the arrays whose
        # contents a hit compares or None, those contents)
        self._cache: dict[int, tuple[weakref.ref, tuple, weakref.ref | None, dict, tuple | None, Any]] = {}

    def summarize(self, tensor: Any) -> dict[str, Any]:
        """The summary dict of one tensor (see the README's trace format)."""
        # The cache check runs for every tensor in scope at every step of a recording: inlined,
        # and a leaf's grad_fn (None) and retains_grad (which retain_grad() leaves as it is on a
        # leaf) are not read, nor is is_leaf of a tensor that needs no grad (always a leaf).
        requires_grad = tensor.requires_grad
        if not requires_grad or tensor.is_leaf:
            retains, node = False, _NO_NODE
            grad = tensor.grad
        else:
            retains, node = tensor.retains_grad, id(tensor.grad_fn)
            grad = tensor.grad if retains else None  # as own_grad()
        try:
            version = tensor._version
        except RuntimeError:  # an inference tensor keeps no version counter
            version = None
        if grad is None:
            grad_version = None
        else:
            try:
                grad_version = grad._version
            except RuntimeError:
                grad_version = -1
        try:
            shape = tensor.shape  # asked first, not is_nested: one getter fewer for every other tensor
        except RuntimeError:  # a strided nested tensor has no sizes
            shape = None
        key = (version, requires_grad, retains, node, shape, grad_version)
        key_id = id(tensor)
        hit = self._cache.get(key_id)
        if hit is not None and hit[0]() is tensor and hit[1] == key:
            grad_ref = hit[2]
            if (grad is None) if grad_ref is None else (grad_ref() is grad):
                if not hit[4] or _contents(hit[4]) == hit[5]:
                    return hit[3]
                if grad is not None:  # values changed without a version bump, maybe the .grad's
                    self._cache.pop(id(grad), None)
        summary = self._build(tensor)
        try:
            ref = weakref.ref(tensor, lambda _ref: self._cache.pop(key_id, None))
            grad_ref = None if grad is None else weakref.ref(grad)
        except TypeError:
            return summary
        watched = _watched(summary) if summary["requires_grad"] or grad is not None else None
        self._cache[key_id] = (ref, key, grad_ref, summary, watched, None if watched is None else _contents(watched))
        return summary

    def _build(self, tensor: Any) -> dict[str, Any]:
        torch = _torch()
        grad_fn = tensor.grad_fn
        numel = int(tensor.numel())
        parameter = isinstance(tensor, torch.nn.Parameter)  # a Python-level isinstance hook: asked once
        summary: dict[str, Any] = {
            "type": "Parameter" if parameter else "Tensor",
            "shape": shape_of(tensor),
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "layout": layout_name(tensor),
            "device": str(tensor.device),
            "requires_grad": bool(tensor.requires_grad),
            "is_leaf": bool(tensor.is_leaf),
            "grad_fn": node_name(grad_fn) if grad_fn is not None else None,
            "retains_grad": bool(tensor.retains_grad),
            "version": version_of(tensor),
            "is_inference": bool(tensor.is_inference()),
            "numel": numel,
            "nbytes": numel * tensor.element_size(),
            "is_parameter": parameter,
            "id": id(tensor),
        }
        summary.update(self._values(tensor, summary["layout"], numel))
        grad = own_grad(tensor)
        summary["grad"] = self.summarize(grad) if grad is not None else None
        return summary

    def _values(self, tensor: Any, layout: str, numel: int) -> dict[str, Any]:
        """The value fields: all values, a sample, sparse entries, or words saying why there are none."""
        reason = why_no_values(tensor)
        if reason is not None:
            return {"values": None, "sampled": False, **NO_STATS, "why_no_values": reason}
        if layout in SPARSE_LAYOUTS:
            out = sparse_summary(tensor)
            out.update(values=None, sampled=False, why_no_values=(
                f"a {layout.removeprefix('sparse_').upper()} sparse tensor stores {out['nnz']:,} of its "
                f"{numel:,} elements: they are shown as (index, value) entries, not as a dense copy"))
            return out
        if numel <= self.value_limit:
            values = values_of(tensor)
            return {"values": values, "sampled": False, **numpy_stats(values), "stats_sampled": False}
        stats, from_sample = strided_stats(tensor)
        return {"values": gather(tensor, sample_indices(numel, self.value_limit)), "sampled": True,
                **stats, "stats_sampled": from_sample}


_NO_NODE = id(None)  # the grad_fn of a leaf, in a summary's cache key

#: Tensors up to this many elements have their values compared at every cache hit (see :func:`_contents`).
WATCHED_LIMIT = 4096


def _watched(summary: dict[str, Any]) -> tuple[Any, ...]:
    """The value arrays of a tensor summary, and of its ``.grad``'s, that a cache hit checks (see :func:`_contents`)."""
    arrays = []
    for part in (summary, summary["grad"]):
        if part is not None and part["values"] is not None and part["numel"] <= WATCHED_LIMIT:
            arrays.append(part["values"])
    return tuple(arrays)


def _contents(arrays: tuple[Any, ...]) -> bytes | tuple[bytes, ...]:
    """The bytes of the values a tensor summary shows, and of those of its ``.grad``, as they are now.

    ``arrays`` are the summary's :func:`_watched` ones. A small tensor's ``values`` is a view of
    the tensor's memory, so this reads the tensor again. Writes through ``.data``
    (``w.data -= lr * w.grad``, ``w.grad.data.zero_()``) or through a numpy view change values
    without bumping ``_version``; comparing these bytes with the ones kept at the summary's
    making is how a cache hit notices them (exactly, and at a third of the cost of hashing
    them). It is checked for the tensors those idioms are about, the ones that require grad or
    have a ``.grad`` (a few per lesson: checking every tensor in scope cost a recording 7%
    more). Larger tensors keep a sample, which is a copy: such writes to them are not seen
    until the version changes.
    """
    if len(arrays) == 1:
        return arrays[0].tobytes()
    return tuple(values.tobytes() for values in arrays)


def own_grad(tensor: Any) -> Any:
    """The ``.grad`` autograd keeps for a tensor: a leaf's, or a non-leaf's after ``retain_grad()``.

    Any other non-leaf has none, and reading it would warn in the lesson's output.
    """
    return tensor.grad if tensor.is_leaf or tensor.retains_grad else None


def version_of(tensor: Any) -> int | None:
    """A tensor's ``_version``; None for inference tensors, which keep no version counter."""
    return None if tensor.is_inference() else int(tensor._version)


def node_name(node: Any) -> str:
    """An autograd node's name as a learner reads it (``AccumulateGrad``, not ``torch::autograd::AccumulateGrad``)."""
    name = node.name()
    return name.rsplit("::", 1)[-1]


#: Scalars of these exact types have a summary that depends on their value only, so equal ones share it.
_SCALAR_TYPES = frozenset({int, bool, str, float, type(None)})
#: Longest string whose summary is shared.
_SCALAR_TEXT = 1000
#: Distinct scalar summaries kept; the table starts afresh when it is full.
SCALAR_LIMIT = 4096


def unreadable(value: Any, exc: Exception) -> dict[str, Any]:
    """The summary of a value whose reading raised ``exc``."""
    return {"type": type(value).__name__,
            "repr": f"<cannot be shown yet: {type(exc).__name__}: {bounded_repr(exc, 200)}>"}


def _scalar_key(value: Any) -> tuple | None:
    """What makes two scalars' summaries equal: type and value (and a float's sign: ``-0.0 == 0.0``)."""
    kind = type(value)
    if kind is float:
        return (kind, value, math.copysign(1.0, value))
    if kind is str and len(value) > _SCALAR_TEXT:
        return None
    return (kind, value)


class Summarizer:
    """Turns any lesson value into a bounded plain-data summary.

    Equal builtin scalars get the very same summary dict, and so does an unchanged tensor
    (:class:`TensorSummarizer`): a pause's summaries that are the previous pause's objects are
    not sent again (:mod:`app.pause_delta`). Summaries are shared, so nobody may modify one.
    """

    def __init__(self, value_limit: int = VALUE_LIMIT) -> None:
        self.tensors = TensorSummarizer(value_limit)
        self._scalars: dict[tuple, dict[str, Any]] = {}
        self._tensor_type: type | None = None  # torch.Tensor, once the lesson has shown one

    @property
    def tensor_type(self) -> type | None:
        """``torch.Tensor`` once a tensor was summarised (exactly of that type, a value needs no other check)."""
        return self._tensor_type

    def summarize(self, value: Any, depth: int = 0) -> dict[str, Any]:
        """Summary of ``value``: always a dict with at least ``type``, even when reading it fails.

        A half-built object (a module stepped before ``super().__init__()``) must not cost
        the learner the pause, so a failure is described in ``repr`` instead. Nothing here
        calls the value's own methods except its ``repr`` (bounded in time, see
        :mod:`app.lesson.bounded_repr`): kinds, items and parameters are read as
        :mod:`app.lesson.object_reads` reads them.
        """
        kind = type(value)
        if kind is self._tensor_type:  # a plain tensor, the common case: no isinstance hooks to run
            try:
                return self.tensors.summarize(value)
            except Exception as exc:
                return unreadable(value, exc)
        if kind in _SCALAR_TYPES:
            key = _scalar_key(value)
            if key is not None:
                summary = self._scalars.get(key)
                if summary is None:
                    if len(self._scalars) >= SCALAR_LIMIT:
                        self._scalars.clear()
                    summary = self._scalars[key] = self._scalar(value)
                return summary
        try:
            if is_mock(value):  # every attribute of it exists and is another mock: read none
                return {"type": kind.__name__, "repr": mock_repr(value), "mock": True}
            torch = _torch()
            if torch is not None and issubclass(kind, torch.Tensor):
                self._tensor_type = torch.Tensor
                return self.tensors.summarize(value)
            return self._summarize(value, depth)
        except Exception as exc:
            return unreadable(value, exc)

    def _summarize(self, value: Any, depth: int) -> dict[str, Any]:
        torch = _torch()
        if torch is not None:
            if is_a(value, torch.nn.Module):
                return self._module(value)
            if is_a(value, torch.nn.utils.rnn.PackedSequence):
                return self._packed(value, depth)
            optim = sys.modules.get("torch.optim")
            if optim is not None and is_a(value, optim.Optimizer):
                return _optimizer(value)
        if is_a(value, (bool, int, float, complex, str, bytes, type(None))):
            return self._scalar(value)
        base = container_base(value)
        if base is not None and depth < DEPTH_LIMIT:
            return self._container(value, base, depth)
        return {"type": type(value).__name__, "repr": bounded_repr(value)}

    def _scalar(self, value: Any) -> dict[str, Any]:
        out = {"type": type(value).__name__, "repr": bounded_repr(value)}
        if isinstance(value, (bool, int, str)) or value is None:
            out["value"] = value if not isinstance(value, str) or len(value) <= REPR_LIMIT else out["repr"]
        elif isinstance(value, float):
            out["value"] = value if math.isfinite(value) else repr(value)
        return out

    def new_pause(self) -> None:
        """A pause starts: its slow reprs get a fresh time budget."""
        BUDGET.new_pause()

    def _container(self, value: Any, base: type, depth: int) -> dict[str, Any]:
        """A list, tuple, dict or set, or a subclass of one, read as the builtin stores it (see
        :mod:`app.lesson.object_reads`): a subclass's ``__iter__`` or ``__len__`` never runs."""
        count = length(value, base)
        if base is dict:
            pairs = first_items(value, dict, ITEM_LIMIT)
            items = [[bounded_repr(k, 60), self.summarize(v, depth + 1)] for k, v in pairs]
        else:
            if base is list or base is tuple or count > SORTED_SET_LIMIT:
                seq = first_items(value, base, ITEM_LIMIT)
            else:
                seq = sorted(first_items(value, base, SORTED_SET_LIMIT), key=bounded_repr)[:ITEM_LIMIT]
            items = [self.summarize(v, depth + 1) for v in seq]
        return {
            "type": type(value).__name__,
            "repr": bounded_repr(value),
            "length": count,
            "items": items,
        }

    def _module(self, module: Any) -> dict[str, Any]:
        """A module's registered parameters, read from its ``_parameters`` tables, not through
        ``named_parameters()``, which a lesson may override (see :mod:`app.lesson.object_reads`)."""
        params = []
        listed, count, partial = module_tensors(module, "_parameters", PARAMETER_LIMIT)
        torch = _torch()
        for name, p in listed:
            if not is_a(p, torch.Tensor):
                continue
            params.append(
                {
                    "name": name,
                    "shape": shape_of(p),
                    "requires_grad": bool(p.requires_grad),
                    "has_grad": p.grad is not None,
                    "summary": self.tensors.summarize(p),
                }
            )
        return {
            "type": type(module).__name__,
            "module": True,
            "training": own_dict(module).get("training") is True,
            "parameters": params,
            "parameter_count": count,
            "parameters_cut": partial or count > len(params),
            "repr": module_repr(module),
        }

    def _packed(self, packed: Any, depth: int) -> dict[str, Any]:
        def opt(t: Any) -> dict[str, Any] | None:
            return None if t is None else self.tensors.summarize(t)

        return {
            "type": "PackedSequence",
            "data": self.tensors.summarize(packed.data),
            "batch_sizes": opt(packed.batch_sizes),
            "sorted_indices": opt(packed.sorted_indices),
            "unsorted_indices": opt(packed.unsorted_indices),
            "repr": bounded_repr(packed),
        }


def _optimizer(optimizer: Any) -> dict[str, Any]:
    """An optimizer's settings and how many tensors it updates, read from the ``param_groups`` list its
    ``__init__`` stored (never through a method or property a lesson may override), and its bounded repr."""
    groups = own_dict(optimizer).get("param_groups")
    groups = [g for g in first_items(groups, list, 1000) if type(g) is dict] if type(groups) is list else []
    tensors = sum(length(g["params"], list) for g in groups if type(dict.get(g, "params")) is list)
    settings = [[key, bounded_repr(value, 40)] for key, value in first_items(groups[0], dict, 100)
                if key != "params" and type(key) is str and value is not None][:OPTIMIZER_SETTINGS] if groups else []
    return {"type": type(optimizer).__name__, "repr": bounded_repr(optimizer),
            "optimizer": {"groups": len(groups), "tensors": tensors, "settings": settings}}


def module_repr(module: Any, limit: int = 2000) -> str:
    """A module's repr as ``nn.Module`` prints it, built only as far as :data:`MODULE_REPR_LINES` lines.

    A module that defines its own ``__repr__`` gets a bounded call of it instead.
    """
    torch = _torch()
    if type(module).__repr__ is not torch.nn.Module.__repr__:
        return bounded_repr(module, limit)
    text = timed(_module_lines, module)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _module_lines(module: Any) -> str:
    lines: list[str] = []

    def add(mod: Any, prefix: str, indent: str) -> bool:
        """Append ``mod``'s lines; False once the line budget is spent."""
        if len(lines) >= MODULE_REPR_LINES:
            lines.append(indent + "…")
            return False
        head = f"{indent}{prefix}{type(mod).__name__}({mod.extra_repr()}"
        children = [(name, child) for name, child in mod._modules.items() if child is not None]
        if not children:
            lines.append(head + ")")
            return True
        lines.append(head)
        for name, child in children:
            if not add(child, f"({name}): ", indent + "  "):
                return False
        lines.append(indent + ")")
        return True

    add(module, "", "")
    return "\n".join(lines)
