"""Plain-data summaries of lesson values: what crosses from the lesson process to the app.

Runs inside the lesson process. A summary is a dict of builtins and numpy arrays; no
torch object ever leaves this module. Tensor summaries are cached by identity and
version, so a tensor that did not change between pauses costs a dictionary lookup.
"""

from __future__ import annotations

import math
import sys
import weakref
from typing import Any

import numpy as np

#: Tensors with more elements than this send a sample of their values, not all of them.
VALUE_LIMIT = 10_000
#: Items of a list, tuple, dict or set summarised before the rest is counted only.
ITEM_LIMIT = 20
#: Characters of ``repr`` kept for values of other types.
REPR_LIMIT = 300
#: How deep containers nest before their items are only counted.
DEPTH_LIMIT = 3


def _torch():
    """The lesson's torch module, or None when the lesson never imported it."""
    return sys.modules.get("torch")


def bounded_repr(value: Any, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters; a failing ``repr`` is described, not raised."""
    try:
        text = repr(value)
    except Exception as exc:  # a lesson's broken __repr__ must not break the pause
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def tensor_values(tensor: Any) -> np.ndarray:
    """All of a tensor's values as a numpy array (bfloat16 and friends widened to float32)."""
    torch = _torch()
    data = tensor.detach()
    if data.is_sparse or getattr(data, "is_quantized", False):
        data = data.to_dense() if data.is_sparse else data.dequantize()
    if data.dtype in (torch.bfloat16, torch.float16) or str(data.dtype).startswith("torch.float8"):
        data = data.float()
    if data.is_conj():
        data = data.resolve_conj()
    return data.cpu().numpy()


def _stats(values: np.ndarray) -> dict[str, Any]:
    """min/max/mean/std over the finite values, and how many are NaN or infinite.

    Uses the ufunc reductions directly: ``np.std`` and friends cost ~10x more on the small
    tensors of a lesson, and a stepped line summarises every operation's result.
    """
    out: dict[str, Any] = {"min": None, "max": None, "mean": None, "std": None, "nan": 0, "inf": 0}
    if values.size == 0 or values.dtype.kind in "cOUS":
        return out
    flat = values.reshape(-1)
    if flat.dtype.kind == "f":
        finite = np.isfinite(flat)
        if not finite.all():
            nan = np.isnan(flat)
            out["nan"] = int(np.count_nonzero(nan))
            out["inf"] = int(flat.size - np.count_nonzero(finite) - out["nan"])
            flat = flat[finite]
        if flat.size == 0:
            return out
    as_float = flat.astype(np.float64, copy=False)
    size = as_float.size
    mean = np.add.reduce(as_float) / size
    out["min"] = float(np.minimum.reduce(as_float))
    out["max"] = float(np.maximum.reduce(as_float))
    out["mean"] = float(mean)
    if size > 1:
        deviation = as_float - mean
        out["std"] = math.sqrt(float(np.dot(deviation, deviation)) / (size - 1))
    else:
        out["std"] = 0.0
    return out


def _sample(values: np.ndarray, limit: int) -> np.ndarray:
    """Evenly spaced values of the flattened array, ``limit`` of them."""
    flat = values.reshape(-1)
    idx = np.linspace(0, flat.size - 1, num=limit).astype(np.int64)
    return flat[idx]


class TensorSummarizer:
    """Summarises tensors, reusing the summary of a tensor whose data did not change.

    A tensor is unchanged when it is the same object with the same ``_version``, the same
    ``requires_grad`` and ``grad_fn``, and a ``.grad`` that is itself unchanged.
    """

    def __init__(self, value_limit: int = VALUE_LIMIT) -> None:
        self.value_limit = value_limit
        self._cache: dict[int, tuple[weakref.ref, tuple, dict]] = {}

    def _key(self, tensor: Any) -> tuple:
        grad = tensor.grad if tensor.is_leaf else None
        return (
            version_of(tensor),
            tensor.requires_grad,
            id(tensor.grad_fn),
            tensor.shape,
            None if grad is None else (id(grad), version_of(grad)),
            tensor.retains_grad,
        )

    def summarize(self, tensor: Any) -> dict[str, Any]:
        """The summary dict of one tensor (see the README's trace format)."""
        key = self._key(tensor)
        hit = self._cache.get(id(tensor))
        if hit is not None and hit[0]() is tensor and hit[1] == key:
            return hit[2]
        summary = self._build(tensor)
        key_id = id(tensor)
        try:
            ref = weakref.ref(tensor, lambda _ref: self._cache.pop(key_id, None))
        except TypeError:
            return summary
        self._cache[key_id] = (ref, key, summary)
        return summary

    def _build(self, tensor: Any) -> dict[str, Any]:
        torch = _torch()
        grad_fn = tensor.grad_fn
        summary: dict[str, Any] = {
            "type": "Parameter" if isinstance(tensor, torch.nn.Parameter) else "Tensor",
            "shape": [int(d) for d in tensor.shape],
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "device": str(tensor.device),
            "requires_grad": bool(tensor.requires_grad),
            "is_leaf": bool(tensor.is_leaf),
            "grad_fn": node_name(grad_fn) if grad_fn is not None else None,
            "retains_grad": bool(tensor.retains_grad),
            "version": version_of(tensor),
            "is_inference": bool(tensor.is_inference()),
            "numel": int(tensor.numel()),
            "nbytes": int(tensor.numel() * tensor.element_size()),
            "is_parameter": isinstance(tensor, torch.nn.Parameter),
            "id": id(tensor),
        }
        if tensor.device.type == "meta":
            summary.update(values=None, sampled=False, min=None, max=None, mean=None, std=None, nan=0, inf=0)
        else:
            values = tensor_values(tensor)
            summary.update(_stats(values))
            if values.size > self.value_limit:
                summary["values"] = _sample(values, self.value_limit)
                summary["sampled"] = True
            else:
                summary["values"] = values
                summary["sampled"] = False
        grad = tensor.grad if tensor.is_leaf else None
        summary["grad"] = self.summarize(grad) if grad is not None else None
        return summary


def version_of(tensor: Any) -> int | None:
    """A tensor's ``_version``; None for inference tensors, which keep no version counter."""
    return None if tensor.is_inference() else int(tensor._version)


def node_name(node: Any) -> str:
    """An autograd node's name as a learner reads it (``AccumulateGrad``, not ``torch::autograd::AccumulateGrad``)."""
    name = node.name()
    return name.rsplit("::", 1)[-1]


class Summarizer:
    """Turns any lesson value into a bounded plain-data summary."""

    def __init__(self, value_limit: int = VALUE_LIMIT) -> None:
        self.tensors = TensorSummarizer(value_limit)

    def summarize(self, value: Any, depth: int = 0) -> dict[str, Any]:
        """Summary of ``value``: always a dict with at least ``type``, even when reading it fails.

        A half-built object (a module stepped before ``super().__init__()``) must not cost
        the learner the pause, so a failure is described in ``repr`` instead.
        """
        try:
            return self._summarize(value, depth)
        except Exception as exc:
            return {"type": type(value).__name__,
                    "repr": f"<cannot be shown yet: {type(exc).__name__}: {bounded_repr(exc, 200)}>"}

    def _summarize(self, value: Any, depth: int) -> dict[str, Any]:
        torch = _torch()
        if torch is not None:
            if isinstance(value, torch.Tensor):
                return self.tensors.summarize(value)
            if isinstance(value, torch.nn.Module):
                return self._module(value)
            if isinstance(value, torch.nn.utils.rnn.PackedSequence):
                return self._packed(value, depth)
        if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
            return self._scalar(value)
        if isinstance(value, (list, tuple, set, frozenset, dict)) and depth < DEPTH_LIMIT:
            return self._container(value, depth)
        return {"type": type(value).__name__, "repr": bounded_repr(value)}

    def _scalar(self, value: Any) -> dict[str, Any]:
        out = {"type": type(value).__name__, "repr": bounded_repr(value)}
        if isinstance(value, (bool, int, str)) or value is None:
            out["value"] = value if not isinstance(value, str) or len(value) <= REPR_LIMIT else out["repr"]
        elif isinstance(value, float):
            out["value"] = value if math.isfinite(value) else repr(value)
        return out

    def _container(self, value: Any, depth: int) -> dict[str, Any]:
        if isinstance(value, dict):
            pairs = list(value.items())[:ITEM_LIMIT]
            items = [[bounded_repr(k, 60), self.summarize(v, depth + 1)] for k, v in pairs]
        else:
            seq = value if isinstance(value, (list, tuple)) else sorted(value, key=repr)
            items = [self.summarize(v, depth + 1) for v in list(seq)[:ITEM_LIMIT]]
        return {
            "type": type(value).__name__,
            "repr": bounded_repr(value),
            "length": len(value),
            "items": items,
        }

    def _module(self, module: Any) -> dict[str, Any]:
        params = []
        for name, p in list(module.named_parameters())[:200]:
            params.append(
                {
                    "name": name,
                    "shape": [int(d) for d in p.shape],
                    "requires_grad": bool(p.requires_grad),
                    "has_grad": p.grad is not None,
                    "summary": self.tensors.summarize(p),
                }
            )
        return {
            "type": type(module).__name__,
            "module": True,
            "training": bool(module.training),
            "parameters": params,
            "repr": bounded_repr(module, 2000),
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
