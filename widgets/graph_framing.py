"""Where the graph view looks: the new nodes framed at a readable zoom, the whole graph, the learner's zoom, and
the geometry under them (what the view shows, the zoom that fits a rectangle, least scrolls, edges that cut no
box in two)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsView

from widgets.graph_items import FONT_PIXELS
from widgets.graph_scene import GraphScene

#: Margin kept around what is framed, in pixels.
FRAME_MARGIN = 16
#: Below this zoom factor node text is not drawn (level of detail).
TEXT_MIN_SCALE = 0.4
MIN_SCALE = 0.002
MAX_SCALE = 4.0
#: Framing keeps node text at least MIN_TEXT_PIXELS tall on screen.
MIN_TEXT_PIXELS = 9
#: The least zoom framing uses, and the one it prefers when the graph does not fit.
MIN_READABLE_SCALE = MIN_TEXT_PIXELS / FONT_PIXELS
READABLE_SCALE = 0.8
#: Framing never zooms in beyond this.
MAX_FRAME_SCALE = 1.5


def visible_rect(view: QGraphicsView) -> QRectF:
    """The scene rectangle the viewport shows."""
    return view.mapToScene(view.viewport().rect()).boundingRect()


def fit_scale(view: QGraphicsView, rect: QRectF) -> float:
    """The zoom at which ``rect`` just fits in the viewport, margins kept."""
    port = view.viewport().rect()
    return min((port.width() - 2 * FRAME_MARGIN) / max(rect.width(), 1.0),
               (port.height() - 2 * FRAME_MARGIN) / max(rect.height(), 1.0))


def zoom_on(view: QGraphicsView, rect: QRectF, scale: float) -> None:
    """Show ``rect``'s centre at zoom ``scale``."""
    view.setTransform(QTransform.fromScale(scale, scale))
    view.centerOn(rect.center())


def scroll_to_show(view: QGraphicsView, rect: QRectF) -> None:
    """Scroll the least that shows ``rect``; one too big for the view shows its bottom, where the outputs are."""
    visible = visible_rect(view)
    margin = FRAME_MARGIN / view.transform().m11()
    centre = visible.center()
    if rect.width() + 2 * margin > visible.width():
        dx = rect.center().x() - centre.x()
    else:
        dx = min(rect.left() - margin - visible.left(), 0) or max(rect.right() + margin - visible.right(), 0)
    if rect.height() + 2 * margin > visible.height():
        dy = rect.bottom() + margin - visible.bottom()
    else:
        dy = min(rect.top() - margin - visible.top(), 0) or max(rect.bottom() + margin - visible.bottom(), 0)
    view.centerOn(centre + QPointF(dx, dy))


