"""The messages the app and the lesson process exchange, and how they travel.

Both sides import this module. Messages are small dataclasses of plain data; they travel as
MessagePack, a format that holds data only and cannot name a class or a function, so
nothing that arrives can make the receiver import or call anything. What crosses:

- ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes`` (a ``bytearray`` arrives as
  ``bytes``), ``complex`` and integers beyond 64 bits (as extension types);
- ``dict`` (keys str, int, float, bool or None), and ``list``: tuples, sets and frozensets
  arrive as lists;
- numpy arrays of a bool, integer, float or complex dtype, as dtype + shape + raw bytes;
  they arrive read-only. Numpy scalars arrive as the Python number they hold;
- a message itself, as its type's name from this module's fixed table and a map of its fields.

Anything else the sender meets (a tensor by mistake, an object array, a frame) becomes a
placeholder string, which costs one field, not the run. The receiver refuses a frame larger
than :data:`MAX_MESSAGE_BYTES` before reading it, and msgpack refuses nesting deeper than its
fixed stack (1024 containers) while decoding. MessagePack has no shared references, so
decoding cannot multiply a message: what is built is at most as large as the bytes read
(pickle's memo let 520 bytes of shared lists expand to a gigabyte). A frame that breaks any
of these rules raises :class:`MalformedMessage`.
"""

from __future__ import annotations

import re
import struct
import threading
import types
import typing
from dataclasses import dataclass, field, fields
from typing import Any, BinaryIO

import msgpack
import numpy as np

from app.gc_pause import gc_paused
from app.i18n import N_

#: The console name under which the last ``autograd_grad`` results stay available (``_grads[0]``).
RESULTS_NAME = "_grads"
#: What reading ``input()`` or ``sys.stdin`` in a lesson raises (the app shows it in the learner's language).
NO_INPUT_MESSAGE = N_("this lesson asked for keyboard input (input() or sys.stdin), which GradStep "
                      "does not offer yet: give the value in the code instead")
#: The environment variable that tells the lesson process its message pipe's fd.
CHANNEL_FD_VARIABLE = "GRADSTEP_CHANNEL_FD"
#: The environment variable that tells a fresh-interpreter lesson process the pid of the app that started it.
APP_PID_VARIABLE = "GRADSTEP_APP_PID"
#: The exit code of a lesson process whose message channel the lesson closed or replaced.
CHANNEL_LOST_EXIT = 86
#: The environment variable that tells the lesson-process server (``app/lesson/zygote.py``) its socket's fd.
SERVER_FD_VARIABLE = "GRADSTEP_SERVER_FD"

# ---- app → lesson process -------------------------------------------------------------


@dataclass
class RunLesson:
    """Run ``source`` as ``__main__`` from ``path``; pause on its first line when ``stop_on_entry``.

    ``op_values`` gives every entry of a pause's ``ops`` log the summaries of its inputs and output.
    ``watches`` (without ``stop_on_entry``) pauses at the first line where one of these
    expressions has a different value than it had, as a ``continue`` with watches does.
    ``checks`` are the lesson's exercise checks, evaluated in its module once it ran to the end.
    """

    path: str
    source: str
    breakpoints: dict[str, dict[int, str | None]] = field(default_factory=dict)
    stop_on_entry: bool = True
    op_values: bool = False
    watches: list[str] | None = None
    checks: list[str] | None = None


@dataclass
class Resume:
    """Leave the current pause: ``action`` is step_into, step_over, step_out, step_expression, continue,
    run_to or record.

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
    """Text the lesson wrote to fd 1 (``stream`` stdout) or fd 2 (stderr); native is for the app's own notes."""

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
class Notice:
    """Something the learner must be told while the lesson runs, that no other message says.

    ``kind`` is ``busy`` (a pause has not landed: the lesson is inside one long call),
    ``breakpoint`` (a breakpoint will not be hit, and why), ``exiting`` (the last line has
    run and the program is ending: the session keeps it, and says ``stalled`` if the program
    does not end) or ``stalled`` (said by the session: the lesson does not answer, or does
    not end); ``line`` is the lesson line
    it is about, if any. ``text`` is in English; ``template`` (a message id of :mod:`app.i18n`)
    and ``fields`` let the app say it in the learner's language.
    """

    kind: str
    text: str
    line: int | None = None
    template: str | None = None
    fields: dict[str, Any] | None = None

    @classmethod
    def of(cls, kind: str, template: str, at_line: int | None = None, /, **fields: Any) -> Notice:
        """A notice about lesson line ``at_line`` whose text is ``template`` formatted with ``fields``."""
        return cls(kind, template.format(**fields), at_line, template, fields)


