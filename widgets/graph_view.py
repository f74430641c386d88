"""The autograd graph of the current pause, drawn as a layered diagram that grows as the learner steps.

Features
--------
- Operation nodes labelled with their name (``MulBackward0``); ``AccumulateGrad`` leaves in a
  band at the top, labelled with the leaf's variable name and shape; custom ``Function``
  nodes in orange with a dashed, cut-corner outline; variables attached to the node they
  point to by a tag (``h →``); edges labelled with the shape of the tensor flowing along them.
- Edges point the way ``next_functions`` (and the gradients of a backward) go: from a node
  toward the leaves, each line one edge from the node it leaves. An edge that skips rows rises
  to its own track above its node and joins its target's lane (a dot marks the join), one line
  drawn once and labelled once for a weight used by every step; no line passes over another
  node or runs on top of a line into another node (see :mod:`app.graph_layout`).
- Nodes new at this pause are outlined in amber; removed ones fade out; nothing already drawn
  moves when the graph grows. A node whose saved tensors a backward freed is grey with a dashed
  outline and a small ``freed`` mark: it is still in the graph, but a second backward through it raises.
- The view frames itself (``Follow new nodes``, on by default): after every pause the nodes
  the step made and their direct inputs are in view at a readable zoom (node text at least
  9 px tall), the whole graph when it fits at that zoom. The learner's own zoom and scroll
  stay while they still show the new nodes. Fit frames the same way; Overview shows all. No node is
  left cut in two by the view's edge when the view frames itself.
  Off, the view never moves by itself, except that it never shows nothing but empty space.
- Origin boxes (see :mod:`widgets.graph_groups`): a light box around the nodes one execution
  of one line made (``line 72 · pass 2``) and one around each module's nodes (``model.rnn``),
  collapsible to one box; edges of hidden members end at the box.
- Wheel to zoom under the mouse, drag to pan, export to PNG and SVG.
- Click a node: :attr:`GraphView.node_selected`, :attr:`GraphView.origin_selected` (and
  :attr:`GraphView.span_selected` for a node made while stepping) and its details (the line
  and operation that made it, the other nodes that operation made, saved tensors, next
  functions; for a leaf its tensor and ``.grad``) below the graph, or beside it when the panel is wide and short;
  the pane never takes room from the drawing when a node is clicked (its text scrolls).
- :meth:`GraphView.highlight_origin_line` outlines the nodes a code line's executions made;
  :meth:`GraphView.highlight_origin_at` those of the innermost operation at a code position.
- With no nodes, the canvas says how one appears.
- :meth:`GraphView.highlight_variable` outlines a variable's subgraph;
  :meth:`GraphView.set_active_node` marks the node a backward replay is at.
- Big graphs stay fast: text is hidden when zoomed out, edges are drawn as one path item per
  added piece, and each pause adds only its own items (a 1,000-step RNN, 5,004 nodes, is
  laid out and drawn in well under a second; one more step costs a few milliseconds).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, QSizeF, Qt, QVariantAnimation, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QTextCharFormat,
    QTextCursor,
    QTransform,
)
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.graph_layout import LayeredLayout
from app.i18n import N_, join_words, tr
from app.result_basis import has_freed
from widgets.graph_details import code_spans, name_lines, node_details, shape_text
from widgets.graph_export import write_png, write_svg
from widgets.graph_framing import FRAME_MARGIN, fit_scale, scroll_to_show, show_uncut, visible_rect, zoom_on
from widgets.graph_groups import OriginGroups, block_spacing, origin_keys
from widgets.graph_items import PALETTE, DrawnNode, EdgeChunk, OriginBox, make_pen
from widgets.graph_legend import GraphLegend
from widgets.translated_texts import TranslatedTexts

#: Scene units between the centres of neighbouring columns and ranks.
COLUMN_PITCH = 210.0
RANK_PITCH = 72.0
#: Box sizes; the widest box leaves a gutter of at least 30 units for lanes.
NODE_HEIGHT = 26.0
LEAF_HEIGHT = 38.0
MIN_NODE_WIDTH = 96.0
MAX_NODE_WIDTH = 180.0
#: Below this zoom factor node text is not drawn (level of detail).
TEXT_MIN_SCALE = 0.4
MIN_SCALE = 0.002
MAX_SCALE = 4.0
#: Node text is this many scene units tall; framing keeps it at least MIN_TEXT_PIXELS on screen.
FONT_PIXELS = 12
MIN_TEXT_PIXELS = 9
#: The least zoom framing uses, and the one it prefers when the graph does not fit.
MIN_READABLE_SCALE = MIN_TEXT_PIXELS / FONT_PIXELS
READABLE_SCALE = 0.8
#: Framing never zooms in beyond this.
MAX_FRAME_SCALE = 1.5
#: Wider than this and than SIDE_DETAILS_ASPECT times its height, the details pane sits beside the graph: in a
#: short panel the rows below would be the graph's. A full-height pane beside a tall graph was mostly empty.
SIDE_DETAILS_WIDTH = 820
SIDE_DETAILS_ASPECT = 3.0
#: The details pane's share of the panel, beside the graph at most SIDE_DETAILS_MAX pixels wide. A node's
#: details scroll in it: a click never takes room from the drawing (it pushed the leaves out of view).
DETAILS_SHARE = 0.22
SIDE_DETAILS_MAX = 380
EMPTY_TEXT = N_("No tensor requires grad yet: step over a line that creates one with requires_grad=True.")
#: The empty-state text in a function that a backward pass called (a hook): its own variables hold no graph.
BACKWARD_TEXT = N_("backward() is running and called this function: autograd runs it with grad mode off, and none "
                   "of its variables requires grad, so it has no graph of its own. The graph backward is walking "
                   "is its caller's: select that frame in the Call stack to see it.")
#: The empty-state text once leaves exist that no operation has used yet (autograd makes no node for them).
WAITING_TEXT = N_("{names} requires grad, but no operation has used it yet, so autograd has no node: "
                  "step over a line that computes with it.")
WAITING_TEXT_PLURAL = N_("{names} require grad, but no operation has used them yet, so autograd has no node: "
                         "step over a line that computes with them.")
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
#: Room a variable's tag leaves between itself and a neighbouring node.
TAG_CLEARANCE = 4.0
#: Ranks of edges per path item when a whole graph is drawn at once.
CHUNK_RANKS = 40
#: The scene index (see ``_fit_index``): drawn nodes per cell, the depth range, the smallest rectangle side.
NODES_PER_INDEX_CELL = 4
INDEX_DEPTHS = (5, 14)
INDEX_MIN_SIZE = 4000.0
FADE_MS = 400


class GraphView(QWidget):
    """The autograd graph of the current pause, with a details pane for the clicked node.

    Feed it the engine's graph data: :meth:`set_graph` with a whole graph, then
    :meth:`apply_diff` at every pause. Node ids are the engine's.

    Parameters
    ----------
    parent : QWidget, optional
    """

    node_selected = Signal(int)
    """The learner clicked a node; carries its id."""
    node_hovered = Signal(list)
    """The mouse moved onto a node (the variables it stands for: its outputs' names, a leaf's name) or off ([])."""
    origin_selected = Signal(str, int)
    """The learner clicked a node or an origin box whose line is known; carries the origin's file and line."""
    span_selected = Signal(str, list)
    """The learner clicked a node made while stepping (after :attr:`origin_selected`); carries its file and
    operation span ``[line, col, end_line, end_col]``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._scene = QGraphicsScene(self)
        self._view = QGraphicsView(self._scene)
        self._view.setObjectName("graph_canvas")
        self._view.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self._view.setDragMode(QGraphicsView.ScrollHandDrag)
        self._view.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self._view.setOptimizationFlags(QGraphicsView.DontSavePainterState | QGraphicsView.DontAdjustForAntialiasing)
        # A fixed, huge scene rect: adding nodes never changes the scroll range, so the view never jumps.
        self._view.setSceneRect(QRectF(-1e7, -1e7, 2e7, 2e7))
        self._view.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._view.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._view.viewport().installEventFilter(self)
        self._view.viewport().setMouseTracking(True)
        self._hovered: int | None = None
        self._details = QPlainTextEdit()
        self._details.setObjectName("graph_details")
        self._details.setReadOnly(True)
        self._texts = TranslatedTexts()
        self._waiting: list[str] = []
        self._in_backward = False
        self._texts.set(self._details.setPlaceholderText,
                        "Click a node to see what it saved for backward and where its gradients go.")
        self._toolbar = toolbar = QToolBar()
        toolbar.setObjectName("graph_toolbar")
        for text, tip, slot in (
                (N_("Fit"), N_("Frame the newest nodes at a readable zoom (all of the graph when it fits)"),
                 self.fit_to_view),
                (N_("All"), N_("Show the whole graph, however small"), self.show_overview),
                ("+", N_("Zoom in"), partial(self.zoom, 1.25)), ("−", N_("Zoom out"), partial(self.zoom, 0.8))):
            action = toolbar.addAction(text)
            if text not in "+−":
                self._texts.set(action.setText, text)
            self._texts.set(action.setToolTip, tip)
            action.triggered.connect(slot)
        self._follow = toolbar.addAction("")
        self._texts.set(self._follow.setText, "Follow new nodes")
        self._follow.setObjectName("follow_new_nodes")
        self._follow.setCheckable(True)
        self._follow.setChecked(True)
        self._texts.set(self._follow.setToolTip,
                        "After each step, show the nodes it made and their inputs at a readable zoom")
        export = QToolButton()
        self._texts.set(export.setText, "Export")
        self._texts.set(export.setToolTip, "Save the whole graph as a picture")
        export.setPopupMode(QToolButton.InstantPopup)
        menu = QMenu(export)
        png = menu.addAction("")
        png.triggered.connect(self._on_export_png_triggered)
        self._texts.set(png.setText, "PNG image…")
        svg = menu.addAction("")
        svg.triggered.connect(self._on_export_svg_triggered)
        self._texts.set(svg.setText, "SVG drawing…")
        export.setMenu(menu)
        toolbar.addWidget(export)
        self._empty = QLabel(tr(EMPTY_TEXT), self._view.viewport())
        self._empty.setObjectName("graph_empty_message")
        self._empty.setWordWrap(True)
        self._empty.setAlignment(Qt.AlignCenter)
        self._empty.setStyleSheet("QLabel { background: #f8fafc; color: #475569; border: 1px solid #cbd5e1;"
                                  " border-radius: 6px; padding: 12px 16px; }")
        self._empty.setAttribute(Qt.WA_TransparentForMouseEvents)
        self._splitter = QSplitter(Qt.Vertical)
        self._splitter.setObjectName("graph_splitter")
        self._splitter.addWidget(self._view)
        self._legend = GraphLegend()
        below = QWidget()  # the legend heads the details pane: the drawing keeps all of its room
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.setSpacing(2)
        below_layout.addWidget(self._legend)
        below_layout.addWidget(self._details)
        self._splitter.addWidget(below)
        self._splitter.setStretchFactor(0, 3)
        self._splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(toolbar)
        layout.addWidget(self._splitter)

        self._font = QFont(self.font())
        self._font.setPixelSize(FONT_PIXELS)  # scene units, so the screen, PNG and SVG agree on text sizes
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        self._small = QFont(self._font)
        self._small.setPixelSize(11)
        self._box_font = QFont(self._small)
        self._box_font.setItalic(True)
        self._metrics = QFontMetricsF(self._font)
        self._arrow = self._metrics.horizontalAdvance(" →")
        self._fonts = {"name": self._font, "leaf": self._bold, "shape": self._small}
        self._heights = {style: QFontMetricsF(font).height() for style, font in self._fonts.items()}
        self._measured: dict[tuple[str, str], tuple[str, float]] = {}
        self._wrapped: dict[str, list[str]] = {}  # a node name's lines, measured once per name
        self._edge_pen = make_pen(PALETTE["edge"], 1.2, cosmetic=True)
        self._lane_pen = make_pen(PALETTE["lane"], 2.0, cosmetic=True)
        self._styles: dict[tuple, tuple[QPen, QBrush]] = {}
        self._press: QPointF | None = None
        self._fades: list[QVariantAnimation] = []
        self._sized = False
        self._fresh = True
        self._user_view = False  # the learner zoomed or panned since the view last framed itself
        self._reset()
        self._update_empty()

    # -- public API -------------------------------------------------------------------------

    def set_graph(self, graph: Mapping[str, Any], new: Iterable[int] = ()) -> None:
        """Draw a whole graph, replacing whatever was drawn.

        Resets the view: the whole graph when it is readable that way, else a readable zoom
        around its outputs (:meth:`show_overview` shows all of it).

        Parameters
        ----------
        graph : dict
            ``{"nodes": [node, ...], "edges": [[from_id, to_id, input_nr], ...], "roots": {name: id}}``.
        new : iterable of int, optional
            The nodes the step shown made, outlined as new (a past step's, or the live one's).
        """
        for fade in self._fades:
            fade.stop()
        self._fades.clear()
        self._scene.clear()
        self._reset()
        self._add(graph["nodes"], graph["edges"], chunked=True)
        self._new = {int(i) for i in new} & self._drawn.keys()
        self._restyle(self._new)
        self._set_roots(graph.get("roots", {}))
        self._view.setTransform(QTransform())
        self._view.centerOn(0, 0)
        self._update_detail()
        self._fresh = not self._drawn  # an empty graph: the first nodes a step brings get framed afresh
        self._frame(self._outputs(), keep=False)
        self._update_empty()

    def apply_diff(self, diff: Mapping[str, Any]) -> None:
        """Bring the drawing up to date with one pause's diff, without moving what stays.

        Nodes added are outlined as new (until the next diff), removed ones fade out.

        Parameters
        ----------
        diff : dict
            ``{"changed", "added", "removed", "edges_added", "roots", "leaves"}`` and
            optionally ``"updated"`` (node dicts replacing those sent before).
        """
        previous_new = self._new
        self._new = set()
        if diff.get("changed", True):
            self._remove(diff.get("removed", []))
            added = self._add(diff.get("added", []), diff.get("edges_added", []), chunked=False)
            self._new = set(added)
            for node in diff.get("updated", []):
                self._update_node(node)
            for node_id, name in diff.get("leaves", {}).items():
                drawn = self._drawn.get(int(node_id))
                if drawn is not None and drawn.node.get("variable") != name:
                    self._update_node({**drawn.node, "variable": name})
            self._set_roots(diff.get("roots", self._roots))
            if self._highlight_name is not None:
                self.highlight_variable(self._highlight_name)
        self._restyle((previous_new | self._new) & self._drawn.keys())
        if self._new and (self._follow.isChecked() or self._fresh):
            self._frame(self._new, keep=not self._fresh)
            self._fresh = False
        elif self._drawn and not self._shows_a_node():
            self._frame(self._new or self._outputs(), keep=False)
        self._update_empty()

    def set_follow_new(self, enabled: bool) -> None:
        """Whether each diff frames its new nodes and their inputs at a readable zoom (default on).

        Off, the view moves by itself only when it would show nothing but empty space.
        """
        self._follow.setChecked(enabled)

    def highlight_nodes(self, ids: Iterable[int]) -> None:
        """Outline these nodes and the edges between them; an empty list clears the highlight."""
        self._highlight_name = None
        self._set_highlight(set(ids))

    def highlight_variable(self, name: str | None) -> None:
        """Outline the subgraph of a variable: its node and everything it reaches; None clears.

        A name the graph does not know clears the highlight. The highlight follows the
        variable through later diffs until another highlight replaces it.
        """
        start = self._roots.get(name) if name is not None else None
        if start is None and name is not None:
            start = next((i for i, d in self._drawn.items() if d.node.get("variable") == name), None)
        reached: set[int] = set()
        stack = [start] if start in self._drawn else []
        while stack:
            node_id = stack.pop()
            if node_id not in reached:
                reached.add(node_id)
                stack.extend(t for t in self._next.get(node_id, ()) if t in self._drawn)
        self._set_highlight(reached)
        self._highlight_name = name

    def set_active_node(self, node_id: int | None) -> None:
        """Mark the node a backward replay is at and scroll it into view; None clears the mark."""
        previous, self._active = self._active, node_id if node_id in self._drawn else None
        self._restyle({i for i in (previous, self._active) if i in self._drawn})
        if self._active is not None:
            self._view.ensureVisible(self._drawn[self._active].box.sceneBoundingRect(), 40, 40)

    def select_node(self, node_id: int) -> None:
        """Select a node as a click does: outline it, show its details, emit :attr:`node_selected`.

        Also emits :attr:`origin_selected` when the node's origin line is known, then
        :attr:`span_selected` when its operation's span is.
        """
        if node_id not in self._drawn:
            return
        previous, self._selected = self._selected, node_id
        self._restyle({i for i in (previous, node_id) if i in self._drawn})
        self._show_details(node_id)
        self.node_selected.emit(node_id)
        origin = self._drawn[node_id].node.get("origin") or {}
        if origin.get("line"):
            self.origin_selected.emit(origin.get("file") or "", origin["line"])
        if origin.get("span"):
            self.span_selected.emit(origin.get("file") or "", list(origin["span"]))

    def fit_to_view(self) -> None:
        """Frame the newest nodes and their inputs whole at a readable zoom; all of the graph when it fits at that zoom.

        When even the newest nodes do not fit readably, their operations are framed whole (their
        leaves keep their lanes). Whatever else is in view is whole too: a node the view's edge
        would cut in two is scrolled wholly in or wholly out.
        """
        self._frame(self._new or self._outputs(), keep=False)

    def show_overview(self) -> None:
        """Zoom and scroll so the whole graph is visible, however small (never beyond 1.5×)."""
        if self._drawn:
            rect = self._content_rect()
            self._zoom_on(rect, min(fit_scale(self._view, rect), MAX_FRAME_SCALE))

    def highlight_origin_line(self, line: int, file: str | None = None) -> None:
        """Outline the nodes (and boxes) that executions of ``line`` made; 0 or None clears.

        Parameters
        ----------
        line : int
            A 1-based line, as the code view counts them.
        file : str, optional
            The file the line is in; None matches every file.
        """
        ids = self._groups.line_nodes(line, file) & self._drawn.keys() if line else set()
        previous, self._origin_marked = self._origin_marked, ids
        self._restyle(previous ^ ids)
        self._groups.mark_line(line or None, file)

    def highlight_origin_at(self, line: int, column: int, file: str | None = None) -> None:
        """Outline the nodes the innermost operation at a code position made (every pass); with none there,
        the nodes of the whole line, as :meth:`highlight_origin_line`.

        Parameters
        ----------
        line : int
            A 1-based line; 0 clears.
        column : int
            A 0-based column in UTF-8 bytes, as operation spans count them (-1: none).
        file : str, optional
            The file the position is in; None matches every file.
        """
        ids = self._groups.span_nodes(line, column, file) & self._drawn.keys() if line and column >= 0 else set()
        if not ids:
            self.highlight_origin_line(line, file)
            return
        previous, self._origin_marked = self._origin_marked, ids
        self._restyle((previous ^ ids) & self._drawn.keys())
        self._groups.mark_line(line, file)

    def origin_nodes(self) -> set[int]:
        """The nodes :meth:`highlight_origin_line` or :meth:`highlight_origin_at` outlines now."""
        return set(self._origin_marked)

    def set_box_collapsed(self, label: str, collapsed: bool) -> None:
        """Collapse (or expand) the origin boxes labelled ``label`` (``line 72 · pass 2``, ``model.rnn``)."""
        for box in [box for box in self._groups if box.label == label]:
            self._toggle_box(box, collapsed)

    def zoom(self, factor: float) -> None:
        """Zoom by ``factor`` around the centre of the view, within the allowed range."""
        factor = min(max(factor, MIN_SCALE / self._scale()), MAX_SCALE / self._scale())
        self._view.scale(factor, factor)
        self._user_view = True
        self._update_detail()

    def export_png(self, path: str | os.PathLike, scale: float = 2.0) -> bool:
        """Save the whole graph as a PNG image; returns whether the file was written.

        Parameters
        ----------
        path : str or path-like
        scale : float
            Pixels per scene unit; lowered so big graphs stay under ``MAX_EXPORT_PIXELS``.
        """
        rect = self._content_rect().adjusted(-20, -20, 20, 20)
        return write_png(self._scene, self._text_layer, rect, path, scale, TEXT_MIN_SCALE)

    def export_svg(self, path: str | os.PathLike) -> bool:
        """Save the whole graph as an SVG drawing; returns whether the file was written."""
        return write_svg(self._scene, self._text_layer, self._content_rect().adjusted(-20, -20, 20, 20), path,
                         TEXT_MIN_SCALE)

    # -- Qt overrides -----------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is not self._view.viewport():
            return super().eventFilter(watched, event)
        kind = event.type()
        if kind == QEvent.Resize:  # the dock or the details pane resized: keep the new nodes in view
            self._place_empty()
            if self._follow.isChecked():
                self._frame(self._new or self._outputs(), keep=True)
        if kind == QEvent.Wheel:
            self.zoom(2.0 ** (event.angleDelta().y() / 480.0))
            return True
        if kind == QEvent.MouseMove and self._press is None:
            self._hover(self._node_at(event.position().toPoint()))
        elif kind == QEvent.Leave:
            self._hover(None)
        if kind == QEvent.MouseButtonPress and event.button() == Qt.LeftButton:
            self._press = event.position()
        elif kind == QEvent.MouseButtonRelease and event.button() == Qt.LeftButton and self._press is not None:
            moved = (event.position() - self._press).manhattanLength()
            self._press = None
            self._user_view = self._user_view or moved >= QApplication.startDragDistance()
            if moved < QApplication.startDragDistance():
                self._click(event.position().toPoint())
        return False

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        side = self.width() >= SIDE_DETAILS_WIDTH and self.width() > SIDE_DETAILS_ASPECT * self.height()
        orientation = Qt.Horizontal if side else Qt.Vertical
        if orientation != self._splitter.orientation() or not self._sized:
            self._sized = True
            self._splitter.setOrientation(orientation)
            length = self.width() if side else self.height()
            details = min(int(length * DETAILS_SHARE), SIDE_DETAILS_MAX) if side else int(length * DETAILS_SHARE)
            self._splitter.setSizes([length - details, details])

    def _click(self, position: Any) -> None:
        """A click on a node selects it; on a box's toggle collapses or expands it; on its header selects its line."""
        node_id = self._node_at(position)
        if node_id is not None:
            self.select_node(node_id)
            return
        point = self._view.mapToScene(position)
        box = next((item for item in self._view.items(position) if isinstance(item, OriginBox)), None)
        if box is None:
            return
        if box.toggle_rect().adjusted(-3, -3, 3, 3).contains(point):
            self._toggle_box(box, not box.collapsed)
        elif box.collapsed or box.header().contains(point):
            origins = [self._drawn[i].node.get("origin") or {} for i in box.members if i in self._drawn]
            first = min((o for o in origins if o.get("line")), key=lambda o: o["line"], default=None)
            if first is not None:
                self.origin_selected.emit(first.get("file") or "", first["line"])

    def _hover(self, node_id: int | None) -> None:
        if node_id == self._hovered:
            return
        self._hovered = node_id
        node = self._drawn[node_id].node if node_id is not None else {}
        names = list(node.get("variables") or [])
        if node.get("variable"):
            names.append(node["variable"])
        self.node_hovered.emit(names)

    # -- handlers ---------------------------------------------------------------------------

    def _on_export_png_triggered(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("Export graph as PNG"), "graph.png", tr("PNG image (*.png)"))
        if path:
            self.export_png(path)

    def _on_export_svg_triggered(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("Export graph as SVG"), "graph.svg", tr("SVG drawing (*.svg)"))
        if path:
            self.export_svg(path)

    # -- building the scene -----------------------------------------------------------------

    def _reset(self) -> None:
        """Empty state over a cleared scene."""
        self._layout = LayeredLayout(lambda node: origin_keys(node.get("origin")),
                                     block_spacing(NODE_HEIGHT / 2, LEAF_HEIGHT / 2, RANK_PITCH))
        self._drawn: dict[int, DrawnNode] = {}
        self._next: dict[int, list[int]] = {}  # targets in next_functions order
        self._chunks: dict[tuple[int, int], EdgeChunk] = {}  # (source, position in its next) -> chunk
        self._lanes: dict[int, EdgeChunk] = {}
        self._lanes_rect: QRectF | None = QRectF()  # the union of the lanes' rectangles (None: to be measured)
        self._roots: dict[str, int] = {}
        self._new: set[int] = set()
        self._highlighted: set[int] = set()
        self._highlight_name: str | None = None
        self._active: int | None = None
        self._selected: int | None = None
        self._origin_marked: set[int] = set()
        self._extent = QRectF()  # every node box's union, kept as nodes come so framing need not scan them
        self._rows: dict[int, set[int]] = {}  # node ids by the rank band their centre is in, for framing's look-ups
        self._index_rect: QRectF | None = None  # the scene index's rectangle, once the graph has one
        self._scene.setSceneRect(QRectF())
        self._text_layer = QGraphicsRectItem()
        self._text_layer.setFlag(QGraphicsItem.ItemHasNoContents)
        self._text_layer.setZValue(3)
        self._scene.addItem(self._text_layer)
        self._groups = OriginGroups(self._scene, self._box_font, lambda i: self._drawn[i].box.sceneBoundingRect(),
                                    self._text_layer)
        self._overlay = QGraphicsPathItem()
        self._overlay.setPen(make_pen(PALETTE["highlight"], 2.5, cosmetic=True))
        self._overlay.setZValue(1)
        self._overlay.setVisible(False)
        self._scene.addItem(self._overlay)
        self._details.clear()

    def _add(self, nodes: list[dict[str, Any]], edges: list[list[int]], chunked: bool) -> list[int]:
        """Place and draw new nodes and their edges; returns the ids drawn."""
        by_id = {int(n["id"]): n for n in nodes}
        placed = self._layout.add(nodes, edges)
        moved = self._layout.take_moved()  # lanes this add moved to other tracks
        for node_id in placed:
            self._draw_node(by_id[node_id])
            self._groups.add(node_id, by_id[node_id].get("origin"), self._layout.boxes(node_id))
        self._groups.refresh()
        if self._groups.collapsed_count:
            self._show_collapsed([i for i in placed if self._groups.collapsed_box(i) is not None])
        fresh = []
        for source, target, _ in edges:
            if source in self._drawn and target in self._drawn:
                targets = self._next.setdefault(source, [])
                fresh.append((source, len(targets)))
                targets.append(target)
        if chunked:
            groups: dict[int, list[tuple[int, int]]] = {}
            for edge in fresh:
                groups.setdefault(self._layout.position(edge[0])[1] // CHUNK_RANKS, []).append(edge)
            for group in groups.values():
                self._new_chunk(group)
        elif fresh:
            self._new_chunk(fresh)
        for node_id in placed:  # a node placed beside a tagged one: that tag makes room for it
            column, rank = self._layout.position(node_id)
            for side in (-1, 1):
                other = self._layout.node_at(column + side, rank)
                if other is not None and other not in by_id and self._drawn[other].tag is not None:
                    self._scene.removeItem(self._drawn[other].tag)
                    self._drawn[other].tag = self._make_tag(self._drawn[other], self._names_of(other))
        if moved:  # lanes that changed track: edges drawn before into them are drawn again, to where they are now
            fresh_edges = set(fresh)  # drawn just now, to the lanes' new tracks
            self._rebuild_chunks({(s, p) for t in moved for s in self._layout.users(t)
                                  for p, other in enumerate(self._next.get(s, ())) if other == t} - fresh_edges)
        self._update_lanes(set(map(self._target_of, fresh)) | moved)
        self._fit_index()
        return placed

    def _fit_index(self) -> None:
        """Keep the scene's index rectangle around the graph, and its cells small, as the graph grows.

        Left to itself the scene grows its rectangle to every new item's bounds, and each growth
        rebuilds the whole index: at 1,000 RNN steps that was most of every step's repaint. Here
        the rectangle grows by doubling, so the index is rebuilt a few times in all. Qt also keeps
        the index depth it chose for the first items, which for a tall graph left about 2,000
        items in each cell a repaint touched (22.7 ms a repaint at 1,000 steps; 7.4 ms at depth 8).
        """
        content = self._content_rect()
        if self._index_rect is None or not self._index_rect.contains(content):
            margin_x = max(content.width(), INDEX_MIN_SIZE) / 2
            margin_y = max(content.height(), INDEX_MIN_SIZE) / 2
            self._index_rect = content.adjusted(-margin_x, -margin_y, margin_x, margin_y)
            self._scene.setSceneRect(self._index_rect)
        low, high = INDEX_DEPTHS
        depth = min(high, max(low, (len(self._drawn) // NODES_PER_INDEX_CELL).bit_length()))
        if depth > self._scene.bspTreeDepth():
            self._scene.setBspTreeDepth(depth)

    def _draw_node(self, node: dict[str, Any]) -> None:
        node_id = int(node["id"])
        column, rank = self._layout.position(node_id)
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
        self._scene.addItem(box)
        self._extent |= box.sceneBoundingRect()
        self._rows.setdefault(int(centre.y() // RANK_PITCH), set()).add(node_id)
        leaf = node.get("leaf") or {}
        shape = node.get("shape") if node.get("shape") is not None else leaf.get("shape")
        drawn = DrawnNode(node, box, width, height, shape_text(shape))
        self._drawn[node_id] = drawn
        self._draw_texts(drawn, lines)
        self._restyle({node_id})

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
            self._scene.removeItem(text)
        drawn.texts = []
        centre = drawn.box.pos()
        top = centre.y() - sum(self._heights[style] for *_, style in lines) / 2
        for shown, width, style in lines:
            item = QGraphicsSimpleTextItem(shown, self._text_layer)
            item.setFont(self._fonts[style])
            item.setPos(centre.x() - width / 2, top)
            item.setData(0, drawn.node["id"])
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

    def _update_node(self, node: dict[str, Any]) -> None:
        """Take a newer dict for a drawn node: relabel it and refresh its details if shown."""
        drawn = self._drawn.get(int(node["id"]))
        if drawn is None:
            return
        drawn.node = node
        lines = [self._measure(text, style) for text, style in self._node_lines(node)]
        if [shown for shown, *_ in lines] != [item.text() for item in drawn.texts]:  # a leaf got its name
            drawn.width = self._box_width(lines)
            drawn.box.setRect(-drawn.width / 2, -drawn.height / 2, drawn.width, drawn.height)
            self._draw_texts(drawn, lines)
            self._groups.resized(drawn.node["id"])
            self._update_lanes([drawn.node["id"]])
        self._restyle({drawn.node["id"]})  # its saved tensors freed by a backward: drawn as freed
        if self._selected == drawn.node["id"]:
            self._show_details(drawn.node["id"])

    def _set_roots(self, roots: Mapping[str, int]) -> None:
        """Move the variable tags (``h →``) to the nodes the variables now point to."""
        before, self._roots = self._roots, {name: int(i) for name, i in roots.items()}
        for node_id in set(before.values()) | set(self._roots.values()):
            drawn = self._drawn.get(node_id)
            names = self._names_of(node_id)
            if drawn is None or names == sorted(n for n, i in before.items() if i == node_id):
                continue
            if drawn.tag is not None:
                self._scene.removeItem(drawn.tag)
                drawn.tag = None
            if names and drawn.node.get("kind") != "leaf":
                drawn.tag = self._make_tag(drawn, names)
            self._restyle({node_id})

    def _names_of(self, node_id: int) -> list[str]:
        """The variables whose ``grad_fn`` the node is."""
        return sorted(name for name, i in self._roots.items() if i == node_id)

    def _room_beside(self, node_id: int, side: int) -> float:
        """The free width between the node's box and its neighbour's on ``side`` (-1 left, 1 right) in its rank."""
        column, rank = self._layout.position(node_id)
        drawn = self._drawn[node_id]
        neighbour = self._layout.node_at(column + side, rank)
        if neighbour is None or neighbour not in self._drawn:
            return math.inf
        return COLUMN_PITCH - drawn.width / 2 - self._drawn[neighbour].width / 2

    def _make_tag(self, drawn: DrawnNode, names: list[str]) -> QGraphicsPathItem:
        """The ``h →`` tag left of the node; where a neighbour leaves no room there, right of it (``← h``), and
        shortened where neither side has room for all of it: a tag never covers another node."""
        node_id = drawn.node["id"]
        room = {side: self._room_beside(node_id, side) - 3 - TAG_CLEARANCE for side in (-1, 1)}
        whole = self._metrics.horizontalAdvance(", ".join(names) + " →") + 10
        side = -1 if whole <= room[-1] or room[-1] >= room[1] else 1
        shown = self._metrics.elidedText(", ".join(names), Qt.ElideRight, min(150.0, room[side] - 10 - self._arrow))
        text = shown + " →" if side < 0 else "← " + shown
        width = self._metrics.horizontalAdvance(text) + 10
        height = self._metrics.height() + 4
        near = drawn.box.pos().x() + side * (drawn.width / 2 + 3)
        right = near if side < 0 else near + width
        path = QPainterPath()
        path.addRoundedRect(QRectF(right - width, drawn.box.pos().y() - height / 2, width, height), 4, 4)
        tag = QGraphicsPathItem(path, self._text_layer)
        fill, outline = PALETTE["tag"]
        tag.setBrush(QColor(fill))
        tag.setPen(make_pen(outline))
        tag.setData(0, drawn.node["id"])
        label = QGraphicsSimpleTextItem(text, tag)
        label.setFont(self._font)
        label.setPos(right - width + 5, drawn.box.pos().y() - self._metrics.height() / 2)
        label.setData(0, drawn.node["id"])
        return tag

    # -- edges ------------------------------------------------------------------------------

    def _target_of(self, edge: tuple[int, int]) -> int:
        source, position = edge
        return self._next[source][position]

    def _new_chunk(self, edges: list[tuple[int, int]]) -> None:
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
        chunk.set_geometry(path, labels, self._small)

    def _rebuild_chunks(self, edges: Iterable[tuple[int, int]]) -> None:
        """Draw these edges' chunks again (each once)."""
        for chunk in {id(self._chunks[e]): self._chunks[e] for e in edges if e in self._chunks}.values():
            self._build_chunk(chunk)

    def _port(self, source: int, position: int) -> QPointF:
        """Where an edge leaves the top of its source box; inputs spread left to right."""
        drawn = self._drawn[source]
        count = len(self._next[source])
        spacing = min(18.0, (drawn.width - 16) / max(count - 1, 1))
        centre = drawn.box.pos()
        return QPointF(centre.x() + (position - (count - 1) / 2) * spacing, centre.y() - drawn.height / 2)

    def _edge_path(self, path: QPainterPath, source: int, position: int) -> tuple[QPointF, str] | None:
        """Add the edge to ``source``'s ``position``-th next function to ``path``; returns its own label, if any.

        An edge to the next rank is one straight line with its arrowhead. One that skips ranks rises
        from its source to its own track in the gap above and runs across to the target's lane, where a
        dot marks the join: the lane (drawn once, see :meth:`_update_lanes`) takes it on to the target.
        """
        target = self._next[source][position]
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
        self._arrowhead(path, start, end)
        if not drawn.shape:  # the shape flowing along an edge is the output of the node it points to
            return None
        # Just under the arrowhead, not mid-edge: there the edge crosses the header of the source's box.
        return QPointF(end.x() + 5, end.y() + EDGE_LABEL_DROP), drawn.shape

    @staticmethod
    def _arrowhead(path: QPainterPath, start: QPointF, end: QPointF) -> None:
        dx, dy = end.x() - start.x(), end.y() - start.y()
        length = math.hypot(dx, dy) or 1.0
        ux, uy = dx / length, dy / length
        for side in (1, -1):
            path.moveTo(end)
            path.lineTo(end.x() - 8 * ux + 4 * side * uy, end.y() - 8 * uy - 4 * side * ux)

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
            self._arrowhead(path, QPointF(x, side.y()), side)
        else:
            self._arrowhead(path, QPointF(x, bottom), side)
        return side

    def _update_lanes(self, targets: Iterable[int]) -> None:
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
            lane.set_geometry(path, [label] if label[1] else [], self._small)
            after = lane.sceneBoundingRect()
            if self._lanes_rect is not None and (before.isEmpty() or after.contains(before)):
                self._lanes_rect |= after  # lanes only grew: the union grows with them, no lane is measured again
            else:
                self._lanes_rect = None

    # -- removing ---------------------------------------------------------------------------

    def _remove(self, ids: Iterable[int]) -> None:
        """Forget nodes and their edges; their drawing fades out."""
        gone = {int(i) for i in ids} & self._drawn.keys()
        if not gone:
            return
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
        fading: list[QGraphicsItem] = [self._scene.addPath(ghost, make_pen(PALETTE["removed"], 1.2, cosmetic=True))]
        for node_id in gone:
            drawn = self._drawn.pop(node_id)
            self._rows[int(drawn.box.pos().y() // RANK_PITCH)].discard(node_id)
            drawn.box.setBrush(QColor(PALETTE["removed"]).lighter(120))
            items = [drawn.box, *drawn.texts] + [i for i in (drawn.tag, drawn.freed_mark) if i is not None]
            for item in items:  # a ghost is no node: the id may come back, drawn anew, while this fades
                item.setData(0, None)
            fading += items
            self._next.pop(node_id, None)
        self._layout.remove(gone)
        self._groups.remove(gone)
        self._extent = QRectF()
        for drawn in self._drawn.values():
            self._extent |= drawn.box.sceneBoundingRect()
        self._origin_marked -= gone
        self._update_lanes(touched_leaves | (gone & self._lanes.keys()))
        self._roots = {name: i for name, i in self._roots.items() if i not in gone}
        self._highlighted -= gone
        self._selected = None if self._selected in gone else self._selected
        self._active = None if self._active in gone else self._active
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
                if item.scene() is self._scene:
                    self._scene.removeItem(item)
            self._fades.remove(fade)

        fade.valueChanged.connect(set_opacity)
        fade.finished.connect(finish)
        self._fades.append(fade)
        fade.start(QVariantAnimation.DeleteWhenStopped)

    # -- state and styles -------------------------------------------------------------------

    def _set_highlight(self, ids: set[int]) -> None:
        ids &= self._drawn.keys()
        previous, self._highlighted = self._highlighted, ids
        self._restyle(previous | ids)
        path = QPainterPath()
        for source in ids:
            for position, target in enumerate(self._next.get(source, ())):
                if target in ids:
                    self._edge_path(path, source, position)
                    if self._layout.uses_lane(source, target):
                        track = self._layout.connector_track(source, target) % CONNECTOR_TRACKS
                        top = self._port(source, position).y() - CONNECTOR_RISE - CONNECTOR_STEP * track
                        self._lane_path(path, target, top)
        self._overlay.setPath(path)
        self._overlay.setVisible(not path.isEmpty())  # an empty path would export as invalid SVG

    def _restyle(self, ids: Iterable[int]) -> None:
        """Colour boxes by kind and by the strongest of their states: active, selected, highlighted, new."""
        roots = set(self._roots.values())
        for node_id in ids:
            drawn = self._drawn[node_id]
            kind = drawn.node.get("kind", "op")
            kind = "root" if kind == "op" and node_id in roots else kind
            states = (("active", node_id == self._active), ("selected", node_id == self._selected),
                      ("origin", node_id in self._origin_marked), ("highlight", node_id in self._highlighted),
                      ("new", node_id in self._new))
            freed = has_freed(drawn.node)
            pen, brush = self._style(kind, next((state for state, on in states if on), ""), freed)
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
            self._scene.removeItem(drawn.freed_mark)
            drawn.freed_mark = None
            return
        text = tr("freed")
        metrics = QFontMetricsF(self._small)
        width, height = metrics.horizontalAdvance(text) + 8, metrics.height() + 2
        corner = drawn.box.pos() + QPointF(-drawn.width / 2 + 4, -drawn.height / 2 - height / 2)
        path = QPainterPath()
        path.addRoundedRect(QRectF(corner, QSizeF(width, height)), 3, 3)
        mark = QGraphicsPathItem(path, self._text_layer)
        mark.setBrush(QColor("#ffffff"))
        mark.setPen(make_pen(PALETTE["freed"][1], 1.0, cosmetic=True))
        mark.setData(0, drawn.node["id"])
        mark.setToolTip(tr("saved tensors freed"))
        label = QGraphicsSimpleTextItem(text, mark)
        label.setFont(self._small)
        label.setBrush(QColor(PALETTE["freed"][1]).darker(130))
        label.setPos(corner + QPointF(4, 1))
        label.setData(0, drawn.node["id"])
        mark.setVisible(drawn.box.isVisible())
        drawn.freed_mark = mark

    def _show_details(self, node_id: int) -> None:
        """Show a node's details, the code in them set as code (the backticks around it were shown as they are)."""
        text, spans = code_spans(self._describe(node_id))
        self._details.setPlainText(text)
        code = QTextCharFormat()
        code.setFontFamilies([QFontDatabase.systemFont(QFontDatabase.FixedFont).family()])
        code.setBackground(QColor(PALETTE["op"][0]))
        cursor = QTextCursor(self._details.document())
        for start, end in spans:
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.KeepAnchor)
            cursor.mergeCharFormat(code)

    def _describe(self, node_id: int) -> str:
        """The details pane text for a node."""
        node = self._drawn[node_id].node
        targets = {int(target) for target, _ in node.get("next") or []}
        next_nodes = {target: self._drawn[target].node for target in targets if target in self._drawn}
        siblings = [self._drawn[other].node for other in self._op_nodes(node_id) - {node_id}]
        return node_details(node_id, node, self._names_of(node_id), next_nodes, siblings)

    def _op_nodes(self, node_id: int) -> set[int]:
        """The nodes one call of the operation that made ``node_id`` made: those of its span and pass that
        edges join to it (a pass is unknown after a continue, and the nodes of one call are connected)."""
        run = (self._drawn[node_id].node.get("origin") or {}).get("pass")
        members = {other for other in self._groups.span_members(node_id)
                   if other in self._drawn and (self._drawn[other].node.get("origin") or {}).get("pass") == run}
        links: dict[int, set[int]] = {member: set() for member in members}
        for member in members:
            for target in self._next.get(member, ()):
                if target in members:
                    links[member].add(target)
                    links[target].add(member)
        reached, stack = set(), [node_id] if node_id in members else []
        while stack:
            current = stack.pop()
            if current not in reached:
                reached.add(current)
                stack.extend(links[current] - reached)
        return reached

    # -- view -------------------------------------------------------------------------------

    def _frame(self, ids: Iterable[int], keep: bool) -> None:
        """Show the nodes ``ids`` and their direct inputs at a readable zoom; all of the graph when it fits so.

        With ``keep`` the learner's zoom and scroll stay while they are readable and show all of
        that. Inputs reached through a leaf's lane count by the lane, which runs beside the
        nodes, not by the leaf, which may be a thousand ranks up.
        """
        ids = [i for i in ids if i in self._drawn]
        if not ids or self._view.viewport().width() < 2 or self._view.viewport().height() < 2:
            return
        new = self._rect_of(ids)
        inputs = [t for i in ids for t in self._next.get(i, ()) if not self._layout.uses_lane(i, t)]
        focus = new | self._rect_of(inputs) if inputs else new
        scale = self._scale()
        margin = FRAME_MARGIN / scale
        shown = visible_rect(self._view).adjusted(margin, margin, -margin, -margin)
        content = self._content_rect()
        fits = fit_scale(self._view, content) >= MIN_READABLE_SCALE
        if keep and scale >= MIN_READABLE_SCALE and shown.contains(focus) and (
                self._user_view or not fits or shown.contains(content)):
            return
        self._user_view = False
        if fits:
            self._zoom_on(content, min(fit_scale(self._view, content), MAX_FRAME_SCALE))
            return
        if not keep or scale < MIN_READABLE_SCALE:
            scale = READABLE_SCALE
        scale = min(scale, max(fit_scale(self._view, focus), MIN_READABLE_SCALE))
        if fit_scale(self._view, focus) < scale:
            focus = new  # too much to show at a readable zoom: the new nodes come first
        self._view.setTransform(QTransform.fromScale(scale, scale))
        self._update_detail()
        scroll_to_show(self._view, focus)
        operations = [i for i in ids if not self._layout.is_leaf(i)]
        if operations and fit_scale(self._view, new) < scale:
            # new leaves spread wider than the view: what the line computed is shown whole, the leaves keep their lanes
            focus = self._rect_of(operations)
            scroll_to_show(self._view, focus)
        show_uncut(self._view, focus, self._box_rects)

    def _box_rects(self, rect: QRectF) -> list[QRectF]:
        """The scene rectangles of the shown node boxes in or across ``rect``.

        Looked up by rank band: asking the scene for the items in the rectangle (edges, texts, boxes)
        cost a step more than all the rest of framing.
        """
        first, last = (int((y + sign * LEAF_HEIGHT / 2) // RANK_PITCH) for y, sign in ((rect.top(), -1),
                                                                                       (rect.bottom(), 1)))
        boxes = (self._drawn[i].box for row in range(first, last + 1) for i in self._rows.get(row, ()))
        return [r for r in (box.sceneBoundingRect() for box in boxes if box.isVisible()) if r.intersects(rect)]

    def _zoom_on(self, rect: QRectF, scale: float) -> None:
        zoom_on(self._view, rect, scale)
        self._update_detail()

    def _rect_of(self, ids: Iterable[int]) -> QRectF:
        """The scene rectangle of these nodes' boxes and variable tags."""
        rect = QRectF()
        for node_id in ids:
            drawn = self._drawn[node_id]
            rect |= drawn.box.sceneBoundingRect()
            if drawn.tag is not None:
                rect |= drawn.tag.sceneBoundingRect()
        return rect

    def _outputs(self) -> list[int]:
        """The nodes of the deepest rank: the newest outputs of a graph drawn whole."""
        if not self._drawn:
            return []
        deepest = max(self._layout.position(i)[1] for i in self._drawn)
        return [i for i in self._drawn if self._layout.position(i)[1] == deepest]

    def _shows_a_node(self) -> bool:
        return any(item.data(0) in self._drawn for item in self._scene.items(visible_rect(self._view)))

    def set_waiting_leaves(self, names: list[str], in_backward: bool = False) -> None:
        """Name the tensors that require grad but have no node yet, so the empty graph says why it is empty.

        ``in_backward``: the pause is in a function a backward pass called (a hook), where the
        graph is elsewhere: the empty graph says so, not that no tensor requires grad.
        """
        self._waiting, self._in_backward = list(names), in_backward
        if in_backward:
            self._empty.setText(tr(BACKWARD_TEXT))
        elif not names:
            self._empty.setText(tr(EMPTY_TEXT))
        else:
            shown = ", ".join(names[:4]) if len(names) <= 4 else \
                join_words([*names[:4], tr("{n} more", n=len(names) - 4)])
            self._empty.setText(tr(WAITING_TEXT_PLURAL if len(names) > 1 else WAITING_TEXT, names=shown))
        self._place_empty()

    def retranslate(self) -> None:
        """Set the toolbar, the empty-state message, the boxes' labels and the details again in the current language."""
        self._texts.apply()
        self._legend.retranslate()
        self.set_waiting_leaves(self._waiting, self._in_backward)
        self._groups.relabel()
        for drawn in self._drawn.values():  # the freed marks, in the new language
            if drawn.freed_mark is not None:
                self._mark_freed(drawn, False)
                self._mark_freed(drawn, True)
        if self._selected is not None and self._selected in self._drawn:
            self._show_details(self._selected)

    def _update_empty(self) -> None:
        """The empty-state message, shown while there is no node."""
        self._empty.setVisible(not self._drawn)
        self._place_empty()

    def _place_empty(self) -> None:
        port = self._view.viewport().rect()
        width = min(420, port.width() - 24)
        self._empty.setFixedWidth(max(width, 120))
        self._empty.adjustSize()
        self._empty.move(port.center().x() - self._empty.width() // 2, port.center().y() - self._empty.height() // 2)

    def _toggle_box(self, box: OriginBox, collapsed: bool) -> None:
        """Collapse or expand a box: hide or show its members and re-route the edges at them."""
        if box.collapsed == collapsed:
            return
        self._show_collapsed(self._groups.set_collapsed(box, collapsed))

    def _show_collapsed(self, ids: Iterable[int]) -> None:
        """Hide the nodes a collapsed box holds, show the others, and redraw the edges at them."""
        ids = set(ids) & self._drawn.keys()
        for node_id in ids:
            drawn = self._drawn[node_id]
            shown = self._groups.collapsed_box(node_id) is None
            for item in [drawn.box, *drawn.texts] + [i for i in (drawn.tag, drawn.freed_mark) if i is not None]:
                item.setVisible(shown)
        chunks = {id(chunk): chunk for edge, chunk in self._chunks.items()
                  if edge[0] in ids or self._target_of(edge) in ids}
        for chunk in chunks.values():
            self._build_chunk(chunk)
        self._update_lanes(ids & self._lanes.keys())

    def _scale(self) -> float:
        return self._view.transform().m11()

    def _update_detail(self) -> None:
        """Show text only when it is large enough to read; hidden text costs nothing to paint."""
        self._set_text_visible(self._scale() >= TEXT_MIN_SCALE)

    def _set_text_visible(self, visible: bool) -> None:
        if self._text_layer.isVisible() != visible:
            self._text_layer.setVisible(visible)

    def _content_rect(self) -> QRectF:
        """The scene rectangle holding every node, tag, lane and box (line boxes allowed for, module boxes measured)."""
        if not self._drawn:
            return QRectF()
        rect = self._extent.adjusted(-10, -26, 10, 10) | self._rect_of(i for i in set(self._roots.values())
                                                                      if i in self._drawn)
        if self._lanes_rect is None:
            self._lanes_rect = QRectF()
            for lane in self._lanes.values():
                self._lanes_rect |= lane.sceneBoundingRect()
        return rect | self._lanes_rect | self._groups.outer_rect()

    def _node_at(self, position: Any) -> int | None:
        for item in self._view.items(position):
            node_id = item.data(0)
            if node_id is not None and node_id in self._drawn and self._drawn[node_id].box.isVisible():
                return int(node_id)
        return None