def _merged(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Overlapping spans joined: a rank's boxes become one span, so the search below stays short."""
    joined: list[list[float]] = []
    for start, end in sorted(spans):
        if joined and start < joined[-1][1]:
            joined[-1][1] = max(joined[-1][1], end)
        else:
            joined.append([start, end])
    return [(start, end) for start, end in joined]


def uncut_start(start: float, length: float, keep: tuple[float, float], spans: list[tuple[float, float]],
                pad: float) -> float:
    """The start nearest ``start`` of a window ``length`` long that holds ``keep`` and cuts no span in two.

    A span is either wholly inside the window or wholly outside, ``pad`` away from its ends (the
    view scrolls by whole pixels); when no start does that, ``start`` is kept.
    """
    spans = _merged(spans)
    candidates = {start}
    for low, high in spans:
        candidates |= {low - pad, high + pad, high + pad - length, low - pad - length}

    def fine(s: float) -> bool:
        if keep[0] < s or keep[1] > s + length:
            return False
        end, slack = s + length, pad * 0.99  # a candidate meets its own span's bound exactly, give or take rounding
        return all(high + slack <= s or low - slack >= end or (low - slack >= s and high + slack <= end)
                   for low, high in spans)

    return min((s for s in candidates if fine(s)), key=lambda s: abs(s - start), default=start)


def show_uncut(view: QGraphicsView, keep: QRectF, boxes: Callable[[QRectF], list[QRectF]]) -> None:
    """Scroll the least that leaves no box cut by the view's edges while ``keep`` stays in view.

    ``boxes(rect)`` gives the boxes that lie in or across ``rect``; it is asked once. Vertical
    first: ranks are where a cut shows most (a row of leaves cut in half along the top).
    """
    pad = 4 / view.transform().m11()
    visible = visible_rect(view)
    # a pass moves the view by about a box, so the boxes within its own size around are those that matter
    near = boxes(visible.adjusted(-visible.width(), -visible.height(), visible.width(), visible.height()))
    for _ in range(2):  # again only if it moved: a box that came into view at one edge may be cut at the other
        visible = visible_rect(view)
        top = uncut_start(visible.top(), visible.height(), (keep.top(), keep.bottom()),
                          [(r.top(), r.bottom()) for r in near if r.right() > visible.left()
                           and r.left() < visible.right()], pad)
        visible.moveTop(top)
        left = uncut_start(visible.left(), visible.width(), (keep.left(), keep.right()),
                           [(r.left(), r.right()) for r in near if r.bottom() > visible.top()
                            and r.top() < visible.bottom()], pad)
        if visible.left() == left and visible.top() == visible_rect(view).top():
            return
        visible.moveLeft(left)
        view.centerOn(visible.center())


class Framer:
    """Moves a graph view to what the learner should see: a step's new nodes, all of the graph, or their own zoom.

    Parameters
    ----------
    view : QGraphicsView
        The canvas showing ``scene``.
    scene : GraphScene
    """

    def __init__(self, view: QGraphicsView, scene: GraphScene) -> None:
        self._view, self._scene = view, scene
        self.fresh = True
        """No node was framed since the graph was last replaced by an empty one: the first new ones get framed."""
        self.user_view = False
        """The learner zoomed or panned since the view last framed itself."""
        self.text_scale = 1.0
        """View > Text Size: the readable zooms scale with it, so the graph's text grows with the rest."""

    def reset(self) -> None:
        """Back to no zoom at the origin, after the whole graph was drawn anew."""
        self._view.setTransform(QTransform())
        self._view.centerOn(0, 0)
        self.update_detail()
        self.fresh = not self._scene.drawn  # an empty graph: the first nodes a step brings get framed afresh

    def follow(self, new: set[int], enabled: bool) -> None:
        """After a pause: frame its ``new`` nodes when following (or none was framed yet), else only keep the view
        from showing nothing but empty space."""
        if new and (enabled or self.fresh):
            self.frame(new, keep=not self.fresh)
            self.fresh = False
        elif self._scene.drawn and not self._shows_a_node():
            self.frame(new or self._scene.outputs(), keep=False)

    def frame(self, ids: Iterable[int], keep: bool) -> None:
        """Show the nodes ``ids`` and their direct inputs at a readable zoom; all of the graph when it fits so.

        With ``keep`` the learner's zoom and scroll stay while they are readable and show all of
        that. Inputs reached through a leaf's lane count by the lane, which runs beside the
        nodes, not by the leaf, which may be a thousand ranks up. Whatever else is in view is
        whole too: a node the view's edge would cut in two is scrolled wholly in or wholly out.
        """
        scene, view = self._scene, self._view
        least, readable, most = (limit * self.text_scale for limit in (MIN_READABLE_SCALE, READABLE_SCALE,
                                                                       MAX_FRAME_SCALE))
        ids = [i for i in ids if i in scene.drawn]
        if not ids or view.viewport().width() < 2 or view.viewport().height() < 2:
            return
        new = scene.rect_of(ids)
        inputs = [t for i in ids for t in scene.edges.next.get(i, ()) if not scene.layout.uses_lane(i, t)]
        focus = new | scene.rect_of(inputs) if inputs else new
        scale = self.scale()
        margin = FRAME_MARGIN / scale
        shown = visible_rect(view).adjusted(margin, margin, -margin, -margin)
        content = scene.content_rect()
        fits = fit_scale(view, content) >= least
        if keep and scale >= least and shown.contains(focus) and (
                self.user_view or not fits or shown.contains(content)):
            return
        self.user_view = False
        if fits:
            self._zoom_on(content, min(fit_scale(view, content), most))
            return
        if not keep or scale < least:
            scale = readable
        scale = min(scale, max(fit_scale(view, focus), least))
        if fit_scale(view, focus) < scale:
            focus = new  # too much to show at a readable zoom: the new nodes come first
        view.setTransform(QTransform.fromScale(scale, scale))
        self.update_detail()
        scroll_to_show(view, focus)
        operations = [i for i in ids if not scene.layout.is_leaf(i)]
        if operations and fit_scale(view, new) < scale:
            # new leaves spread wider than the view: what the line computed is shown whole, the leaves keep their lanes
            focus = scene.rect_of(operations)
            scroll_to_show(view, focus)
        show_uncut(view, focus, scene.box_rects)

    def overview(self) -> None:
        """Zoom and scroll so the whole graph is visible, however small (never beyond ``MAX_FRAME_SCALE``)."""
        if self._scene.drawn:
            rect = self._scene.content_rect()
            self._zoom_on(rect, min(fit_scale(self._view, rect), MAX_FRAME_SCALE * self.text_scale))

    def zoom(self, factor: float) -> None:
        """Zoom by ``factor`` around the centre of the view, within the allowed range (the learner's zoom)."""
        factor = min(max(factor, MIN_SCALE / self.scale()), MAX_SCALE / self.scale())
        self._view.scale(factor, factor)
        self.user_view = True
        self.update_detail()

    def scale(self) -> float:
        """The view's zoom factor."""
        return self._view.transform().m11()

    def update_detail(self) -> None:
        """Show text only when it is large enough to read; hidden text costs nothing to paint."""
        layer = self._scene.text_layer
        visible = self.scale() >= TEXT_MIN_SCALE
        if layer.isVisible() != visible:
            layer.setVisible(visible)

    def _zoom_on(self, rect: QRectF, scale: float) -> None:
        zoom_on(self._view, rect, scale)
        self.update_detail()

    def _shows_a_node(self) -> bool:
        drawn = self._scene.drawn
        return any(item.data(0) in drawn for item in self._scene.items(visible_rect(self._view)))
