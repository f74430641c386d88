"""Helpers the lessons share, kept out of the lesson files so that stepping a lesson stays on what it teaches.

GradStep steps through the lesson file only, so on a line that calls one of these, F11 runs
the whole helper as one step (a breakpoint set in this file makes it stepped like the lesson).
A lesson imports them with a plain ``from course import ...``: this module sits beside the
lessons, and GradStep puts a copy beside a learner's edited lessons, so ``python
lessons/03_loops.py`` works as well as a run in the app. The name is not a lesson's
(``NN_topic.py``), so the lesson list leaves this file out.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def graph_nodes(tensor: torch.Tensor) -> list[str]:
    """The names of the autograd nodes behind ``tensor``, walking back from its ``grad_fn``.

    Each node is named once, however many paths lead to it; a tensor without a
    ``grad_fn`` has none.
    """
    names: list[str] = []
    stack, seen = [tensor.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(node.name().rsplit("::", 1)[-1])
        stack.extend(parent for parent, _ in node.next_functions)
    return names


def count_nodes(tensor: torch.Tensor) -> int:
    """How many autograd nodes lie behind ``tensor`` (its leaves' ``AccumulateGrad`` nodes included)."""
    return len(graph_nodes(tensor))


def first_lines(caught: Iterable[warnings.WarningMessage]) -> list[str]:
    """Each distinct warning in ``caught`` as ``"Category: first sentence"``, in the order they came."""
    lines: list[str] = []
    for warning in caught:
        text = f"{warning.category.__name__}: {str(warning.message).split('. ')[0]}"
        if text not in lines:
            lines.append(text)
    return lines


def has_api(root: object, *names: str) -> bool:
    """Whether every dotted name exists under ``root``: ``has_api(torch, "jit.trace")``.

    A lesson uses it to skip, with a message, what the installed PyTorch lacks (or no
    longer has), instead of failing.
    """
    for name in names:
        target = root
        for part in name.split("."):
            if not hasattr(target, part):
                return False
            target = getattr(target, part)
    return True


class SavedTensors:
    """Notes every tensor a graph saves for backward, to measure how much of it is still alive.

    Its ``pack`` and ``unpack`` are a ``torch.autograd.graph.saved_tensors_hooks`` pair that
    stores each tensor unchanged; ``pack`` keeps only a weak reference, so the meter itself
    keeps nothing alive.
    """

    def __init__(self) -> None:
        self._refs: list[weakref.ref] = []

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        """The pack hook: note a weak reference to ``tensor`` and store it as it is."""
        self._refs.append(weakref.ref(tensor))
        return tensor

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        """The unpack hook: the stored tensor, unchanged."""
        return tensor

    def megabytes(self) -> float:
        """Megabytes of the noted tensors that are still alive, a tensor shared by two nodes counted once."""
        alive = {tensor.data_ptr(): tensor for ref in self._refs if (tensor := ref()) is not None}
        return sum(t.numel() * t.element_size() for t in alive.values()) / 1e6
