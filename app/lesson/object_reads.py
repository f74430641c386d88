"""Reads of lesson objects that run none of the lesson's code (runs in the lesson process).

A lesson may subclass ``list`` or ``dict`` with an ``__iter__`` that never ends or a
``__len__`` that lies, override ``nn.Module.named_parameters()`` with a generator that
loops, or hold a ``MagicMock``, on which every attribute exists and every read gives
another mock. Calling the object's own methods to summarise it would run that code, and
also do what a plain ``python`` run of the lesson never does (a generator consumed, a mock
call recorded). So the engine reads such objects the way the interpreter stores them: a
list's items through ``list``'s own C methods, a module's parameters from the
``_parameters`` and ``_modules`` dicts ``nn.Module`` fills, a mock's name from its
``__dict__``, and an object's kind from ``type(value)``, never from ``value.__class__``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from itertools import islice
from typing import Any

#: The builtin containers whose items the engine reads, in the order a subclass is matched.
CONTAINERS = (list, tuple, dict, set, frozenset)
#: Submodules of one module visited, at most, to list and count its parameters.
MODULE_LIMIT = 10_000


def is_a(value: Any, cls: type | tuple[type, ...]) -> bool:
    """``isinstance`` by the object's real type: an ``isinstance`` reads ``value.__class__``, which a
    mock's spec, or a lesson's ``__getattribute__``, answers with code of their own."""
    return issubclass(type(value), cls)


def container_base(value: Any) -> type | None:
    """The builtin container ``value``'s type derives from (``list`` for a ``list`` subclass), or None."""
    kind = type(value)
    for base in CONTAINERS:
        if issubclass(kind, base):
            return base
    return None


def length(value: Any, base: type) -> int:
    """How many items ``value`` holds, as its builtin ``base`` stores them (a subclass's ``__len__`` may lie)."""
    return base.__len__(value)


def first_items(value: Any, base: type, limit: int) -> list[Any]:
    """Up to ``limit`` items of ``value`` (a dict's ``(key, value)`` pairs), as its builtin ``base`` stores them."""
    if base is list or base is tuple:
        return list(base.__getitem__(value, slice(0, limit)))
    if base is dict:
        return list(islice(dict.items(value), limit))
    return list(islice(base.__iter__(value), limit))


def mock_type() -> type | None:
    """``unittest.mock.NonCallableMock``, the base of every mock, once the lesson imported ``unittest.mock``."""
    mock = sys.modules.get("unittest.mock")
    return None if mock is None else mock.NonCallableMock


def is_mock(value: Any) -> bool:
    """Whether ``value`` is a ``Mock`` or ``MagicMock`` (of any spec): each of its attributes is another mock."""
    base = mock_type()
    return base is not None and issubclass(type(value), base)


def own_dict(value: Any) -> dict[str, Any]:
    """The instance ``__dict__`` of ``value`` as the interpreter keeps it (empty when it has none)."""
    try:
        return object.__getattribute__(value, "__dict__")
    except AttributeError:
        return {}


def mock_repr(value: Any) -> str:
    """``<MagicMock name='model.fc' spec='Linear'>``: a mock described from its ``__dict__``, never called."""
    fields = own_dict(value)
    parts = [type(value).__name__]
    name = fields.get("_mock_name")
    if isinstance(name, str) and name:
        parts.append(f"name={name[:60]!r}")
    spec = fields.get("_spec_class")
    if isinstance(spec, type):
        parts.append(f"spec={spec.__name__!r}")
    return "<" + " ".join(parts) + ">"


def submodules(module: Any, limit: int = MODULE_LIMIT) -> Iterator[tuple[str, Any]]:
    """``(prefix, submodule)`` in the order of ``named_modules()``, each once, read from the ``_modules`` dicts.

    Stops after ``limit`` modules. A module built without ``super().__init__()`` has no
    ``_modules`` and yields only itself.
    """
    import torch

    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [("", module)]
    while stack and len(seen) < limit:
        prefix, mod = stack.pop()
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        yield prefix, mod
        children = own_dict(mod).get("_modules")
        if not is_a(children, dict):
            continue
        pending = [(f"{prefix}.{name}" if prefix else str(name), child)
                   for name, child in first_items(children, dict, limit)
                   if is_a(child, torch.nn.Module)]
        stack.extend(reversed(pending))


def registered(module: Any, table: str, limit: int) -> tuple[list[tuple[str, Any]], bool]:
    """The first ``limit`` distinct tensors of ``module``'s ``_parameters`` (or ``_buffers``) tables, named
    as ``named_parameters()`` names them, and whether there are more (or more submodules than were visited)."""
    found: list[tuple[str, Any]] = []
    seen: set[int] = set()
    visited = 0
    for prefix, mod in submodules(module):
        visited += 1
        tensors = own_dict(mod).get(table)
        if not is_a(tensors, dict):
            continue
        for name, tensor in first_items(tensors, dict, limit + 1):
            if tensor is None or id(tensor) in seen:
                continue
            if len(found) == limit:
                return found, True
            seen.add(id(tensor))
            found.append((f"{prefix}.{name}" if prefix else str(name), tensor))
    return found, visited >= MODULE_LIMIT


def parameter_count(module: Any) -> tuple[int, bool]:
    """How many distinct parameters ``module`` registers, and whether it stopped at :data:`MODULE_LIMIT` modules."""
    seen: set[int] = set()
    visited = 0
    for _, mod in submodules(module):
        visited += 1
        tensors = own_dict(mod).get("_parameters")
        if is_a(tensors, dict):
            seen.update(id(p) for _, p in islice(dict.items(tensors), MODULE_LIMIT) if p is not None)
    return len(seen), visited >= MODULE_LIMIT
