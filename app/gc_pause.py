"""Holding off the cyclic garbage collector, which both processes do while they build or decode big acyclic data."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while building or decoding a big graph.

    A graph description is tens of thousands of small acyclic containers; each few hundred
    allocated trigger a collection that also scans the lesson's tensors and torch's own
    objects, which can double the cost of building or decoding it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
