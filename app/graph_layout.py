"""Where each node of the autograd graph sits: a layered grid layout that grows with the graph.

Plain Python, no Qt. The graph view turns grid cells into pixels.

Features
--------
- **Layers by distance from the leaves.** A leaf (``AccumulateGrad``) has rank 0; any other
  node has one more than the highest of its next functions, so every edge runs from a higher
  rank to a lower one and outputs end up on the far side from the leaves.
- **Leaves in their own band.** All leaves share rank 0. An edge into a leaf from a node
  deeper than rank 1 runs along the leaf's *lane*, a vertical bus in the gutter right of the
  leaf's column: a weight shared by 1,000 unrolled steps is drawn once, its 1,000 edges join
  one line, and no other node ever sits in a gutter. This is what general layered layouts
  lack: Graphviz ``dot`` and grandalf route every one of those edges through every layer.
- **New pieces hug their consumers.** A node added together with the node that uses it is
  pulled down to just above that user (``x_t @ W_xh`` sits beside ``h @ W_hh``, not at the
  top of the graph).
- **Cheap crossing reduction.** Columns come from three barycenter sweeps (down, up, down)
  over the nodes being added, each node taking the free column nearest the mean column of
  its placed neighbours; the node with more placed neighbours chooses first, so chains stay
  straight. New leaves then take the band column nearest their users, and the first rank
  is swept once more toward them.
- **Incremental and stable.** :meth:`LayeredLayout.add` places only the new nodes and
  :meth:`LayeredLayout.remove` frees their cells; a placed node never moves, so a view
  drawing the graph step by step never jumps. Placing one RNN step (five nodes) costs tens
  of microseconds whatever the size of the graph; placing a whole graph is :meth:`add` of
  everything at once.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

#: Rank of the leaf band.
LEAF_RANK = 0
#: Barycenter sweeps over the nodes being added, alternating direction, starting downwards.
SWEEPS = 3


class LayeredLayout:
    """A layered layout of an autograd DAG on a grid of ``(column, rank)`` cells.

    Edges point from a node to the nodes in its ``next_functions`` (toward the leaves).
    A node's next functions must be added with it or before it, as autograd creates them.

    Examples
    --------
    >>> layout = LayeredLayout()
    >>> layout.add([{"id": 1, "kind": "leaf"}, {"id": 2, "kind": "op"}], [[2, 1, 0]])
    [1, 2]
    >>> layout.position(2)
    (0, 1)
    """

    def __init__(self) -> None:
        self._rank: dict[int, int] = {}
        self._column: dict[int, int] = {}
        self._rows: defaultdict[int, dict[int, int]] = defaultdict(dict)  # rank -> column -> id
        self._leaves: set[int] = set()
        self._next: dict[int, list[int]] = {}
        self._users: defaultdict[int, set[int]] = defaultdict(set)
        self._lane_depths: dict[int, int | None] = {}  # leaf -> lane_depth, once asked

    def __len__(self) -> int:
        return len(self._rank)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._rank

    def position(self, node_id: int) -> tuple[int, int]:
        """The ``(column, rank)`` cell of a placed node.

        Raises
        ------
        KeyError
            If the node is not placed.
        """
        return self._column[node_id], self._rank[node_id]

    def is_leaf(self, node_id: int) -> bool:
        """Whether the node sits in the leaf band."""
        return node_id in self._leaves

    def uses_lane(self, source: int, target: int) -> bool:
        """Whether the edge ``source -> target`` runs along the lane of the leaf ``target``."""
        return target in self._leaves and self._rank[source] > LEAF_RANK + 1

    def lane_depth(self, leaf_id: int) -> int | None:
        """The deepest rank that reaches the leaf through its lane, or None when none does.

        The lane runs in the gutter right of the leaf's column, from the leaf down to this rank.
        """
        if leaf_id not in self._lane_depths:  # kept up to date by add and remove: a weight has a user per step
            ranks = [self._rank[user] for user in self._users.get(leaf_id, ()) if self._rank[user] > LEAF_RANK + 1]
            self._lane_depths[leaf_id] = max(ranks, default=None)
        return self._lane_depths[leaf_id]

    def users(self, node_id: int) -> set[int]:
        """The placed nodes that have ``node_id`` among their next functions."""
        return set(self._users.get(node_id, ()))

    def add(self, nodes: Iterable[Mapping[str, Any]], edges: Iterable[Sequence[int]]) -> list[int]:
        """Place new nodes without moving the placed ones.

        Parameters
        ----------
        nodes : iterable of dict
            Node dicts with at least ``"id"`` and ``"kind"`` (``"leaf"`` puts it in the band).
            Ids already placed are ignored.
        edges : iterable of ``[from_id, to_id, input_nr]``
            Edges whose source is one of the new nodes; edges with an end that is neither
            new nor placed are ignored.

        Returns
        -------
        list of int
            The ids placed, in the order they were placed.
        """
        new = {int(n["id"]): n for n in nodes if int(n["id"]) not in self._rank}
        for node_id, node in new.items():
            self._next[node_id] = []
            if node.get("kind") == "leaf":
                self._leaves.add(node_id)
        for source, target, *_ in edges:
            if source in new and (target in new or target in self._rank):
                self._next[source].append(target)
                self._users[target].add(source)
        order = self._rank_new(new)
        for node_id in order:
            for target in self._next[node_id]:
                if target in self._lane_depths and self._rank[node_id] > LEAF_RANK + 1:
                    self._lane_depths[target] = max(self._lane_depths[target] or 0, self._rank[node_id])
        ops = [n for n in order if n not in self._leaves]
        by_rank: defaultdict[int, list[int]] = defaultdict(list)
        for node_id in ops:
            by_rank[self._rank[node_id]].append(node_id)
        fixed = [self._column[t] for n in ops for t in self._next[n] if t in self._column and t not in self._leaves]
        anchor = sum(fixed) / len(fixed) if fixed else 0.0
        ranks = sorted(by_rank)
        for sweep in range(SWEEPS):
            for rank in ranks if sweep % 2 == 0 else reversed(ranks):
                self._sweep(by_rank[rank], rank, anchor, with_leaves=False)
        keyed = []
        for leaf in (n for n in order if n in self._leaves):
            direct = any(self._rank[u] == LEAF_RANK + 1 for u in self._users[leaf])
            keyed.append((self._target(self._users[leaf]) or 0.0, not direct, leaf))
        for target, _, leaf in sorted(keyed):  # on a tie, leaves joined by direct edges choose first
            self._claim(leaf, LEAF_RANK, target)
        if keyed and LEAF_RANK + 1 in by_rank:  # the first rank now also faces the new leaves above it
            self._sweep(by_rank[LEAF_RANK + 1], LEAF_RANK + 1, anchor, with_leaves=True)
        return order

    def remove(self, ids: Iterable[int]) -> None:
        """Forget nodes and free their cells; unknown ids are ignored."""
        gone = [i for i in ids if i in self._rank]
        for node_id in gone:
            del self._rows[self._rank.pop(node_id)][self._column.pop(node_id)]
            self._leaves.discard(node_id)
            self._lane_depths.pop(node_id, None)
            for target in self._next.pop(node_id):
                self._users[target].discard(node_id)
                self._lane_depths.pop(target, None)
        for node_id in gone:
            for user in self._users.pop(node_id, ()):
                if user in self._next:
                    self._next[user] = [t for t in self._next[user] if t != node_id]

    def _rank_new(self, new: Mapping[int, Any]) -> list[int]:
        """Rank the new nodes; returns them in topological order, next functions first."""
        # Distinct next functions only: ``x * x`` has two edges to one node, whose user is counted once.
        waiting = {n: len({t for t in self._next[n] if t in new}) for n in new}
        order = [n for n, count in waiting.items() if count == 0]
        for node_id in order:  # grows while read: Kahn's algorithm
            for user in self._users[node_id]:
                if user in waiting:
                    waiting[user] -= 1
                    if waiting[user] == 0:
                        order.append(user)
        if len(order) != len(new):
            raise ValueError("the added nodes contain a cycle")
        for node_id in order:
            if node_id not in self._leaves:
                below = (self._rank[t] for t in self._next[node_id] if t not in self._leaves)
                self._rank[node_id] = max(below, default=LEAF_RANK) + 1
        for node_id in reversed(order):  # users first: pull each node down to just above them
            if node_id not in self._leaves and self._users[node_id]:
                lowest_user = min(self._rank[u] for u in self._users[node_id])
                self._rank[node_id] = max(self._rank[node_id], lowest_user - 1)
        return order

    def _sweep(self, members: list[int], rank: int, anchor: float, with_leaves: bool) -> None:
        """Re-place new nodes of one rank at the barycenters of their placed neighbours.

        The node with more placed neighbours chooses first; nodes with none go near ``anchor``.
        Leaves count as neighbours only when ``with_leaves`` is set.
        """
        row = self._rows[rank]
        for node_id in members:
            if node_id in self._column:
                del row[self._column.pop(node_id)]
        keyed = []
        for node_id in members:
            neighbours = itertools.chain(self._next[node_id], self._users[node_id])
            counted = (m for m in neighbours if with_leaves or m not in self._leaves)
            placed = [self._column[m] for m in counted if m in self._column]
            target = sum(placed) / len(placed) if placed else anchor
            keyed.append((not placed, target, -len(placed), node_id))
        for *_, target, _, node_id in sorted(keyed):
            self._claim(node_id, rank, target)

    def _target(self, neighbours: Iterable[int]) -> float | None:
        """The mean column of the placed ``neighbours``, or None when none is placed."""
        columns = [self._column[m] for m in neighbours if m in self._column]
        return sum(columns) / len(columns) if columns else None

    def _claim(self, node_id: int, rank: int, target: float | None) -> None:
        """Put the node in the free column of ``rank`` nearest ``target``.

        ``target`` rounds half down; when that column is taken, the nearest free one wins,
        the right one before the left.
        """
        row = self._rows[rank]
        start = max(0, math.ceil((target or 0.0) - 0.5))
        for step in itertools.count():
            for column in (start + step, start - step):
                if column >= 0 and column not in row:
                    row[column] = node_id
                    self._column[node_id] = column
                    self._rank[node_id] = rank
                    return
