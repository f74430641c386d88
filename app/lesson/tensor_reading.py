"""Reading a tensor's values within a bound: samples, statistics, sparse entries (runs in the lesson process).

Metadata is free; values cost memory and time. Nothing here makes a dense copy of a sparse
tensor or materialises an expanded view: large tensors are read by gathering a bounded
set of elements, statistics are computed chunk by chunk, and tensors whose values cannot
be read without running the lesson's code (wrapper subclasses, fake and meta tensors,
nested tensors) are described in words instead.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

#: Elements read at a time for exact statistics (8 MB as float64).
CHUNK = 1 << 20
#: Up to this many elements, statistics are exact; beyond, they come from a sample.
EXACT_STATS_LIMIT = 1 << 26
#: Elements gathered for sampled statistics.
STATS_SAMPLE = 1 << 17
#: Stored entries of a sparse tensor sent as (index, value) pairs.
ENTRY_LIMIT = 20
#: Elements beyond which the inspector's full-values request refuses to densify or materialise.
FULL_VALUES_LIMIT = 1 << 24

#: The statistics fields of a tensor whose values are not read.
NO_STATS = {"min": None, "max": None, "mean": None, "std": None, "nan": 0, "inf": 0}

SPARSE_LAYOUTS = ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc")


class ValuesUnavailable(ValueError):
    """A tensor's values cannot be read, or not all of them at once; the message says why."""


def layout_name(tensor: Any) -> str:
    return str(tensor.layout).removeprefix("torch.")


def shape_of(tensor: Any) -> list[int | str]:
    """The shape as plain data; a ragged dimension of a nested tensor is a string (``"j1"``, ``"*"``)."""
    try:
        return [d if type(d) is int else str(d) for d in tensor.shape]
    except RuntimeError:  # a strided nested tensor: one shape per component
        sizes = tensor._nested_tensor_size()
        rest = [int(col[0]) if bool((col == col[0]).all()) else "*" for col in sizes.unbind(1)]
        return [int(tensor.size(0)), *rest]


def why_no_values(tensor: Any) -> str | None:
    """Why a tensor's values are not shown, in words; None when they can be read."""
    cls = type(tensor)
    kind = cls.__name__
    if tensor.is_nested:
        return ("a nested tensor holds tensors of different shapes, which do not form one "
                "array: its values are not shown")
    if tensor.is_meta:  # not device.type: a device object is made at each read
        return "a meta tensor has a shape and a dtype but no data"
    torch = sys.modules["torch"]
    if cls is torch.Tensor:  # fake tensors and __torch_dispatch__ wrappers are subclasses
        return None
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    if fake is not None and isinstance(tensor, fake.FakeTensor):
        return ("a fake tensor (made under FakeTensorMode, as torch.compile does) has a shape and "
                "a dtype but no data")
    if torch._C._dispatch_keys(tensor).has(torch._C.DispatchKey.Python):
        return (f"a {kind} is a tensor subclass with its own __torch_dispatch__: reading its "
                "values would run the lesson's code, so they are not shown")
    return None


def _to_numpy(tensor: Any) -> np.ndarray:
    """A small tensor's values as numpy (bfloat16, float16 and float8 widened to float32)."""
    data = tensor.detach() if tensor.requires_grad else tensor  # numpy() refuses a tensor that requires grad
    if data.is_cpu and _numpy_native(data.dtype):  # the common case: nothing to dequantize, widen or conjugate
        return data.numpy()
    if getattr(data, "is_quantized", False):
        data = data.dequantize()
    if _widened(data.dtype):
        data = data.float()
    if data.is_conj():
        data = data.resolve_conj()
    return data.cpu().numpy()


_WIDENED: dict[Any, bool] = {}
_NATIVE: dict[Any, bool] = {}


def _numpy_native(dtype: Any) -> bool:
    """Whether numpy holds ``dtype`` as it is: real, unquantized and not widened (``.numpy()`` reads it straight)."""
    native = _NATIVE.get(dtype)
    if native is None:
        torch = sys.modules["torch"]
        native = _NATIVE[dtype] = dtype in (torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
                                            torch.int64, torch.uint8, torch.bool)
    return native


