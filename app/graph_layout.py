"""Where each node of the autograd graph sits: a layered grid layout that grows with the graph.

Plain Python, no Qt. The graph view turns grid cells into pixels.

Features
--------
- **Layers by distance from the inputs.** Every edge runs from a higher rank (further down)
  to a lower one: a node sits below its next functions, outputs end up at the bottom.
- **One band of ranks per block.** Nodes come with a group path (the view's: the line
  execution that made them, then the modules, outermost first). Consecutive nodes of one path
  form a *block*, and every block gets ranks of its own, below all earlier blocks: no other
  block's node ever sits in the rows of a block, so a box drawn around a block (or around a
  run of consecutive blocks sharing a prefix of their paths) holds its own nodes and no other.
  A leaf sits at the top of the block that made it. :meth:`LayeredLayout.boxes` names a node's
  boxes; a path that comes back after another starts a new box.
- **Lanes for long edges.** An edge that skips ranks runs along its target's *lane*, a vertical
  bus in the gutter right of the target's column, from the target down to its deepest user: a
  weight shared by 1,000 unrolled steps is drawn once, its 1,000 edges join one line, and no
  node ever sits in a gutter. Lanes in one gutter whose ranks overlap take different tracks, and
  so do the connectors that run from a node across the gap above it to a lane, so no two lines
  to different targets ever run on top of each other. This is what general layered layouts
  lack: Graphviz ``dot`` and grandalf route every one of those edges through every layer.
- **Cheap crossing reduction.** Columns come from three barycenter sweeps (down, up, down)
  over the operations being added, each taking the free column nearest the mean column of
  its placed neighbours; the node with more placed neighbours chooses first, so chains stay
  straight. New leaves then take the column nearest their users, and the operations right
  under them are swept once more toward them.
- **Incremental and stable.** :meth:`LayeredLayout.add` places only the new nodes and
  :meth:`LayeredLayout.remove` frees their cells (and the ranks of blocks emptied at the end of
  the graph, so a graph freed and built again in a loop does not drift); a placed node never moves, so a view
  drawing the graph step by step never jumps. Placing a whole graph is :meth:`add` of
  everything at once, and gives the same blocks as adding it step by step.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Barycenter sweeps over the nodes being added, alternating direction, starting downwards.
SWEEPS = 3

#: A node's group path: its boxes' keys, outermost first (empty: in no box).
Path = tuple[Hashable, ...]


@dataclass
class Block:
    """Consecutive nodes of one group path, with ranks ``start`` to ``end`` to themselves."""

    path: Path
    start: int
    end: int
    runs: tuple[int, ...]  # per level of the path, the index of the block its box began at


@dataclass
class Lane:
    """The vertical bus into a node from its users more than one rank below."""

    column: int
    top: int
    depth: int
    track: int


class _Track:
    """The lanes on one track of one gutter: disjoint rank spans, kept sorted by their top rank.

    A new span can overlap only the span just above it and the ones starting within it, so
    finding them takes a bisection, not a look at every lane of the track (a weight shared by
    1,000 unrolled steps puts 1,000 lanes in one gutter).
    """

    def __init__(self) -> None:
        self._tops: list[int] = []
        self._lanes: dict[int, tuple[int, Lane]] = {}  # top -> (target, lane); one node per cell: tops differ

    def overlapping(self, lane: Lane) -> list[int]:
        """The targets of this track's lanes, other than ``lane``, whose spans meet ``lane``'s, top first."""
        index = bisect.bisect_left(self._tops, lane.top)
        found = []
        if index:
            target, above = self._lanes[self._tops[index - 1]]
            if above.depth >= lane.top:
                found.append(target)
        for top in itertools.islice(self._tops, index, None):
            if top > lane.depth:
                break
            target, other = self._lanes[top]
            if other is not lane:
                found.append(target)
        return found

    def add(self, target: int, lane: Lane) -> None:
        bisect.insort(self._tops, lane.top)
        self._lanes[lane.top] = target, lane

    def discard(self, lane: Lane) -> None:
        if self._lanes.pop(lane.top, None) is not None:
            del self._tops[bisect.bisect_left(self._tops, lane.top)]


def no_groups(node: Mapping[str, Any]) -> Path:
    """The default group path: none, every node in one block."""
    return ()


def no_spacing(closes: int, opens: int, leaves_above: bool, leaves_below: bool) -> int:
    """The default spacing between blocks: none."""
    return 0


class LayeredLayout:
    """A layered layout of an autograd DAG on a grid of ``(column, rank)`` cells.

    Edges point from a node to the nodes in its ``next_functions`` (toward the inputs).
    A node's next functions must be added with it or before it, as autograd creates them.

    Parameters
    ----------
    group_of : callable, optional
        A node dict's group path (see the module docstring); by default every node is in one block.
    spacing : callable, optional
        ``spacing(closes, opens, leaves_above, leaves_below)``: the empty ranks to leave between a
        block and the next one, given how many boxes end and begin there and whether the rank above
        or below holds a leaf (the view knows how much room headers and taller leaves need).

    Examples
    --------
    >>> layout = LayeredLayout()
    >>> layout.add([{"id": 1, "kind": "leaf"}, {"id": 2, "kind": "op"}], [[2, 1, 0]])
    [1, 2]
    >>> layout.position(2)
    (0, 1)
    """

    def __init__(self, group_of: Callable[[Mapping[str, Any]], Path] = no_groups,
                 spacing: Callable[[int, int, bool, bool], int] = no_spacing) -> None:
        self._group_of, self._spacing = group_of, spacing
        self._rank: dict[int, int] = {}
        self._column: dict[int, int] = {}
        self._rows: defaultdict[int, dict[int, int]] = defaultdict(dict)  # rank -> column -> id
        self._leaves: set[int] = set()
        self._next: dict[int, list[int]] = {}
        self._users: defaultdict[int, set[int]] = defaultdict(set)
        self._blocks: list[Block] = []
        self._block_of: dict[int, int] = {}
        self._sizes: list[int] = []  # nodes placed in each block
        self._lanes: dict[int, Lane] = {}
        self._gutters: defaultdict[tuple[int, int], _Track] = defaultdict(_Track)  # (column, track) -> its lanes
        self._gaps: defaultdict[int, list[list[tuple[float, float, int]]]] = defaultdict(list)  # rank -> tracks
        self._connectors: dict[tuple[int, int], tuple[int, tuple[float, float, int]]] = {}
        self._moved: set[int] = set()

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

    def node_at(self, column: int, rank: int) -> int | None:
        """The node in a cell, or None when it is free."""
        return self._rows[rank].get(column) if rank in self._rows else None

    def is_leaf(self, node_id: int) -> bool:
        """Whether the node is a leaf (an ``AccumulateGrad``)."""
        return node_id in self._leaves

    def uses_lane(self, source: int, target: int) -> bool:
        """Whether the edge ``source -> target`` skips ranks, and so runs along the lane of ``target``."""
        return self._rank[source] > self._rank[target] + 1

    def lane_depth(self, node_id: int) -> int | None:
        """The deepest rank that reaches the node through its lane, or None when none does."""
        lane = self._lanes.get(node_id)
        return lane.depth if lane is not None else None

    def lane_track(self, node_id: int) -> int:
        """The track of the node's lane in its gutter: 0, 1, 2… (lanes whose ranks overlap differ)."""
        return self._lanes[node_id].track

    def connector_track(self, source: int, target: int) -> int:
        """The track, in the gap above ``source``, of the connector from it to the lane of ``target``."""
        return self._connectors[source, target][0]

    def take_moved(self) -> set[int]:
        """The nodes whose lanes changed track since the last call: their edges are to be drawn again."""
        moved, self._moved = self._moved, set()
        return moved & self._lanes.keys()

    def users(self, node_id: int) -> set[int]:
        """The placed nodes that have ``node_id`` among their next functions."""
        return set(self._users.get(node_id, ()))

    def boxes(self, node_id: int) -> list[tuple[int, Hashable]]:
        """The boxes the node is in, outermost first, as ``(first block, key)``: a key per level of its path,
        and the block its run of consecutive blocks with that path prefix began at."""
        block = self._blocks[self._block_of[node_id]]
        return list(zip(block.runs, block.path, strict=True))

    def add(self, nodes: Iterable[Mapping[str, Any]], edges: Iterable[Sequence[int]]) -> list[int]:
        """Place new nodes without moving the placed ones.

        Parameters
        ----------
        nodes : iterable of dict
            Node dicts with at least ``"id"`` and ``"kind"`` (``"leaf"`` marks a leaf), and what
            ``group_of`` reads. Ids already placed are ignored.
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
        paths = {node_id: tuple(self._group_of(node)) for node_id, node in new.items()}
        order = self._order(new, paths)
        for path, run in itertools.groupby(order, key=paths.__getitem__):
            self._rank_block(path, list(run))
        self._place_columns(order)
        for node_id in order:
            for target in set(self._next[node_id]):
                if self.uses_lane(node_id, target):
                    self._grow_lane(target, self._rank[node_id])
        for node_id in order:
            for target in set(self._next[node_id]):
                if self.uses_lane(node_id, target):
                    self._connect(node_id, target)
        return order

    def remove(self, ids: Iterable[int]) -> None:
        """Forget nodes and free their cells; unknown ids are ignored. Their blocks keep their ranks."""
        gone = [i for i in ids if i in self._rank]
        touched: set[int] = set()
        for node_id in gone:
            for target in set(self._next[node_id]):
                connector = self._connectors.pop((node_id, target), None)
                if connector is not None:
                    self._gaps[self._rank[node_id]][connector[0]].remove(connector[1])
                    touched.add(target)
        for node_id in gone:
            del self._rows[self._rank.pop(node_id)][self._column.pop(node_id)]
            self._leaves.discard(node_id)
            self._sizes[self._block_of.pop(node_id)] -= 1
            for target in self._next.pop(node_id):
                self._users[target].discard(node_id)
            self._drop_lane(node_id)
        for node_id in gone:
            for user in self._users.pop(node_id, ()):
                if user in self._next:
                    self._next[user] = [t for t in self._next[user] if t != node_id]
        while self._blocks and not self._sizes[-1]:  # a graph freed from its end: what comes next takes its place
            self._blocks.pop()
            self._sizes.pop()
        for target in touched - set(gone):
            depths = [self._rank[u] for u in self._users.get(target, ()) if self.uses_lane(u, target)]
            if depths:
                self._lanes[target].depth = max(depths)
            else:
                self._drop_lane(target)

    # -- placing ------------------------------------------------------------------------------

    def _order(self, new: Mapping[int, Any], paths: Mapping[int, Path]) -> list[int]:
        """The new nodes in topological order (next functions first), each path's nodes together.

        A path whose nodes wait for no other path's goes first, the one met first (lowest id: made first)
        before the others; its nodes follow each other as long as any is ready. Only paths that wait for
        each other (never seen in one run of a program) are split.
        """
        waiting = {n: len({t for t in self._next[n] if t in new}) for n in new}
        first: dict[Path, int] = {}
        outside: defaultdict[Path, int] = defaultdict(int)  # a path's edges to new nodes of other paths not placed
        for node_id, path in paths.items():
            first[path] = min(first.get(path, node_id), node_id)
            outside[path] += len({t for t in self._next[node_id] if t in new and paths[t] != path})
        ready: defaultdict[Path, list[int]] = defaultdict(list)
        free = [(first[path], path) for path in first if outside[path] == 0]  # paths waiting for no other
        heapq.heapify(free)
        stuck = [(first[path], path) for path in first]  # any path, for paths that wait for each other

        for node_id, count in waiting.items():
            if count == 0:
                heapq.heappush(ready[paths[node_id]], node_id)
        current = self._blocks[-1].path if self._blocks else None
        order: list[int] = []
        while len(order) < len(new):
            if not ready.get(current):
                while free and not ready[free[0][1]]:
                    heapq.heappop(free)
                if free:
                    current = free[0][1]
                else:
                    current = next((path for _, path in sorted(stuck) if ready[path]), None)
                    if current is None:
                        raise ValueError("the added nodes contain a cycle")
            node_id = heapq.heappop(ready[current])
            order.append(node_id)
            for user in self._users[node_id]:
                if user in waiting:
                    waiting[user] -= 1
                    if waiting[user] == 0:
                        heapq.heappush(ready[paths[user]], user)
                    if paths[user] != current:
                        outside[paths[user]] -= 1
                        if outside[paths[user]] == 0:
                            heapq.heappush(free, (first[paths[user]], paths[user]))
        return order

    def _rank_block(self, path: Path, members: list[int]) -> None:
        """Rank a run of new nodes of one path: in the last block when it has that path, else in a new one."""
        last = self._blocks[-1] if self._blocks else None
        if last is None or last.path != path:
            common = 0 if last is None else next((i for i, (a, b) in enumerate(zip(last.path, path, strict=False))
                                                 if a != b), min(len(last.path), len(path)))
            index = len(self._blocks)
            runs = tuple(last.runs[level] if level < common else index for level in range(len(path)))
            if last is None:
                start = 0
            else:
                above = any(n in self._leaves for n in self._rows[last.end].values())
                below = any(n in self._leaves for n in members)
                start = last.end + 1 + self._spacing(len(last.path) - common, len(path) - common, above, below)
            last = Block(path, start, start, runs)
            self._blocks.append(last)
            self._sizes.append(0)
        index = len(self._blocks) - 1
        self._sizes[index] += len(members)
        for node_id in members:
            self._block_of[node_id] = index
            inside = [self._rank[t] + 1 for t in self._next[node_id] if self._block_of.get(t) == index]
            self._rank[node_id] = max(inside, default=last.start)
        in_run = set(members)
        for node_id in reversed(members):  # users first: pull each operation down to just above its users
            if node_id not in self._leaves:
                users = [self._rank[u] for u in self._users[node_id] if u in in_run]
                if users:
                    self._rank[node_id] = max(self._rank[node_id], min(users) - 1)
        last.end = max(last.end, *(self._rank[n] for n in members))

    def _place_columns(self, order: list[int]) -> None:
        """Columns for new nodes: operations by barycenter sweeps, then leaves nearest their users, then the
        operations right under new leaves once more, now facing them."""
        by_rank: defaultdict[int, list[int]] = defaultdict(list)
        for node_id in order:
            if node_id not in self._leaves:
                by_rank[self._rank[node_id]].append(node_id)
        fixed = [self._column[t] for n in order for t in self._next[n] if t in self._column]
        anchor = sum(fixed) / len(fixed) if fixed else 0.0
        ranks = sorted(by_rank)
        for sweep in range(SWEEPS):
            for rank in ranks if sweep % 2 == 0 else reversed(ranks):
                self._sweep(by_rank[rank], rank, anchor, with_leaves=False)
        keyed = []
        for leaf in (n for n in order if n in self._leaves):
            users = self._users[leaf]
            columns = [self._column[u] for u in users if u in self._column]
            direct = any(self._rank[u] == self._rank[leaf] + 1 for u in users)
            keyed.append((sum(columns) / len(columns) if columns else anchor, not direct, leaf))
        for target, _, leaf in sorted(keyed):  # on a tie, leaves joined by direct edges choose first
            self._claim(leaf, self._rank[leaf], target)
        for rank in sorted({self._rank[leaf] + 1 for *_, leaf in keyed} & by_rank.keys()):
            self._sweep(by_rank[rank], rank, anchor, with_leaves=True)

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

    def _claim(self, node_id: int, rank: int, target: float) -> None:
        """Put the node in the free column of ``rank`` nearest ``target``.

        ``target`` rounds half down; when that column is taken, the nearest free one wins,
        the right one before the left.
        """
        row = self._rows[rank]
        start = max(0, math.ceil(target - 0.5))
        for step in itertools.count():
            for column in (start + step, start - step):
                if column >= 0 and column not in row:
                    row[column] = node_id
                    self._column[node_id] = column
                    self._rank[node_id] = rank
                    return

    # -- lanes and connectors -----------------------------------------------------------------

    def _grow_lane(self, target: int, depth: int) -> None:
        """Reach the lane of ``target`` down to ``depth``; lanes in the way move to other tracks."""
        lane = self._lanes.get(target)
        if lane is None:
            lane = self._lanes[target] = Lane(self._column[target], self._rank[target], depth, -1)
            self._put_on_track(target)
            return
        if depth <= lane.depth:
            return
        lane.depth = depth
        column = self._column[target]
        track = self._gutters[column, lane.track]
        for other in track.overlapping(lane):
            track.discard(self._lanes[other])
            self._put_on_track(other)
            self._moved.add(other)

    def _put_on_track(self, target: int) -> None:
        lane, column = self._lanes[target], self._column[target]
        for track in itertools.count():
            if not self._gutters[column, track].overlapping(lane):
                lane.track = track
                self._gutters[column, track].add(target, lane)
                return

    def _drop_lane(self, target: int) -> None:
        lane = self._lanes.pop(target, None)
        if lane is not None:
            self._gutters[lane.column, lane.track].discard(lane)

    def _connect(self, source: int, target: int) -> None:
        """Give the connector from ``source`` to the lane of ``target`` a track in the gap above ``source``:
        one that no connector to another lane uses over the columns it spans."""
        if (source, target) in self._connectors:
            return
        column, lane = self._column[source], self._column[target] + 0.5
        span = (min(column - 0.5, lane - 0.2), max(column + 0.5, lane + 0.2), target)
        tracks = self._gaps[self._rank[source]]
        track = next((i for i, taken in enumerate(tracks)
                      if all(other == target or span[1] <= low or span[0] >= high for low, high, other in taken)),
                     len(tracks))
        if track == len(tracks):
            tracks.append([])
        tracks[track].append(span)
        self._connectors[source, target] = (track, span)