def engine_error(kind: str, template: str, **fields: Any) -> dict[str, Any]:
    """The ``error`` of an :class:`Ended` that the engine, not the lesson, ends a run with: ``template`` (a
    message id of :mod:`app.i18n`) formatted with ``fields``, kept apart so the app can say it in the learner's
    language."""
    return {"type": kind, "message": template.format(**fields), "line": None, "template": template,
            "fields": fields}


@dataclass
class Ended:
    """The run is over: ``status`` is ok, error, exited, crashed, stopped or empty (nothing to run).

    ``checks`` holds, after a run that ended "ok", one ``{"expression", "passed", "error", "missing"}``
    per exercise check of :class:`RunLesson` (``passed`` None when the check itself raised; ``missing``
    the text of the check's first false part when it is false); ``variables``
    the summaries of the module's variables as the run left them.
    """

    status: str
    error: dict[str, Any] | None = None
    exit_code: int | None = None
    signal: str | None = None
    checks: list[dict[str, Any]] | None = None
    variables: dict[str, Any] | None = None


_MESSAGE_TYPES = (RunLesson, Resume, SetBreakpoints, Pause, Request, Ready, Started, Output, Paused, Reply, Notice,
                  Ended)
_BY_NAME = {cls.__name__: cls for cls in _MESSAGE_TYPES}

#: The largest frame either side accepts.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024

#: A frame: two magic bytes (so stray bytes on the pipe are caught at once), the body's length.
_HEADER = struct.Struct("!2sI")
_MAGIC = b"GS"
HEADER_SIZE = _HEADER.size

_ARRAY, _COMPLEX, _BIG_INT = 1, 2, 3
_ARRAY_HEADER = struct.Struct("!B")  # dtype string length; then the string, ndim, the dims
_DIM = struct.Struct("!Q")
#: Byte order, kind (bool, signed, unsigned, float, complex) and item size: nothing else.
_PLAIN_DTYPE = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")
_MAX_NDIM = 64


class MalformedMessage(Exception):
    """A frame that is truncated, too large or not a message this module encodes."""


def _placeholder(type_name: str) -> str:
    return f"<{type_name}: not plain data, left out>"


def _array_head(dtype: str, shape: tuple[int, ...]) -> bytes | None:
    """The bytes before an array's data (dtype and shape); None for an array that travels as a placeholder."""
    if not _PLAIN_DTYPE.fullmatch(dtype) or len(shape) > _MAX_NDIM:
        return None
    return _ARRAY_HEADER.pack(len(dtype)) + dtype.encode() + bytes([len(shape)]) + b"".join(_DIM.pack(n) for n in shape)


#: Array heads by (dtype, shape), and parsed heads by their bytes: a pause carries dozens of
#: small arrays of a few shapes, and building or checking each head anew was most of their cost.
_HEADS: dict[tuple[str, tuple[int, ...]], bytes | None] = {}
_PARSED_HEADS: dict[bytes, tuple[np.dtype, list[int], int]] = {}
_HEAD_CACHE_LIMIT = 4096


def _pack_array(array: np.ndarray) -> msgpack.ExtType | str:
    key = (array.dtype.str, array.shape)
    head = _HEADS.get(key, b"")
    if head == b"":
        if len(_HEADS) >= _HEAD_CACHE_LIMIT:
            _HEADS.clear()
        head = _HEADS[key] = _array_head(*key)
    if head is None:
        return _placeholder(f"ndarray of {array.dtype}")
    # ExtType's own __new__ re-checks its two fields in Python; they are right by construction.
    return tuple.__new__(msgpack.ExtType, (_ARRAY, head + array.tobytes()))


