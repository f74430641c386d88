"""The geometry of framing a graph in a QGraphicsView: what it shows, the zoom that fits a rectangle, least scrolls."""

from __future__ import annotations

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
