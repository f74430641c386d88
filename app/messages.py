"""The messages the app and the lesson process exchange, and how they travel.

Both sides import this module. Messages are small dataclasses of plain data (builtins and
numpy arrays); they are pickled, but unpickled with an allow-list, so nothing that arrives
can name a class or function outside this module, builtins' containers and numpy arrays.
"""

from __future__ import annotations

import io
import pickle
import struct
import types
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

# ---- app → lesson process -------------------------------------------------------------


@dataclass
class Run:
    """Run ``source`` as ``__main__`` from ``path``; pause on its first line when ``stop_on_entry``.

    ``op_values`` gives every entry of a pause's ``ops`` log the summaries of its inputs and output.
    """

    path: str
    source: str
    breakpoints: dict[str, dict[int, str | None]] = field(default_factory=dict)
    stop_on_entry: bool = True
    op_values: bool = False


@dataclass
class Resume:
    """Leave the current pause: ``action`` is step_into, step_over, step_out, step_expression, continue, run_to or record.

    ``step_expression`` runs the paused line one PyTorch operation at a time, pausing (event
    ``op``) after each operation the frame calls; ``step_over`` from there finishes the line.

    ``record`` steps into every event and reports each pause without waiting for the app,
    for ``limit`` pauses (or until a :class:`Pause` arrives), then pauses for real.
    ``continue`` with ``watches`` also pauses at the first line where one of these
    expressions has a different value than when the run continued.
    """

    action: str
    file: str | None = None
    line: int | None = None
    limit: int | None = None
    watches: list[str] | None = None


@dataclass
class SetBreakpoints:
    """Replace the breakpoints of ``file``: line → condition expression (None for always)."""

    file: str
    lines: dict[int, str | None]


@dataclass
class Pause:
    """Pause a running lesson at its next traced line."""


@dataclass
class Request:
    """Ask something of a paused lesson; answered by a :class:`Reply` with the same ``id``."""

    id: int
    kind: str
    params: dict[str, Any] = field(default_factory=dict)


# ---- lesson process → app -------------------------------------------------------------


@dataclass
class Ready:
    """The lesson process is up and has imported torch."""

    pid: int
    torch_version: str | None


@dataclass
class Started:
    """The lesson began to run."""

    path: str


@dataclass
class Output:
    """Text the lesson wrote: ``stream`` is stdout, stderr or native (C-level output)."""

    stream: str
    text: str


@dataclass
class Paused:
    """The lesson stopped at a line; ``snapshot`` is the plain-data state (see the README)."""

    snapshot: dict[str, Any]


@dataclass
class Reply:
    """The answer to a :class:`Request`."""

    id: int
    kind: str
    result: dict[str, Any]


@dataclass
class Ended:
    """The run is over: ``status`` is ok, error, exited, crashed or stopped."""

    status: str
    error: dict[str, Any] | None = None
    exit_code: int | None = None
    signal: str | None = None


_ALLOWED = {
    ("builtins", name)
    for name in ("dict", "list", "tuple", "set", "frozenset", "str", "bytes", "int", "float",
                 "complex", "bool", "NoneType", "slice", "bytearray")
} | {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy", "bool_"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("_codecs", "encode"),
} | {(__name__, cls.__name__) for cls in (Run, Resume, SetBreakpoints, Pause, Request, Ready,
                                          Started, Output, Paused, Reply, Ended)}


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED or module.startswith("numpy") and name.endswith("DType"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} may not cross the lesson boundary")


_HEADER = struct.Struct("!I")
_MESSAGE_TYPES = (Run, Resume, SetBreakpoints, Pause, Request, Ready, Started, Output, Paused, Reply, Ended)


def _placeholder(type_name: str) -> str:
    return f"<{type_name}: not plain data, left out>"


class _PlainPickler(pickle.Pickler):
    """Pickles plain data; any other object becomes a short placeholder string.

    A summary that by mistake holds a live object (a tensor, a frame) then costs one
    field, not the run: the receiving side would refuse the whole message.
    """

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, (_MESSAGE_TYPES, np.ndarray, np.generic, np.dtype, type, types.FunctionType,
                            types.BuiltinFunctionType)) or type(obj) in _PLAIN:
            return NotImplemented  # plain data, and the classes and functions that rebuild it
        for base in (str, int, float):  # subclasses (IntEnum, str enums…) travel as their base type
            if isinstance(obj, base):
                return (base, (base(obj),))
        return (str, (_placeholder(type(obj).__qualname__),))


_PLAIN = {dict, list, tuple, set, frozenset, str, bytes, int, float, complex, bool, type(None), slice, bytearray}


def encode(message: Any) -> bytes:
    """One framed message: a 4-byte length, then the pickle."""
    buffer = io.BytesIO()
    buffer.write(b"\0" * _HEADER.size)
    _PlainPickler(buffer, protocol=5).dump(message)
    data = buffer.getbuffer()
    _HEADER.pack_into(data, 0, len(data) - _HEADER.size)
    return bytes(data)


def decode(body: bytes) -> Any:
    """The message in ``body`` (a frame without its length), through the allow-list."""
    return _SafeUnpickler(io.BytesIO(body)).load()


def read_message(stream: BinaryIO) -> Any:
    """The next message on ``stream``, or None at end of stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return decode(body)