def _parse_head(head: bytes) -> tuple[np.dtype, list[int], int]:
    """The dtype, shape and element count an array head describes; :class:`MalformedMessage` if it is not one."""
    size = head[0]
    dtype_text = head[1:1 + size].decode("ascii", errors="replace")
    if not _PLAIN_DTYPE.fullmatch(dtype_text):
        raise MalformedMessage(f"an array of dtype {dtype_text!r}")
    ndim = head[1 + size]
    if ndim > _MAX_NDIM:
        raise MalformedMessage(f"an array of {ndim} dimensions")
    shape = [_DIM.unpack_from(head, 2 + size + i * _DIM.size)[0] for i in range(ndim)]
    count = 1
    for n in shape:
        count *= n
    return np.dtype(dtype_text), shape, count


def _unpack_array(data: bytes) -> np.ndarray:
    if len(data) < 2 or len(data) < 2 + data[0]:
        raise MalformedMessage(f"an array of {len(data)} bytes")
    head_size = 2 + data[0] + data[1 + data[0]] * _DIM.size
    if len(data) < head_size:
        raise MalformedMessage(f"an array head cut short ({len(data)} of {head_size} bytes)")
    head = data[:head_size]
    parsed = _PARSED_HEADS.get(head)
    if parsed is None:
        parsed = _parse_head(head)
        if len(_PARSED_HEADS) >= _HEAD_CACHE_LIMIT:
            _PARSED_HEADS.clear()
        _PARSED_HEADS[head] = parsed
    dtype, shape, count = parsed
    if count * dtype.itemsize != len(data) - head_size:
        raise MalformedMessage(f"an array of shape {shape} and {dtype} in {len(data) - head_size} bytes")
    return np.frombuffer(data, dtype, count, head_size).reshape(shape)


def _default(obj: Any) -> Any:
    """What msgpack cannot pack by itself; never raises, so one odd value costs one field."""
    if isinstance(obj, np.ndarray):
        return _pack_array(obj)
    if isinstance(obj, np.complexfloating):
        obj = complex(obj)
    elif isinstance(obj, np.generic):
        obj = obj.item()  # np.float32 → float, np.int64 → int; a long double stays itself
        if isinstance(obj, (bool, float)) or isinstance(obj, int) and -2**63 <= obj < 2**64:
            return obj
    if isinstance(obj, complex):
        return msgpack.ExtType(_COMPLEX, struct.pack("!dd", obj.real, obj.imag))
    if isinstance(obj, int):  # beyond 64 bits
        try:
            return msgpack.ExtType(_BIG_INT, str(int(obj)).encode())
        except ValueError:  # more digits than int/str conversion allows
            return _placeholder(f"int of {obj.bit_length()} bits")
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, _MESSAGE_TYPES):  # only a frame's top level is a message
        return _placeholder(type(obj).__name__)
    return _placeholder(type(obj).__qualname__)


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _ARRAY:
        return _unpack_array(data)
    if code == _COMPLEX and len(data) == 16:
        return complex(*struct.unpack("!dd", data))
    if code == _BIG_INT and len(data) <= 4300 and re.fullmatch(rb"-?[0-9]+", data):
        return int(data)
    raise MalformedMessage(f"an extension value of type {code} and {len(data)} bytes")


def _field_types(cls: type) -> dict[str, tuple[type, ...]]:
    """The builtin types each field of a message may hold (None included for optional ones)."""
    out = {}
    for name, hint in typing.get_type_hints(cls).items():
        options = typing.get_args(hint) if typing.get_origin(hint) is types.UnionType else (hint,)
        out[name] = tuple(typing.get_origin(o) or (type(None) if o is None else o) for o in options)
    return out


