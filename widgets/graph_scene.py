"""The scene that draws a :class:`~app.graph_model.GraphModel`'s graph: node boxes, variable tags, edges, origin
boxes, the marks of what the learner points at, and the fade of removed nodes.

Each node is placed once by :class:`app.graph_layout.LayeredLayout` and never moves; a pause adds
only its own items. Node data is read from the model; the scene keeps only what it drew
(:class:`~widgets.graph_items.DrawnNode`), and which nodes it drew marked, to restyle only
those whose marks changed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, QSizeF, Qt, QVariantAnimation
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from app.graph_format import names_by_node
from app.graph_layout import LayeredLayout
from app.graph_model import GraphModel
from app.i18n import tr
from app.result_basis import has_freed
from widgets.graph_details import name_lines, shape_text
from widgets.graph_edges import EdgeDrawing
from widgets.graph_groups import OriginGroups, block_spacing, origin_keys
from widgets.graph_items import (
    COLUMN_PITCH,
    FONT_PIXELS,
    LEAF_HEIGHT,
    MAX_NODE_WIDTH,
    MIN_NODE_WIDTH,
    NODE_HEIGHT,
    PALETTE,
    RANK_PITCH,
    DrawnNode,
    OriginBox,
    make_pen,
)

#: Room a variable's tag leaves between itself and a neighbouring node.
TAG_CLEARANCE = 4.0
#: The scene index (see ``_fit_index``): drawn nodes per cell, the depth range, the smallest rectangle side.
NODES_PER_INDEX_CELL = 4
INDEX_DEPTHS = (5, 14)
INDEX_MIN_SIZE = 4000.0
FADE_MS = 400


def _output_shape_text(node: Mapping[str, Any]) -> str:
    """The shape a node's output flows along its edges with (a leaf's own where the node has none), in words."""
    shape = node.get("shape")
    return shape_text(shape if shape is not None else (node.get("leaf") or {}).get("shape"))


class GraphScene(QGraphicsScene):
    """The drawing of ``model``'s graph; the view tells it when to draw what changed.

    Parameters
    ----------
    model : GraphModel
        The graph drawn, and the marks (selected, highlighted, active, new) it is drawn with.
    font : QFont
        The font node text is drawn in (at ``FONT_PIXELS`` scene units).
    parent : QObject, optional
    """

    def __init__(self, model: GraphModel, font: QFont, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._font = QFont(font)
        self._font.setPixelSize(FONT_PIXELS)
        bold, self._small = QFont(self._font), QFont(self._font)
        bold.setBold(True)
        self._small.setPixelSize(11)
        self._box_font = QFont(self._small)
        self._box_font.setItalic(True)
        self._metrics = QFontMetricsF(self._font)
        self._fonts = {"name": self._font, "leaf": bold, "shape": self._small}
        self._heights = {style: QFontMetricsF(font).height() for style, font in self._fonts.items()}
        self._measured: dict[tuple[str, str], tuple[str, float]] = {}
        self._wrapped: dict[str, list[str]] = {}  # a node name's lines, measured once per name
        self._styles: dict[tuple, tuple[QPen, QBrush]] = {}
        self._fades: list[QVariantAnimation] = []
        self._reset()

    # ---- drawing the model ----------------------------------------------------------------

    def draw_graph(self) -> None:
        """Draw the model's whole graph, replacing whatever was drawn."""
        for fade in self._fades:
            fade.stop()
        self._fades.clear()
        self.clear()
        self._reset()
        self._add(list(self.model.nodes), self.model.edges(), chunked=True)
        self._set_roots()
        self.refresh_marks()

    def draw_diff(self, diff: Mapping[str, Any]) -> set[int]:
        """Draw what one pause's diff changed in the model, without moving what stays; returns the nodes
        drawn again (updated, or a leaf that got its name). Removed nodes fade out."""
        redrawn: set[int] = set()
        if diff.get("changed", True):
            self._remove(diff.get("removed", []))
            nodes = self.model.nodes
            added = [int(node["id"]) for node in diff.get("added", []) if int(node["id"]) in nodes]
            self._add(added, [(i, child, nr) for i in added for child, nr in nodes[i].get("next", ())],
                      chunked=False)
            for node_id in (int(node["id"]) for node in diff.get("updated", [])):
                if node_id in self.drawn:
                    self._relabel(node_id)
                    self._restyle({node_id})  # its saved tensors freed by a backward: drawn as freed
                    redrawn.add(node_id)
            for node_id in map(int, diff.get("leaves", {})):
                if node_id in self.drawn and self._relabel(node_id):
                    self._restyle({node_id})
                    redrawn.add(node_id)
            self._set_roots()
        self.refresh_marks()
        return redrawn

    def refresh_marks(self) -> None:
        """Restyle the nodes whose model marks (new, highlighted, selected, active) changed since last drawn,
        and outline the highlighted subgraph's edges."""
        model, drawn = self.model, self.drawn.keys()
        marks = {"new": model.new & drawn, "highlight": set(model.highlighted) & drawn,
                 "selected": {model.selected} & drawn, "active": {model.active} & drawn}
        changed = set().union(*(self._marks[name] ^ ids for name, ids in marks.items()))
        highlight_changed = marks["highlight"] != self._marks["highlight"]
        self._marks = marks
        self._restyle(changed & drawn)  # the marks of removed nodes went with them
        if highlight_changed:
            path = self.edges.subgraph_path(marks["highlight"])
            self._overlay.setPath(path)
            self._overlay.setVisible(not path.isEmpty())  # an empty path would export as invalid SVG

    def mark_origin(self, ids: set[int]) -> None:
        """Outline these nodes as made by the code the learner points at (replacing the last such outline)."""
        ids &= self.drawn.keys()
        previous, self.origin_marked = self.origin_marked, ids
        self._restyle((previous ^ ids) & self.drawn.keys())

    def set_collapsed(self, box: OriginBox, collapsed: bool) -> None:
        """Collapse or expand a box: hide or show its members and re-route the edges at them."""
        if box.collapsed != collapsed:
            self._show_collapsed(self.groups.set_collapsed(box, collapsed))

    def retranslate(self) -> None:
        """Label the origin boxes, the freed marks, and the shapes on boxes and edges ("scalar") again in the current
        language."""
        self.groups.relabel()
        reshaped = set()
        for node_id, drawn in self.drawn.items():
            if drawn.freed_mark is not None:
                self._mark_freed(drawn, False)
                self._mark_freed(drawn, True)
            shape = _output_shape_text(self.model.nodes[node_id])
            if shape != drawn.shape:
                drawn.shape = shape
                self._relabel(node_id)  # a leaf's box shows its shape
                reshaped.add(node_id)
        if reshaped:
            self.edges.redraw_at(reshaped)  # the shape along the edges into them

    # ---- where things are -----------------------------------------------------------------

    def rect_of(self, ids: Iterable[int]) -> QRectF:
        """The scene rectangle of these nodes' boxes and variable tags."""
        rect = QRectF()
        for node_id in ids:
            drawn = self.drawn[node_id]
            rect |= drawn.box.sceneBoundingRect()
            if drawn.tag is not None:
                rect |= drawn.tag.sceneBoundingRect()
        return rect

    def content_rect(self) -> QRectF:
        """The scene rectangle holding every node, tag, lane and box (line boxes allowed for, module boxes measured)."""
        if not self.drawn:
            return QRectF()
        rect = self._extent.adjusted(-10, -26, 10, 10) | self.rect_of(i for i in set(self.model.roots.values())
                                                                      if i in self.drawn)
        return rect | self.edges.lanes_rect() | self.groups.outer_rect()

    def box_rects(self, rect: QRectF) -> list[QRectF]:
        """The scene rectangles of the shown node boxes in or across ``rect``.

        Looked up by rank band: asking the scene for the items in the rectangle (edges, texts, boxes)
        cost a step more than all the rest of framing.
        """
        first, last = (int((y + sign * LEAF_HEIGHT / 2) // RANK_PITCH) for y, sign in ((rect.top(), -1),
                                                                                       (rect.bottom(), 1)))
        boxes = (self.drawn[i].box for row in range(first, last + 1) for i in self._rows.get(row, ()))
        return [r for r in (box.sceneBoundingRect() for box in boxes if box.isVisible()) if r.intersects(rect)]

    def outputs(self) -> list[int]:
        """The nodes of the deepest rank: the newest outputs of a graph drawn whole."""
        if not self.drawn:
            return []
        deepest = max(self.layout.position(i)[1] for i in self.drawn)
        return [i for i in self.drawn if self.layout.position(i)[1] == deepest]

    # ---- building -------------------------------------------------------------------------

    def _reset(self) -> None:
        """Empty state over a cleared scene."""
        self.layout = LayeredLayout(lambda node: origin_keys(node.get("origin")),
                                    block_spacing(NODE_HEIGHT / 2, LEAF_HEIGHT / 2, RANK_PITCH))
        self.drawn: dict[int, DrawnNode] = {}
        self._tagged: set[int] = set()  # the nodes drawn with variable names (see DrawnNode.names)
        self._marks: dict[str, set[int]] = {"new": set(), "highlight": set(), "selected": set(), "active": set()}
        self.origin_marked: set[int] = set()
        self._extent = QRectF()  # every node box's union, kept as nodes come so framing need not scan them
        self._rows: dict[int, set[int]] = {}  # node ids by the rank band their centre is in, for framing's look-ups
        self._index_rect: QRectF | None = None  # the scene index's rectangle, once the graph has one
        self.setSceneRect(QRectF())
        self.text_layer = QGraphicsRectItem()
        self.text_layer.setFlag(QGraphicsItem.ItemHasNoContents)
        self.text_layer.setZValue(3)
        self.addItem(self.text_layer)
        self.groups = OriginGroups(self, self._box_font, lambda i: self.drawn[i].box.sceneBoundingRect(),
                                   self.text_layer)
        self.edges = EdgeDrawing(self, self.drawn, self.layout, self.groups, self._small)
        self._overlay = QGraphicsPathItem()
        self._overlay.setPen(make_pen(PALETTE["highlight"], 2.5, cosmetic=True))
        self._overlay.setZValue(1)
        self._overlay.setVisible(False)
        self.addItem(self._overlay)

    def _add(self, ids: list[int], edges: list[tuple[int, int, int]], chunked: bool) -> None:
        """Place and draw the model's nodes ``ids`` and their edges."""
        nodes = [self.model.nodes[i] for i in ids]
        placed = self.layout.add(nodes, edges)
        moved = self.layout.take_moved()  # lanes this add moved to other tracks
        for node_id in placed:
            node = self.model.nodes[node_id]
            self._draw_node(node_id, node)
            self.groups.add(node_id, node.get("origin"), self.layout.boxes(node_id))
        self.groups.refresh()
        if self.groups.collapsed_count:
            self._show_collapsed([i for i in placed if self.groups.collapsed_box(i) is not None])
        self.edges.add(edges, chunked, moved)
        adding = set(ids)
        for node_id in placed:  # a node placed beside a tagged one: that tag makes room for it
            column, rank = self.layout.position(node_id)
            for side in (-1, 1):
                other = self.layout.node_at(column + side, rank)
                if other is not None and other not in adding and self.drawn[other].tag is not None:
                    self.removeItem(self.drawn[other].tag)
                    self.drawn[other].tag = self._make_tag(self.drawn[other], self.drawn[other].names)
        self._fit_index()

    def _fit_index(self) -> None:
        """Keep the scene's index rectangle around the graph, and its cells small, as the graph grows.

        Left to itself the scene grows its rectangle to every new item's bounds, and each growth
        rebuilds the whole index: at 1,000 RNN steps that was most of every step's repaint. Here
        the rectangle grows by doubling, so the index is rebuilt a few times in all. Qt also keeps
        the index depth it chose for the first items, which for a tall graph left about 2,000
        items in each cell a repaint touched (22.7 ms a repaint at 1,000 steps; 7.4 ms at depth 8).
        """
        content = self.content_rect()
        if self._index_rect is None or not self._index_rect.contains(content):
            margin_x = max(content.width(), INDEX_MIN_SIZE) / 2
            margin_y = max(content.height(), INDEX_MIN_SIZE) / 2
            self._index_rect = content.adjusted(-margin_x, -margin_y, margin_x, margin_y)
            self.setSceneRect(self._index_rect)
        low, high = INDEX_DEPTHS
        depth = min(high, max(low, (len(self.drawn) // NODES_PER_INDEX_CELL).bit_length()))
        if depth > self.bspTreeDepth():
            self.setBspTreeDepth(depth)

    def _draw_node(self, node_id: int, node: Mapping[str, Any]) -> None:
        column, rank = self.layout.position(node_id)
        centre = QPointF(column * COLUMN_PITCH, rank * RANK_PITCH)
        lines = [self._measure(text, style) for text, style in self._node_lines(node)]
        width = self._box_width(lines)
        height = LEAF_HEIGHT if len(lines) > 1 else NODE_HEIGHT
        if node.get("kind") == "custom":
            box: QGraphicsRectItem | QGraphicsPathItem = QGraphicsPathItem(self._cut_corners(width, height))
        else:
            box = QGraphicsRectItem(-width / 2, -height / 2, width, height)
        box.setPos(centre)
        box.setZValue(2)
        box.setData(0, node_id)
        self.addItem(box)
        self._extent |= box.sceneBoundingRect()
        self._rows.setdefault(int(centre.y() // RANK_PITCH), set()).add(node_id)
        drawn = DrawnNode(node_id, box, width, height, _output_shape_text(node))
        self.drawn[node_id] = drawn
        self._draw_texts(drawn, lines)
        self._paint(drawn, node, "")  # unmarked until refresh_marks: the origin boxes fit the plain outline

    def _node_lines(self, node: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(text, style)`` lines of a node's box: a leaf's variable name and shape, else the node's name,
        on two lines when one is too narrow for it (``BackwardHookFunctionBackward`` was cut to ``…FunctionB…``)."""
        if node.get("kind") == "leaf":
            leaf = node.get("leaf") or {}
            name = node.get("variable") or "(unnamed leaf)"
            return [(name, "leaf"), (shape_text(leaf.get("shape", node.get("shape"))), "shape")]
        name = node.get("name", "?")
        if name not in self._wrapped:
            self._wrapped[name] = name_lines(name, self._metrics.horizontalAdvance, MAX_NODE_WIDTH - 16)
        return [(line, "name") for line in self._wrapped[name]]

    @staticmethod
    def _box_width(lines: list[tuple[str, float, str]]) -> float:
        return min(MAX_NODE_WIDTH, max(MIN_NODE_WIDTH, max(width for _, width, _ in lines) + 16))

    def _measure(self, text: str, style: str) -> tuple[str, float, str]:
        """``(shown text, width, style)``: the text elided to fit the widest box, measured once per text."""
        key = (text, style)
        if key not in self._measured:
            metrics = QFontMetricsF(self._fonts[style])
            shown = metrics.elidedText(text, Qt.ElideRight, MAX_NODE_WIDTH - 16)
            self._measured[key] = (shown, metrics.horizontalAdvance(shown))
        return (*self._measured[key], style)

    def _draw_texts(self, drawn: DrawnNode, lines: list[tuple[str, float, str]]) -> None:
        for text in drawn.texts:
            self.removeItem(text)
        drawn.texts = []
        centre = drawn.box.pos()
        top = centre.y() - sum(self._heights[style] for *_, style in lines) / 2
        for shown, width, style in lines:
            item = QGraphicsSimpleTextItem(shown, self.text_layer)
            item.setFont(self._fonts[style])
            item.setBrush(QColor(PALETTE["text"]))
            item.setPos(centre.x() - width / 2, top)
            item.setData(0, drawn.node_id)
            drawn.texts.append(item)
            top += self._heights[style]

    @staticmethod
    def _cut_corners(width: float, height: float) -> QPainterPath:
        """An octagon-like outline that sets custom Function nodes apart from built-in ones."""
        w, h, c = width / 2, height / 2, 7.0
        path = QPainterPath(QPointF(-w + c, -h))
        for x, y in ((w - c, -h), (w, -h + c), (w, h - c), (w - c, h), (-w + c, h), (-w, h - c), (-w, -h + c)):
            path.lineTo(x, y)
        path.closeSubpath()
        return path

    def _relabel(self, node_id: int) -> bool:
        """Draw a node's text again when the model's dict says otherwise (a leaf got its name); returns whether."""
        drawn = self.drawn[node_id]
        lines = [self._measure(text, style) for text, style in self._node_lines(self.model.nodes[node_id])]
        if [shown for shown, *_ in lines] == [item.text() for item in drawn.texts]:
            return False
        drawn.width = self._box_width(lines)
        drawn.box.setRect(-drawn.width / 2, -drawn.height / 2, drawn.width, drawn.height)
        self._draw_texts(drawn, lines)
        self.groups.resized(node_id)
        self.edges.update_lanes([node_id])
        return True

    def _set_roots(self) -> None:
        """Move the variable tags (``h →``) to the nodes the model's variables now point to."""
        by_node = names_by_node(self.model.roots)
        for node_id in self._tagged | by_node.keys():
            drawn = self.drawn.get(node_id)
            names = sorted(by_node.get(node_id, []))
            if drawn is None or names == drawn.names:
                continue
            drawn.names = names
            (self._tagged.add if names else self._tagged.discard)(node_id)
            if drawn.tag is not None:
                self.removeItem(drawn.tag)
                drawn.tag = None
            if names and self.model.nodes[node_id].get("kind") != "leaf":
                drawn.tag = self._make_tag(drawn, names)
            self._restyle({node_id})

    def _room_beside(self, node_id: int, side: int) -> float:
        """The free width between the node's box and its neighbour's on ``side`` (-1 left, 1 right) in its rank."""
        column, rank = self.layout.position(node_id)
        drawn = self.drawn[node_id]
        neighbour = self.layout.node_at(column + side, rank)
        if neighbour is None or neighbour not in self.drawn:
            return math.inf
        return COLUMN_PITCH - drawn.width / 2 - self.drawn[neighbour].width / 2

    def _make_tag(self, drawn: DrawnNode, names: list[str]) -> QGraphicsPathItem:
        """The ``h →`` tag left of the node; where a neighbour leaves no room there, right of it (``← h``), and
        shortened where neither side has room for all of it: a tag never covers another node."""
        room = {side: self._room_beside(drawn.node_id, side) - 3 - TAG_CLEARANCE for side in (-1, 1)}
        whole = self._metrics.horizontalAdvance(", ".join(names) + " →") + 10
        side = -1 if whole <= room[-1] or room[-1] >= room[1] else 1
        arrow = self._metrics.horizontalAdvance(" →")
        shown = self._metrics.elidedText(", ".join(names), Qt.ElideRight, min(150.0, room[side] - 10 - arrow))
        text = shown + " →" if side < 0 else "← " + shown
        width = self._metrics.horizontalAdvance(text) + 10
        height = self._metrics.height() + 4
        near = drawn.box.pos().x() + side * (drawn.width / 2 + 3)
        right = near if side < 0 else near + width
        path = QPainterPath()
        path.addRoundedRect(QRectF(right - width, drawn.box.pos().y() - height / 2, width, height), 4, 4)
        tag = QGraphicsPathItem(path, self.text_layer)
        tag.setData(0, drawn.node_id)
        label = QGraphicsSimpleTextItem(text, tag)
        label.setFont(self._font)
        self._colour_tag(tag)
        label.setPos(right - width + 5, drawn.box.pos().y() - self._metrics.height() / 2)
        label.setData(0, drawn.node_id)
        return tag

    # ---- removing -------------------------------------------------------------------------

    def _remove(self, ids: Iterable[int]) -> None:
        """Forget nodes and their edges; their drawing fades out."""
        gone = {int(i) for i in ids} & self.drawn.keys()
        if not gone:
            return
        ghost, touched = self.edges.cut(gone)
        fading: list[QGraphicsItem] = [self.addPath(ghost, make_pen(PALETTE["removed"], 1.2, cosmetic=True))]
        for node_id in gone:
            drawn = self.drawn.pop(node_id)
            self._rows[int(drawn.box.pos().y() // RANK_PITCH)].discard(node_id)
            drawn.box.setBrush(QColor(PALETTE["removed"]).lighter(120))
            items = drawn.items()
            for item in items:  # a ghost is no node: the id may come back, drawn anew, while this fades
                item.setData(0, None)
            fading += items
        self.layout.remove(gone)
        self.groups.remove(gone)
        self._extent = QRectF()
        for drawn in self.drawn.values():
            self._extent |= drawn.box.sceneBoundingRect()
        self.origin_marked -= gone
        self._tagged -= gone
        self.edges.update_lanes(touched)
        self._fade_out(fading)

    def _fade_out(self, items: list[QGraphicsItem]) -> None:
        fade = QVariantAnimation(self)
        fade.setDuration(FADE_MS)
        fade.setStartValue(1.0)
        fade.setEndValue(0.0)

        def set_opacity(value: float) -> None:
            for item in items:
                item.setOpacity(value)

        def finish() -> None:
            for item in items:
                if item.scene() is self:
                    self.removeItem(item)
            self._fades.remove(fade)

        fade.valueChanged.connect(set_opacity)
        fade.finished.connect(finish)
        self._fades.append(fade)
        fade.start(QVariantAnimation.DeleteWhenStopped)

    # ---- styles ---------------------------------------------------------------------------

    def restyle_theme(self) -> None:
        """Draw everything drawn again in the graph palette in use (View > High Contrast switched it)."""
        self._styles.clear()
        self._overlay.setPen(make_pen(PALETTE["highlight"], 2.5, cosmetic=True))
        self.edges.restyle()
        for box in self.groups:
            box.restyle()
        for drawn in self.drawn.values():
            for text in drawn.texts:
                text.setBrush(QColor(PALETTE["text"]))
            if drawn.tag is not None:
                self._colour_tag(drawn.tag)
            if drawn.freed_mark is not None:  # drawn anew below, in the palette's colours
                self._mark_freed(drawn, False)
        self._restyle(self.drawn.keys())

    @staticmethod
    def _colour_tag(tag: QGraphicsPathItem) -> None:
        fill, outline = PALETTE["tag"]
        tag.setBrush(QColor(fill))
        tag.setPen(make_pen(outline))
        for label in tag.childItems():
            label.setBrush(QColor(PALETTE["text"]))

    def _restyle(self, ids: Iterable[int]) -> None:
        """Colour boxes by kind and by the strongest of their marks: active, selected, origin, highlighted, new."""
        model = self.model
        for node_id in ids:
            states = (("active", node_id == model.active), ("selected", node_id == model.selected),
                      ("origin", node_id in self.origin_marked), ("highlight", node_id in model.highlighted),
                      ("new", node_id in model.new))
            self._paint(self.drawn[node_id], model.nodes[node_id], next((state for state, on in states if on), ""))

    def _paint(self, drawn: DrawnNode, node: Mapping[str, Any], state: str) -> None:
        """Colour a node's box by its kind and ``state``, and mark it freed when a backward freed its saved tensors."""
        kind = node.get("kind", "op")
        kind = "root" if kind == "op" and drawn.names else kind
        freed = has_freed(node)
        pen, brush = self._style(kind, state, freed)
        drawn.box.setPen(pen)
        drawn.box.setBrush(brush)
        self._mark_freed(drawn, freed)

    def _style(self, kind: str, state: str, freed: bool = False) -> tuple[QPen, QBrush]:
        """The pen and brush of a node of ``kind`` in ``state``; one whose saved tensors a backward freed is
        grey and dashed (a state's outline colour stays, so a selected or active freed node still shows it)."""
        key = (kind, state, freed)
        if key not in self._styles:
            fill, outline = PALETTE["freed"] if freed else PALETTE[kind]
            dashed = Qt.DashLine if kind == "custom" or freed else Qt.SolidLine
            if state == "active":
                fill, outline = PALETTE["active"]
            elif state:
                outline = PALETTE[state]
            self._styles[key] = (make_pen(outline, 3.0 if state else 1.2, style=dashed), QBrush(QColor(fill)))
        return self._styles[key]

    def _mark_freed(self, drawn: DrawnNode, freed: bool) -> None:
        """Put the small ``freed`` mark on the top-left corner of a node whose saved tensors were freed, or take
        it off: the node is in the graph still, but a second backward through it raises."""
        if (drawn.freed_mark is not None) == freed:
            return
        if not freed:
            self.removeItem(drawn.freed_mark)
            drawn.freed_mark = None
            return
        mark = QGraphicsPathItem(self.text_layer)
        label = QGraphicsSimpleTextItem(tr("freed"), mark)
        label.setFont(self._small)
        text = label.boundingRect()  # the glyphs' own height: a fallback font's (Chinese) is taller than the font's
        width, height = text.width() + 8, text.height() + 2
        corner = drawn.box.pos() + QPointF(-drawn.width / 2 + 4, -drawn.height / 2 - height / 2)
        path = QPainterPath()
        path.addRoundedRect(QRectF(corner, QSizeF(width, height)), 3, 3)
        mark.setPath(path)
        mark.setBrush(QColor(PALETTE["paper"]))
        mark.setPen(make_pen(PALETTE["freed"][1], 1.0, cosmetic=True))
        mark.setData(0, drawn.node_id)
        mark.setToolTip(tr("saved tensors freed"))
        label.setBrush(QColor(PALETTE["freed_text"]))
        label.setPos(corner + QPointF(4, 1))
        label.setData(0, drawn.node_id)
        mark.setVisible(drawn.box.isVisible())
        drawn.freed_mark = mark

    def _show_collapsed(self, ids: Iterable[int]) -> None:
        """Hide the nodes a collapsed box holds, show the others, and redraw the edges at them."""
        ids = set(ids) & self.drawn.keys()
        for node_id in ids:
            shown = self.groups.collapsed_box(node_id) is None
            for item in self.drawn[node_id].items():
                item.setVisible(shown)
        self.edges.redraw_at(ids)