def _widened(dtype: Any) -> bool:
    """Whether numpy lacks ``dtype`` and its values are shown as float32 (bfloat16, float16, float8)."""
    widened = _WIDENED.get(dtype)
    if widened is None:
        torch = sys.modules["torch"]
        widened = _WIDENED[dtype] = dtype in (torch.bfloat16, torch.float16) or str(dtype).startswith("torch.float8")
    return widened


def _flat_view(tensor: Any) -> Any | None:
    """A 1-D view holding exactly the tensor's elements (in storage order), or None for an
    overlapping or gappy view, whose elements are not one stretch of storage."""
    if tensor.is_contiguous():
        return tensor.reshape(-1)
    expected = 1
    for stride, size in sorted((st, sz) for st, sz in zip(tensor.stride(), tensor.shape, strict=True) if sz != 1):
        if stride != expected:
            return None
        expected *= size
    return tensor.as_strided((tensor.numel(),), (1,), tensor.storage_offset())


def sample_indices(numel: int, count: int) -> np.ndarray:
    """``count`` evenly spaced flat indices from 0 to ``numel - 1``, both ends included."""
    return np.linspace(0, numel - 1, num=count).astype(np.int64)


def _numpy_view(tensor: Any) -> np.ndarray | None:
    """A zero-copy numpy view of a CPU tensor (strides kept, an expanded view stays 4 bytes),
    or None when numpy cannot view its dtype or layout.

    numpy, not torch, does the engine's arithmetic on large values: on this kind of machine
    torch's elementwise kernels cost 20-80x numpy's per call for a million elements.
    """
    data = tensor.detach()
    if data.device.type != "cpu" or getattr(data, "is_quantized", False) or data.is_conj() or data.is_neg():
        return None
    try:
        return data.numpy()
    except (TypeError, RuntimeError):  # bfloat16, float8 and other dtypes numpy does not have
        return None


def _chunk_numpy(chunk: Any) -> np.ndarray:
    """A piece of a tensor as numpy, viewed when possible, else widened to float32 (or resolved)."""
    view = _numpy_view(chunk)
    return view if view is not None else _to_numpy(chunk)


def gather(tensor: Any, flat_indices: np.ndarray) -> np.ndarray:
    """The elements at ``flat_indices`` (row-major) of a strided tensor, without materialising it."""
    view = _numpy_view(tensor)
    if view is not None:
        return view[np.unravel_index(flat_indices, view.shape)]
    torch = sys.modules["torch"]
    data = tensor.detach()
    if getattr(data, "is_quantized", False):
        data = data.dequantize()
    index = torch.from_numpy(flat_indices)
    if data.is_contiguous():
        return _to_numpy(data.reshape(-1)[index])
    return _to_numpy(data[torch.unravel_index(index, data.shape)])


def values_of(tensor: Any) -> np.ndarray:
    """All values of a small strided tensor, in its shape."""
    return _to_numpy(tensor)


# ---- statistics ---------------------------------------------------------------------------

