"""The edges of a drawn autograd graph: their lines in chunks, the lanes into shared inputs, and the paths of both.

An edge to the next rank is one straight line with its arrowhead. One that skips ranks rises
from its source to its own track in the gap above and runs across to its target's lane, where a
dot marks the join; the lane, drawn once per target, takes it on up into the target's side (see
:mod:`app.graph_layout`). Edges added together share one path item (:class:`EdgeChunk`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QFont, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsScene

from app.graph_layout import LayeredLayout
from widgets.graph_groups import OriginGroups
from widgets.graph_items import COLUMN_PITCH, NODE_HEIGHT, PALETTE, RANK_PITCH, DrawnNode, EdgeChunk, make_pen

#: An edge's shape label sits this far below the arrowhead (its baseline), above the next box's header.
EDGE_LABEL_DROP = 12.0
#: Where lanes run in a gutter, by track: its middle first, then either side, this far apart (all of them
#: inside the gutter that the widest boxes leave).
LANE_SPACING = 3.0
LANE_OFFSETS = tuple(LANE_SPACING * ((i + 1) // 2) * (1 if i % 2 else -1) for i in range(9))
#: A connector to a lane runs this far above its source's top, then one step higher per track.
CONNECTOR_RISE = 9.0
CONNECTOR_STEP = 5.0
CONNECTOR_TRACKS = 7
#: Ranks of edges per path item when a whole graph is drawn at once.
CHUNK_RANKS = 40

#: An edge as drawn: its source and its position in the source's drawn inputs.
Edge = tuple[int, int]


def arrowhead(path: QPainterPath, start: QPointF, end: QPointF) -> None:
    """Add an arrowhead at ``end`` of the line from ``start`` to ``path``."""
    dx, dy = end.x() - start.x(), end.y() - start.y()
    length = math.hypot(dx, dy) or 1.0
    ux, uy = dx / length, dy / length
    for side in (1, -1):
        path.moveTo(end)
        path.lineTo(end.x() - 8 * ux + 4 * side * uy, end.y() - 8 * uy - 4 * side * ux)


class EdgeDrawing:
    """The drawn edges and lanes of one graph scene, kept up to date as nodes come, go and hide.

    Parameters
    ----------
    scene : QGraphicsScene
        Where the edges are drawn.
    drawn : dict
        The scene's drawn nodes by id (read, never changed here).
    layout, groups
        The scene's layout (ranks, columns, lanes) and origin boxes (collapsed ends).
    font : QFont
        The shape labels' font.
    """

    def __init__(self, scene: QGraphicsScene, drawn: dict[int, DrawnNode], layout: LayeredLayout,
                 groups: OriginGroups, font: QFont) -> None:
        self._scene, self._drawn, self._layout, self._groups, self._font = scene, drawn, layout, groups, font
        self._edge_pen, self._lane_pen = self._pens()
        self.next: dict[int, list[int]] = {}
        """The drawn targets of each source, in ``next_functions`` order."""
        self._chunks: dict[Edge, EdgeChunk] = {}
        self._lanes: dict[int, EdgeChunk] = {}
        self._lanes_rect: QRectF | None = QRectF()  # the union of the lanes' rectangles (None: to be measured)

    @staticmethod
    def _pens() -> tuple[QPen, QPen]:
        return make_pen(PALETTE["edge"], 1.2, cosmetic=True), make_pen(PALETTE["lane"], 2.0, cosmetic=True)

    def restyle(self) -> None:
        """Draw the edges and lanes in the graph palette in use (View > High Contrast)."""
        self._edge_pen, self._lane_pen = self._pens()
        for chunk in self._chunks.values():
            chunk.set_pen(self._edge_pen)
        for lane in self._lanes.values():
            lane.set_pen(self._lane_pen)

    def add(self, edges: Iterable[tuple[int, int, int]], chunked: bool, moved: set[int]) -> None:
        """Draw the edges between drawn nodes, in a chunk per ``CHUNK_RANKS`` ranks when ``chunked`` (a whole
        graph) else in one; ``moved`` are the targets whose lanes the layout moved to other tracks."""
        fresh = []
        for source, target, _ in edges:
            if source in self._drawn and target in self._drawn:
                targets = self.next.setdefault(source, [])
                fresh.append((source, len(targets)))
                targets.append(target)
        if chunked:
            groups: dict[int, list[Edge]] = {}
            for edge in fresh:
                groups.setdefault(self._layout.position(edge[0])[1] // CHUNK_RANKS, []).append(edge)
            for group in groups.values():
                self._new_chunk(group)
        elif fresh:
            self._new_chunk(fresh)
        if moved:  # lanes that changed track: edges drawn before into them are drawn again, to where they are now
            fresh_edges = set(fresh)  # drawn just now, to the lanes' new tracks
            self._rebuild_chunks({(s, p) for t in moved for s in self._layout.users(t)
                                  for p, other in enumerate(self.next.get(s, ())) if other == t} - fresh_edges)
        self.update_lanes(set(map(self._target_of, fresh)) | moved)

    def cut(self, gone: set[int]) -> tuple[QPainterPath, set[int]]:
        """Take out the edges at the nodes ``gone`` (before the layout forgets them); returns their ghost's path
        and the targets whose lanes :meth:`update_lanes` must then draw again."""
        dead_edges = [e for e in self._chunks if e[0] in gone or self._target_of(e) in gone]
        ghost = QPainterPath()
        touched_chunks = {}
        for edge in dead_edges:
            self._edge_path(ghost, *edge)
            chunk = self._chunks.pop(edge)
            touched_chunks[id(chunk)] = chunk
        touched_leaves = {t for t in map(self._target_of, dead_edges) if t not in gone}
        dead = set(dead_edges)
        for chunk in touched_chunks.values():
            chunk.edges = [e for e in chunk.edges if e not in dead]
            if chunk.edges:
                self._build_chunk(chunk)
            else:
                self._scene.removeItem(chunk)
        for node_id in gone:
            self.next.pop(node_id, None)
        return ghost, touched_leaves | (gone & self._lanes.keys())

    def redraw_at(self, ids: set[int]) -> None:
        """Draw the edges and lanes at these nodes again (they were hidden in a box or shown again)."""
        chunks = {id(chunk): chunk for edge, chunk in self._chunks.items()
                  if edge[0] in ids or self._target_of(edge) in ids}
        for chunk in chunks.values():
            self._build_chunk(chunk)
        self.update_lanes(ids & self._lanes.keys())

    def subgraph_path(self, ids: set[int]) -> QPainterPath:
        """The edges (and the lanes they join) between the nodes ``ids``, as one path."""
        path = QPainterPath()
        for source in ids:
            for position, target in enumerate(self.next.get(source, ())):
                if target in ids:
                    self._edge_path(path, source, position)
                    if self._layout.uses_lane(source, target):
                        track = self._layout.connector_track(source, target) % CONNECTOR_TRACKS
                        top = self._port(source, position).y() - CONNECTOR_RISE - CONNECTOR_STEP * track
                        self._lane_path(path, target, top)
        return path

    def lanes_rect(self) -> QRectF:
        """The scene rectangle holding every lane."""
        if self._lanes_rect is None:
            self._lanes_rect = QRectF()
            for lane in self._lanes.values():
                self._lanes_rect |= lane.sceneBoundingRect()
        return QRectF(self._lanes_rect)

    def update_lanes(self, targets: Iterable[int]) -> None:
        """Redraw the lanes of these nodes: from their deepest user's connector up into the node's side."""
        for target in targets:
            depth = self._layout.lane_depth(target) if target in self._drawn else None
            lane = self._lanes.get(target)
            if depth is None:
                if lane is not None:
                    self._scene.removeItem(self._lanes.pop(target))
                    self._lanes_rect = None
                continue
            if lane is None:
                lane = self._lanes[target] = EdgeChunk([], self._lane_pen)
                lane.setZValue(0)
                self._scene.addItem(lane)
            before = lane.sceneBoundingRect()
            drawn = self._drawn[target]
            path = QPainterPath()
            side = self._lane_path(path, target, depth * RANK_PITCH - NODE_HEIGHT / 2 - CONNECTOR_RISE)
            label = (QPointF(self._lane_x(target) + 5, side.y() + drawn.height / 2 + 14), drawn.shape)
            lane.set_geometry(path, [label] if label[1] else [], self._font)
            after = lane.sceneBoundingRect()
            if self._lanes_rect is not None and (before.isEmpty() or after.contains(before)):
                self._lanes_rect |= after  # lanes only grew: the union grows with them, no lane is measured again
            else:
                self._lanes_rect = None

    def _target_of(self, edge: Edge) -> int:
        source, position = edge
        return self.next[source][position]

    def _new_chunk(self, edges: list[Edge]) -> None:
        chunk = EdgeChunk(edges, self._edge_pen)
        chunk.setZValue(0)
        self._scene.addItem(chunk)
        for edge in edges:
            self._chunks[edge] = chunk
        self._build_chunk(chunk)

    def _build_chunk(self, chunk: EdgeChunk) -> None:
        path = QPainterPath()
        labels: list[tuple[QPointF, str]] = []
        for source, position in chunk.edges:
            label = self._edge_path(path, source, position)
            if label is not None:
                labels.append(label)
        chunk.set_geometry(path, labels, self._font)

    def _rebuild_chunks(self, edges: Iterable[Edge]) -> None:
        """Draw these edges' chunks again (each once)."""
        for chunk in {id(self._chunks[e]): self._chunks[e] for e in edges if e in self._chunks}.values():
            self._build_chunk(chunk)

    def _port(self, source: int, position: int) -> QPointF:
        """Where an edge leaves the top of its source box; inputs spread left to right."""
        drawn = self._drawn[source]
        count = len(self.next[source])
        spacing = min(18.0, (drawn.width - 16) / max(count - 1, 1))
        centre = drawn.box.pos()
        return QPointF(centre.x() + (position - (count - 1) / 2) * spacing, centre.y() - drawn.height / 2)

    def _edge_path(self, path: QPainterPath, source: int, position: int) -> tuple[QPointF, str] | None:
        """Add the edge to ``source``'s ``position``-th next function to ``path``; returns its own label, if any."""
        target = self.next[source][position]
        start = self._port(source, position)
        hidden_target = None
        if self._groups.collapsed_count:  # an end a collapsed box hides: the edge ends at the box instead
            hidden_source, hidden_target = self._groups.collapsed_box(source), self._groups.collapsed_box(target)
            if hidden_source is not None and hidden_source is hidden_target:
                return None
            if hidden_source is not None:
                rect = hidden_source.rect()
                start = QPointF(min(max(start.x(), rect.left() + 8), rect.right() - 8), rect.top())
        if self._layout.uses_lane(source, target):
            track = self._layout.connector_track(source, target) % CONNECTOR_TRACKS
            corner = QPointF(start.x(), start.y() - CONNECTOR_RISE - CONNECTOR_STEP * track)
            junction = QPointF(self._lane_x(target), corner.y())
            path.moveTo(start)
            path.lineTo(corner)
            path.lineTo(junction)
            path.addEllipse(junction, 1.5, 1.5)
            return None
        drawn = self._drawn[target]
        end = drawn.box.pos() + QPointF(0, drawn.height / 2)
        if hidden_target is not None:
            rect = hidden_target.rect()
            end = QPointF(min(max(end.x(), rect.left() + 8), rect.right() - 8), rect.bottom())
        path.moveTo(start)
        path.lineTo(end)
        arrowhead(path, start, end)
        if not drawn.shape:  # the shape flowing along an edge is the output of the node it points to
            return None
        # Just under the arrowhead, not mid-edge: there the edge crosses the header of the source's box.
        return QPointF(end.x() + 5, end.y() + EDGE_LABEL_DROP), drawn.shape

    def _lane_x(self, target: int) -> float:
        """The x of the node's lane: in the gutter right of its column, on its track."""
        column = self._layout.position(target)[0]
        return (column + 0.5) * COLUMN_PITCH + LANE_OFFSETS[self._layout.lane_track(target) % len(LANE_OFFSETS)]

    def _lane_path(self, path: QPainterPath, target: int, bottom: float) -> QPointF:
        """Add the lane of ``target`` from ``bottom`` up and into the target's side to ``path``; returns its end."""
        drawn = self._drawn[target]
        x = self._lane_x(target)
        side = drawn.box.pos() + QPointF(drawn.width / 2, 0)
        box = self._groups.collapsed_box(target) if self._groups.collapsed_count else None
        if box is not None:  # hidden: the lane ends at the collapsed box
            rect = box.rect()
            edge = rect.right() if x > rect.right() else rect.left()
            side = QPointF(x, rect.bottom()) if rect.left() <= x <= rect.right() else \
                QPointF(edge, min(max(side.y(), rect.top()), rect.bottom()))
        path.moveTo(x, bottom)
        path.lineTo(x, side.y())
        if side.x() != x:
            path.lineTo(side)
            arrowhead(path, QPointF(x, side.y()), side)
        else:
            arrowhead(path, QPointF(x, bottom), side)
        return side