_FIELD_TYPES = {cls: _field_types(cls) for cls in _MESSAGE_TYPES}
#: Field names of each message class, read once: ``dataclasses.fields`` costs more than encoding a small message.
_FIELD_NAMES = {cls: tuple(f.name for f in fields(cls)) for cls in _MESSAGE_TYPES}


def encode(message: Any) -> bytes:
    """One framed message: the header (magic and length), then the MessagePack body."""
    names = _FIELD_NAMES.get(type(message))
    if names is not None:
        body = [type(message).__name__, {name: getattr(message, name) for name in names}]
    else:
        body = [None, message]
    try:
        data = _pack(body)
    except UnicodeEncodeError:  # lone surrogates (a file name decoded with surrogateescape) travel as they are
        data = msgpack.packb(body, default=_default, use_bin_type=True, unicode_errors="surrogatepass")
    return _HEADER.pack(_MAGIC, len(data)) + data


#: Each thread's packer, kept between messages: ``msgpack.packb`` makes a packer and its buffer at
#: every call, a third of the cost of packing a recorded step's pause.
_packers = threading.local()
#: A packer whose buffer grew beyond this for one message is let go rather than kept.
_PACKER_KEEP = 1 << 20


def _pack(body: Any) -> bytes:
    """``body`` packed by this thread's packer (taken while in use: a nested call makes its own)."""
    packer = _packers.__dict__.pop("packer", None)
    if packer is None:
        packer = msgpack.Packer(default=_default, use_bin_type=True)
    data = packer.pack(body)
    if len(data) <= _PACKER_KEEP:
        _packers.packer = packer
    return data


def decode(body: bytes) -> Any:
    """The message in ``body`` (a frame without its header); :class:`MalformedMessage` if it is not one."""
    try:
        # Every length in the body is bounded by the body's own size (msgpack's default), and
        # int keys are allowed: breakpoint lines and graph node ids are keys.
        with gc_paused():  # what is decoded has no cycles: a collection would only rescan the app's objects
            try:  # strict UTF-8 first: msgpack's fast path (a codec error handler makes it decode 10% slower)
                name, value = msgpack.unpackb(body, ext_hook=_ext_hook, raw=False, strict_map_key=False,
                                              use_list=True)
            except UnicodeDecodeError:  # lone surrogates, sent as they are
                name, value = msgpack.unpackb(body, ext_hook=_ext_hook, raw=False, strict_map_key=False,
                                              use_list=True, unicode_errors="surrogatepass")
    except MalformedMessage:
        raise
    except Exception as exc:  # msgpack's errors, an unhashable key, a body that is not [name, value]
        raise MalformedMessage(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
    if name is None:
        return value
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(value, dict):
        raise MalformedMessage(f"no message type {name!r}")
    allowed = _FIELD_TYPES[cls]
    for key, item in value.items():
        if key not in allowed or not isinstance(item, allowed[key]):
            raise MalformedMessage(f"{name} with {key!r} of type {type(item).__name__}")
    try:
        return cls(**value)
    except TypeError as exc:  # a required field is missing
        raise MalformedMessage(f"{name}: {exc}") from None


def read_message(stream: BinaryIO) -> Any:
    """The next message on ``stream``, or None at the end of the stream.

    Raises :class:`MalformedMessage` for a frame with a wrong header, one larger than
    :data:`MAX_MESSAGE_BYTES` (before reading its body), one the stream ends inside, or a
    body that does not decode.
    """
    header = stream.read(_HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise MalformedMessage(f"the stream ended inside a frame header ({len(header)} bytes)")
    magic, size = _HEADER.unpack(header)
    if magic != _MAGIC:
        raise MalformedMessage(f"a frame starting with {header!r}")
    if size > MAX_MESSAGE_BYTES:
        raise MalformedMessage(f"a frame of {size:,} bytes, more than the {MAX_MESSAGE_BYTES >> 20} MB limit")
    body = stream.read(size)
    if len(body) < size:
        raise MalformedMessage(f"the stream ended inside a frame: {len(body):,} of {size:,} bytes")
    return decode(body)
