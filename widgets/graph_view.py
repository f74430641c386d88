"""The autograd graph of the step in view, drawn as a layered diagram that grows as the learner steps.

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
- Click a node: it is the model's selected node, :attr:`GraphView.origin_selected` (and
  :attr:`GraphView.span_selected` for a node made while stepping) are emitted, and its details (the line
  and operation that made it, the other nodes that operation made, saved tensors, next
  functions; for a leaf its tensor and ``.grad``) show below the graph, or beside it when the panel is wide
  and short; the pane never takes room from the drawing when a node is clicked (its text scrolls).
- :meth:`GraphView.highlight_origin_line` outlines the nodes a code line's executions made;
  :meth:`GraphView.highlight_origin_at` those of the innermost operation at a code position.
- With no nodes, the canvas says how one appears (or why none can yet: the model's waiting leaves).
- The model's highlighted nodes (a variable's subgraph) are outlined with the edges between them,
  its active node (where a backward replay is) is red and scrolled into view.
- Big graphs stay fast: text is hidden when zoomed out, edges are drawn as one path item per
  added piece, and each pause adds only its own items (a 1,000-step RNN, 5,004 nodes, is
  laid out and drawn in well under a second; one more step costs a few milliseconds).

The drawing is :class:`~widgets.graph_scene.GraphScene`'s, where the view looks is
:class:`~widgets.graph_framing.Framer`'s; this widget holds them, the toolbar, the legend and
the details pane, and turns the model's events and the learner's mouse into their calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication, QPainter, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
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

from app.graph_format import reachable
from app.graph_model import GraphModel
from app.i18n import N_, join_words, tr
from app.shown_step import Step
from widgets.colours import readable_color
from widgets.graph_details import code_spans, node_details
from widgets.graph_export import write_png, write_svg
from widgets.graph_framing import TEXT_MIN_SCALE, Framer
from widgets.graph_items import PALETTE, OriginBox
from widgets.graph_legend import GraphLegend
from widgets.graph_scene import GraphScene
from widgets.theme import follow_palette, high_contrast
from widgets.translated_texts import TranslatedTexts

#: Wider than this and than SIDE_DETAILS_ASPECT times its height, the details pane sits beside the graph: in a
#: short panel the rows below would be the graph's. A full-height pane beside a tall graph was mostly empty.
SIDE_DETAILS_WIDTH = 820
SIDE_DETAILS_ASPECT = 3.0
#: The details pane's share of the panel, beside the graph at most SIDE_DETAILS_MAX pixels wide. A node's
#: details scroll in it: a click never takes room from the drawing (it pushed the leaves out of view).
DETAILS_SHARE = 0.22
SIDE_DETAILS_MAX = 380
EMPTY_TEXT = N_("No tensor requires grad yet: step over a line that creates one with requires_grad=True.")
#: The empty-state text once a run ended without a pause: no step of it holds tensors to draw.
ENDED_TEXT = N_("The run ended without pausing, so no step of it holds tensors to draw. Step through the lesson "
                "(F10) to watch its graph grow line by line.")
#: The empty-state text in a function that a backward pass called (a hook): its own variables hold no graph.
BACKWARD_TEXT = N_("backward() is running and called this function: autograd runs it with grad mode off, and none "
                   "of its variables requires grad, so it has no graph of its own. The graph backward is walking "
                   "is its caller's: select that frame in the Call stack to see it.")
#: The empty-state text once leaves exist that no operation has used yet (autograd makes no node for them).
WAITING_TEXT = N_("{names} requires grad, but no operation has used it yet, so autograd has no node: "
                  "step over a line that computes with it.")
#: The empty-state text when leaves have a ``.grad``: a graph used them, and no variable holds it any more.
USED_TEXT = N_("{names} has a .grad: a backward() ran through the graph that used it, and autograd let that graph "
               "go once no variable held it. Step over a line that computes with it to build a new one.")
USED_TEXT_PLURAL = N_("{names} have a .grad: a backward() ran through the graph that used them, and autograd let "
                      "that graph go once no variable held it. Step over a line that computes with them to build a "
                      "new one.")
WAITING_TEXT_PLURAL = N_("{names} require grad, but no operation has used them yet, so autograd has no node: "
                         "step over a line that computes with them.")


#: Keys that walk the drawn graph from the selected node (from none: to the newest output).
WALKS = {Qt.Key.Key_Down: "input", Qt.Key.Key_Up: "consumer", Qt.Key.Key_Right: "next", Qt.Key.Key_Left: "previous"}
WALK_KEYS = N_("Arrow keys walk the graph from the selected node: Down to its input, Up to the node that uses it, "
               "Left and Right to a sibling; Enter reads its details, Esc clears the selection.")

class GraphView(QWidget):
    """The graph of a :class:`~app.graph_model.GraphModel`, with a details pane for its selected node.

    The view draws what the model holds and follows its events; a click selects in the model.

    Parameters
    ----------
    model : GraphModel
    parent : QWidget, optional
    """

    node_hovered = Signal(list)
    """The mouse moved onto a node (the variables it stands for: its outputs' names, a leaf's name) or off ([])."""
    origin_selected = Signal(str, int)
    """The learner clicked a node or an origin box whose line is known; carries the origin's file and line."""
    span_selected = Signal(str, list)
    """The learner clicked a node made while stepping (after :attr:`origin_selected`); carries its file and
    operation span ``[line, col, end_line, end_col]``."""

    def __init__(self, model: GraphModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._texts = TranslatedTexts()
        self._scene = GraphScene(model, self.font(), self)
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
        self.setFocusProxy(self._view)  # View > Go To Panel lands on the drawing
        self._view.installEventFilter(self)  # the keys that walk the graph (the view, not its viewport, gets them)
        self._mark_focus()
        for setter, text in ((self._view.setAccessibleName, N_("Autograd graph drawing")),
                             (self._view.viewport().setAccessibleName, N_("Autograd graph drawing")),
                             (self._view.setAccessibleDescription, WALK_KEYS)):
            self._texts.set(setter, text)
        self._framer = Framer(self._view, self._scene)
        self._hovered: int | None = None
        self._press: QPointF | None = None
        self._sized = False
        self._toolbar = self._make_toolbar()
        self._empty = self._make_empty_message()
        self._splitter = self._make_panes()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._toolbar)
        layout.addWidget(self._splitter)
        self._ended_unpaused = False  # the run in view ended without a pause (see show_step)
        model.replaced.connect(self._on_model_replaced)
        model.changed.connect(self._on_model_changed)
        model.selected_changed.connect(self._on_model_selected_changed)
        model.highlight_changed.connect(self._on_model_highlight_changed)
        model.active_changed.connect(self._on_model_active_changed)
        model.leaves_waiting.connect(self._on_model_leaves_waiting)
        self._on_model_replaced()
        self._on_model_leaves_waiting()
        follow_palette(self, self._restyle)

    def _make_toolbar(self) -> QToolBar:
        toolbar = QToolBar()
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
        return toolbar

    def _make_empty_message(self) -> QLabel:
        empty = QLabel(tr(EMPTY_TEXT), self._view.viewport())
        empty.setObjectName("graph_empty_message")
        empty.setWordWrap(True)
        empty.setAlignment(Qt.AlignCenter)
        empty.setAttribute(Qt.WA_TransparentForMouseEvents)
        self._style_empty_message(empty)
        return empty

    @staticmethod
    def _style_empty_message(empty: QLabel) -> None:
        """A card in the theme in use: a pale card of muted text, or white on black in high contrast."""
        background, text, border = (readable_color(light, dark).name() for light, dark in
                                    (("#f8fafc", "#1e293b"), ("#475569", "#cbd5e1"), ("#cbd5e1", "#64748b")))
        if high_contrast():
            palette = QPalette()
            background, text = (palette.color(role).name() for role in (QPalette.ColorRole.Base,
                                                                       QPalette.ColorRole.Text))
            border = text
        empty.setStyleSheet(f"QLabel {{ background: {background}; color: {text}; border: 1px solid {border};"
                            " border-radius: 6px; padding: 12px 16px; }")

    def _make_panes(self) -> QSplitter:
        """The drawing above (or left of) the legend and the details pane."""
        self._details = QPlainTextEdit()
        self._details.setObjectName("graph_details")
        self._details.setReadOnly(True)
        self._texts.set(self._details.setAccessibleName, "Details of the selected node")
        self._texts.set(self._details.setPlaceholderText,
                        "Click a node to see what it saved for backward and where its gradients go.")
        self._legend = GraphLegend()
        below = QWidget()  # the legend heads the details pane: the drawing keeps all of its room
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.setSpacing(2)
        below_layout.addWidget(self._legend)
        below_layout.addWidget(self._details)
        splitter = QSplitter(Qt.Vertical)
        splitter.setObjectName("graph_splitter")
        for pane, stretch in ((self._view, 3), (below, 2)):
            splitter.addWidget(pane)
            splitter.setStretchFactor(splitter.count() - 1, stretch)
        return splitter

    # -- public API -------------------------------------------------------------------------

    def set_follow_new(self, enabled: bool) -> None:
        """Whether each diff frames its new nodes and their inputs at a readable zoom (default on).

        Off, the view moves by itself only when it would show nothing but empty space.
        """
        self._follow.setChecked(enabled)

    def set_text_scale(self, scale: float) -> None:
        """View > Text Size: frame the graph so its text is ``scale`` times as large as at 100 %."""
        self._framer.text_scale = scale
        self.fit_to_view()

    def fit_to_view(self) -> None:
        """Frame the newest nodes and their inputs whole at a readable zoom; all of the graph when it fits at that zoom.

        When even the newest nodes do not fit readably, their operations are framed whole (their
        leaves keep their lanes). Whatever else is in view is whole too: a node the view's edge
        would cut in two is scrolled wholly in or wholly out.
        """
        self._framer.frame(self.model.new or self._scene.outputs(), keep=False)

    def show_overview(self) -> None:
        """Zoom and scroll so the whole graph is visible, however small (never beyond 1.5×)."""
        self._framer.overview()

    def zoom(self, factor: float) -> None:
        """Zoom by ``factor`` around the centre of the view, within the allowed range."""
        self._framer.zoom(factor)

    def highlight_origin_line(self, line: int, file: str | None = None) -> None:
        """Outline the nodes (and boxes) that executions of ``line`` made; 0 or None clears.

        Parameters
        ----------
        line : int
            A 1-based line, as the code view counts them.
        file : str, optional
            The file the line is in; None matches every file.
        """
        self._scene.mark_origin(self._scene.groups.line_nodes(line, file) if line else set())
        self._scene.groups.mark_line(line or None, file)

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
        groups = self._scene.groups
        ids = groups.span_nodes(line, column, file) & self._scene.drawn.keys() if line and column >= 0 else set()
        if not ids:
            self.highlight_origin_line(line, file)
            return
        self._scene.mark_origin(ids)
        groups.mark_line(line, file)

    def origin_nodes(self) -> set[int]:
        """The nodes :meth:`highlight_origin_line` or :meth:`highlight_origin_at` outlines now."""
        return set(self._scene.origin_marked)

    def set_box_collapsed(self, label: str, collapsed: bool) -> None:
        """Collapse (or expand) the origin boxes labelled ``label`` (``line 72 · pass 2``, ``model.rnn``)."""
        for box in [box for box in self._scene.groups if box.label == label]:
            self._scene.set_collapsed(box, collapsed)

    def export_png(self, path: str | os.PathLike, scale: float = 2.0) -> bool:
        """Save the whole graph as a PNG image; returns whether the file was written.

        Parameters
        ----------
        path : str or path-like
        scale : float
            Pixels per scene unit; lowered so big graphs stay under ``MAX_EXPORT_PIXELS``.
        """
        rect = self._scene.content_rect().adjusted(-20, -20, 20, 20)
        return write_png(self._scene, self._scene.text_layer, rect, path, scale, TEXT_MIN_SCALE)

    def export_svg(self, path: str | os.PathLike) -> bool:
        """Save the whole graph as an SVG drawing; returns whether the file was written."""
        return write_svg(self._scene, self._scene.text_layer, self._scene.content_rect().adjusted(-20, -20, 20, 20),
                         path, TEXT_MIN_SCALE)

    def show_step(self, step: Step) -> None:
        """Follow the step in view: a run that ended without a pause says so instead of asking for a requires_grad."""
        ended_unpaused = step.over and step.snapshot is None
        if ended_unpaused != self._ended_unpaused:
            self._ended_unpaused = ended_unpaused
            self._on_model_leaves_waiting()

    def retranslate(self) -> None:
        """Set the toolbar, the empty-state message, the boxes' labels and the details again in the current language."""
        self._texts.apply()
        self._legend.retranslate()
        self._on_model_leaves_waiting()
        self._scene.retranslate()
        if self.model.selected in self._scene.drawn:
            self._show_details(self.model.selected)

    # -- Qt overrides -----------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self._view and event.type() == QEvent.KeyPress:
            return self._walk(event.key())
        if watched is not self._view.viewport():
            return super().eventFilter(watched, event)
        kind = event.type()
        if kind == QEvent.Resize:  # the dock or the details pane resized: keep the new nodes in view
            self._place_empty()
            if self._follow.isChecked():
                self._framer.frame(self.model.new or self._scene.outputs(), keep=True)
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
            self._framer.user_view = self._framer.user_view or moved >= QApplication.startDragDistance()
            if moved < QApplication.startDragDistance():
                self._click(event.position().toPoint())
        return False

    def _walk(self, key: int) -> bool:
        """Arrow keys walk the graph along its edges (see :data:`WALKS`), Enter opens the details, Esc deselects."""
        if key in WALKS:
            target = self.model.step_from(self.model.selected, WALKS[key])
            if target is not None:
                self.model.select(target)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.model.selected is not None:
            self._details.setFocus(Qt.FocusReason.OtherFocusReason)
            return True
        if key == Qt.Key.Key_Escape and self.model.selected is not None:
            self.model.select(None)
            return True
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

    def _mark_focus(self) -> None:
        """A border in the highlight colour round the focused canvas (a style sheet: set again with each theme, as
        it fixes the canvas's palette when set)."""
        palette = QGuiApplication.palette()
        base = palette.color(QPalette.ColorRole.Base)
        self._view.setStyleSheet(f"QGraphicsView {{ background: {base.name()}; }}"
                                 "QGraphicsView:focus { border: 2px solid "
                                 f"{palette.color(QPalette.ColorRole.Highlight).name()}; }}")
        # The drawing's own background, painted over the viewport: the style sheet reaches the viewport's
        # palette only when Qt polishes it again, which a theme switched under load could leave white.
        self._view.setBackgroundBrush(base)

    def _restyle(self) -> None:
        """View > High Contrast: the drawing, the legend and the details in the palette in use."""
        self._scene.restyle_theme()
        self._style_empty_message(self._empty)
        self._mark_focus()
        self._legend.update()
        if self.model.selected in self._scene.drawn:
            self._show_details(self.model.selected)

    # -- the model's events -----------------------------------------------------------------

    def _on_model_replaced(self) -> None:
        """Draw the whole new graph; the view starts again: all of it when readable so, else its outputs."""
        self._scene.draw_graph()
        self._framer.reset()
        self._framer.frame(self._scene.outputs(), keep=False)
        if self.model.selected in self._scene.drawn:
            self._show_details(self.model.selected)
        else:
            self._details.clear()
        self._update_empty()

    def _on_model_changed(self, diff: Mapping[str, Any]) -> None:
        """Draw a pause's diff, then frame its new nodes (see :meth:`set_follow_new`)."""
        redrawn = self._scene.draw_diff(diff)
        if self.model.selected in redrawn:
            self._show_details(self.model.selected)
        elif self.model.selected not in self._scene.drawn:  # the node went (a hook's frame has no graph of its own)
            self._details.clear()
        self._framer.follow(self.model.new & self._scene.drawn.keys(), self._follow.isChecked())
        self._update_empty()

    def _on_model_selected_changed(self, node_id: int | None) -> None:
        self._scene.refresh_marks()
        if node_id in self._scene.drawn:
            self._show_details(node_id)
        else:
            self._details.clear()

    def _on_model_highlight_changed(self) -> None:
        self._scene.refresh_marks()

    def _on_model_active_changed(self, node_id: int | None) -> None:
        """Mark the node a backward replay is at and scroll it into view."""
        self._scene.refresh_marks()
        if node_id in self._scene.drawn:
            self._view.ensureVisible(self._scene.drawn[node_id].box.sceneBoundingRect(), 40, 40)

    def _on_model_leaves_waiting(self) -> None:
        """Say why the graph is empty: no tensor requires grad, those that do have no node yet, or a backward
        pass called this function (a hook), whose graph is its caller's."""
        names, used = self.model.waiting_leaves, self.model.used_leaves
        if self._ended_unpaused:
            self._empty.setText(tr(ENDED_TEXT))
        elif self.model.in_backward:
            self._empty.setText(tr(BACKWARD_TEXT))
        elif not names:
            self._empty.setText(tr(EMPTY_TEXT))
        else:  # "no operation has used it yet" is not true of a leaf with a .grad
            names = used or names
            texts = (USED_TEXT_PLURAL, USED_TEXT) if used else (WAITING_TEXT_PLURAL, WAITING_TEXT)
            shown = ", ".join(names[:4]) if len(names) <= 4 else \
                join_words([*names[:4], tr("{n} more", n=len(names) - 4)])
            self._empty.setText(tr(texts[0] if len(names) > 1 else texts[1], names=shown))
        self._place_empty()

    # -- the learner's mouse and the toolbar's menu -----------------------------------------

    def _click(self, position: Any) -> None:
        """A click on a node selects it; on a box's toggle collapses or expands it; on its header selects its line."""
        node_id = self._node_at(position)
        if node_id is not None:
            self.model.select(node_id)
            origin = self.model.nodes[node_id].get("origin") or {}
            if origin.get("line"):
                self.origin_selected.emit(origin.get("file") or "", origin["line"])
            if origin.get("span"):
                self.span_selected.emit(origin.get("file") or "", list(origin["span"]))
            return
        point = self._view.mapToScene(position)
        box = next((item for item in self._view.items(position) if isinstance(item, OriginBox)), None)
        if box is None:
            return
        if box.toggle_rect().adjusted(-3, -3, 3, 3).contains(point):
            self._scene.set_collapsed(box, not box.collapsed)
        elif box.collapsed or box.header().contains(point):
            origins = [self.model.nodes[i].get("origin") or {} for i in box.members if i in self.model.nodes]
            first = min((o for o in origins if o.get("line")), key=lambda o: o["line"], default=None)
            if first is not None:
                self.origin_selected.emit(first.get("file") or "", first["line"])

    def _hover(self, node_id: int | None) -> None:
        if node_id == self._hovered:
            return
        self._hovered = node_id
        node = self.model.nodes.get(node_id, {}) if node_id is not None else {}
        names = list(node.get("variables") or [])
        if node.get("variable"):
            names.append(node["variable"])
        self.node_hovered.emit(names)

    def _node_at(self, position: Any) -> int | None:
        for item in self._view.items(position):
            node_id = item.data(0)
            if node_id is not None and node_id in self._scene.drawn and self._scene.drawn[node_id].box.isVisible():
                return int(node_id)
        return None

    def _on_export_png_triggered(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("Export graph as PNG"), "graph.png", tr("PNG image (*.png)"))
        if path:
            self.export_png(path)

    def _on_export_svg_triggered(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("Export graph as SVG"), "graph.svg", tr("SVG drawing (*.svg)"))
        if path:
            self.export_svg(path)

    # -- the details pane and the empty state -----------------------------------------------

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
        nodes = self.model.nodes
        node = nodes[node_id]
        next_nodes = {target: nodes[target] for target in self.model.inputs(node_id)}
        siblings = [nodes[other] for other in self._op_nodes(node_id) - {node_id}]
        return node_details(node_id, node, self._scene.drawn[node_id].names, next_nodes, siblings)

    def _op_nodes(self, node_id: int) -> set[int]:
        """The nodes one call of the operation that made ``node_id`` made: those of its span and pass that
        edges join to it (a pass is unknown after a continue, and the nodes of one call are connected)."""
        nodes = self.model.nodes
        run = (nodes[node_id].get("origin") or {}).get("pass")
        members = {other for other in self._scene.groups.span_members(node_id)
                   if other in nodes and (nodes[other].get("origin") or {}).get("pass") == run}
        return set(reachable([node_id] if node_id in members else [],
                             lambda current: [other for other in members if other != current and (
                                 other in self.model.inputs(current) or current in self.model.inputs(other))]))

    def _update_empty(self) -> None:
        """The empty-state message, shown while there is no node."""
        self._empty.setVisible(not self._scene.drawn)
        self._place_empty()

    def _place_empty(self) -> None:
        port = self._view.viewport().rect()
        width = min(420, port.width() - 24)
        self._empty.setFixedWidth(max(width, 120))
        self._empty.adjustSize()
        self._empty.move(port.center().x() - self._empty.width() // 2, port.center().y() - self._empty.height() // 2)