class Moments:
    """Count, mean, sum of squared deviations, min and max, combinable (Chan et al.) chunk by chunk."""

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min = math.inf
        self.max = -math.inf
        self.nan = 0
        self.inf = 0

    def add(self, n: int, mean: float, m2: float, low: float, high: float) -> None:
        if n == 0:
            return
        total = self.n + n
        delta = mean - self.mean
        self.mean += delta * n / total
        self.m2 += m2 + delta * delta * self.n * n / total
        self.n = total
        self.min = min(self.min, low)
        self.max = max(self.max, high)

    def add_chunk(self, chunk: np.ndarray) -> None:
        """Fold in a 1-D array's finite values, counting its NaN and infinities."""
        if chunk.size == 0:
            return
        if chunk.dtype.kind == "b":
            chunk = chunk.view(np.uint8)
        low, high = chunk.min(), chunk.max()
        if chunk.dtype.kind == "f" and not (np.isfinite(low) and np.isfinite(high)):
            nan, inf = np.isnan(chunk), np.isinf(chunk)
            self.nan += int(nan.sum())
            self.inf += int(inf.sum())
            chunk = chunk[~(nan | inf)]
            if chunk.size == 0:
                return
            low, high = chunk.min(), chunk.max()
        # Sums around the chunk's first value: one float64 copy and two passes, where
        # ``var`` would take five; the shift keeps the sum of squares from cancelling.
        shifted = chunk.astype(np.float64)
        shift = float(shifted[0])
        shifted -= shift
        total = float(shifted.sum())
        squares = float(np.einsum("i,i->", shifted, shifted))
        n = chunk.size
        self.add(n, shift + total / n, max(squares - total * total / n, 0.0), float(low), float(high))

    def stats(self) -> dict[str, Any]:
        """The summary's ``min``/``max``/``mean``/``std`` (ddof=1) and ``nan``/``inf`` fields."""
        out: dict[str, Any] = {"min": None, "max": None, "mean": None, "std": None,
                               "nan": self.nan, "inf": self.inf}
        if self.n:
            out.update(min=float(self.min), max=float(self.max), mean=float(self.mean),
                       std=math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0)
        return out


#: Arrays up to this size get their statistics from a Python list: a dozen numpy calls cost more.
SMALL_STATS = 64


def numpy_stats(values: np.ndarray) -> dict[str, Any]:
    """Statistics over an array already in hand (a small tensor's values or a sample)."""
    if values.size == 0 or values.dtype.kind in "cOUS":
        return dict(NO_STATS)
    if values.size <= SMALL_STATS:
        stats = _small_stats(values.ravel().tolist())
        if stats is not None:
            return stats
    moments = Moments()
    moments.add_chunk(values.reshape(-1))
    return moments.stats()


def _small_stats(items: list) -> dict[str, Any] | None:
    """:meth:`Moments.stats` of a few finite numbers, with exactly rounded sums (``math.fsum``);
    None when one is NaN or infinite, which the chunked path counts apart."""
    try:
        total = math.fsum(items)
    except OverflowError:  # finite values whose sum overflows float64
        return None
    if not math.isfinite(total):
        return None
    n = len(items)
    mean = total / n
    m2 = math.fsum([(v - mean) * (v - mean) for v in items]) if n > 1 else 0.0
    return {"min": float(min(items)), "max": float(max(items)), "mean": mean,
            "std": math.sqrt(m2 / (n - 1)) if n > 1 else 0.0, "nan": 0, "inf": 0}


def strided_stats(tensor: Any) -> tuple[dict[str, Any], bool]:
    """Statistics of a large strided tensor and whether they come from a sample.

    Exact, chunk by chunk, when its elements are one stretch of storage of bounded size;
    otherwise (an expanded or sliced view, a huge tensor) from an evenly spaced sample.
    """
    data = tensor.detach()
    flat = _flat_view(data) if data.numel() <= EXACT_STATS_LIMIT else None
    if flat is None:
        return numpy_stats(gather(data, sample_indices(data.numel(), STATS_SAMPLE))), True
    if data.is_complex():  # no order, so no min or max: complex tensors have no stats
        return dict(NO_STATS), False
    moments = Moments()
    for start in range(0, flat.numel(), CHUNK):
        moments.add_chunk(_chunk_numpy(flat[start:start + CHUNK]))
    return moments.stats(), False


# ---- sparse tensors -----------------------------------------------------------------------

def _plain(value: Any) -> Any:
    """One stored value as plain data (a complex number as its repr)."""
    if isinstance(value, complex):
        return repr(value)
    return value


