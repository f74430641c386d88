"""The geometry of framing a graph in a QGraphicsView: what it shows, the zoom that fits a rectangle, least scrolls,
and edges that cut no box in two."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsView

#: Margin kept around what is framed, in pixels.
FRAME_MARGIN = 16


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