def sparse_summary(tensor: Any) -> dict[str, Any]:
    """``nnz``, a sample of (index, value) entries and statistics of a sparse tensor; never dense.

    Statistics count the implicit zeros; an uncoalesced COO tensor too large to coalesce
    cheaply gets none (its duplicate entries would have to be summed first).
    """
    data = tensor.detach()
    layout = layout_name(data)
    nnz = int(data._nnz())
    out: dict[str, Any] = {"nnz": nnz, "entries": [], "sampled": nnz > ENTRY_LIMIT}
    if layout == "sparse_coo":
        if not data.is_coalesced() and nnz <= EXACT_STATS_LIMIT // 64:
            data = data.coalesce()
        indices, stored = data._indices(), data._values()
        out["entries"] = [[[int(i) for i in indices[:, j]], _entry_value(stored[j])]
                          for j in range(min(nnz, ENTRY_LIMIT))]
        exact = data.is_coalesced()
    else:
        out["entries"] = _compressed_entries(data, layout, nnz)
        stored = data.values()
        exact = True
    out.update(_sparse_stats(stored, data.numel()) if exact and not data.is_complex() else NO_STATS)
    return out


def _entry_value(stored: Any) -> Any:
    """A stored value (a hybrid tensor's dense part: its first 8 values)."""
    if stored.dim() == 0:
        return _plain(_to_numpy(stored).item())
    return [_plain(v) for v in _to_numpy(stored.reshape(-1)[:8]).tolist()]


def _compressed_entries(data: Any, layout: str, nnz: int) -> list[list[Any]]:
    """Entries of CSR/CSC (one element each) and BSR/BSC (a block each, spread into elements)."""
    torch = sys.modules["torch"]
    by_row = layout in ("sparse_csr", "sparse_bsr")
    compressed = data.crow_indices() if by_row else data.ccol_indices()
    plain = data.col_indices() if by_row else data.row_indices()
    stored = data.values()
    batch = (0,) * (compressed.dim() - 1)
    if batch:  # batched matrices: the first one's entries are enough to show the form
        compressed, plain, stored = compressed[batch], plain[batch], stored[batch]
    is_block = layout in ("sparse_bsr", "sparse_bsc")
    block = tuple(stored.shape[1:3]) if is_block else (1, 1)
    count = min(nnz, ENTRY_LIMIT)
    outer = torch.searchsorted(compressed, torch.arange(count), right=True) - 1
    entries: list[list[Any]] = []
    for j in range(count):
        major, minor = int(outer[j]), int(plain[j])
        row, col = (major, minor) if by_row else (minor, major)
        for a in range(block[0]):
            for b in range(block[1]):
                if len(entries) == ENTRY_LIMIT:
                    return entries
                value = stored[j, a, b] if is_block else stored[j]
                entries.append([[*batch, row * block[0] + a, col * block[1] + b], _entry_value(value)])
    return entries


def _sparse_stats(stored: Any, numel: int) -> dict[str, Any]:
    """Statistics over every element: the stored values, then the implicit zeros as one group."""
    moments = Moments()
    flat = stored.reshape(-1)
    for start in range(0, flat.numel(), CHUNK):
        moments.add_chunk(_chunk_numpy(flat[start:start + CHUNK]))
    zeros = numel - flat.numel()
    moments.add(zeros, 0.0, 0.0, 0.0, 0.0)
    return moments.stats()


# ---- the inspector's full values ----------------------------------------------------------

def tensor_values(tensor: Any) -> np.ndarray:
    """All of a tensor's values as a numpy array, for the inspector.

    Raises
    ------
    ValuesUnavailable
        When the values cannot be read (see :func:`why_no_values`), or reading them all
        would densify a sparse tensor or materialise a view beyond :data:`FULL_VALUES_LIMIT`.
    """
    reason = why_no_values(tensor)
    if reason is not None:
        raise ValuesUnavailable(reason)
    numel = tensor.numel()
    if layout_name(tensor) in SPARSE_LAYOUTS:
        if numel > FULL_VALUES_LIMIT:
            raise ValuesUnavailable(
                f"this sparse tensor stores {int(tensor._nnz()):,} values but has {numel:,} elements: "
                f"more than {FULL_VALUES_LIMIT:,} to show densely")
        return _to_numpy(tensor.detach().to_dense())
    if numel > FULL_VALUES_LIMIT and _flat_view(tensor.detach()) is None:
        raise ValuesUnavailable(
            f"this view has {numel:,} elements over {tensor.untyped_storage().nbytes():,} bytes of "
            f"storage: more than {FULL_VALUES_LIMIT:,} to copy out")
    return _to_numpy(tensor)
