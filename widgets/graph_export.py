"""Writing a drawn graph to PNG and SVG files: the scene's rectangle rendered with text shown when readable."""

from __future__ import annotations

import math
import os
from typing import Any

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

#: Exported images stay under this many pixels.
MAX_EXPORT_PIXELS = 60_000_000
MAX_EXPORT_SIDE = 16_000


def write_png(scene: QGraphicsScene, text_layer: QGraphicsItem, rect: QRectF, path: str | os.PathLike,
              scale: float, text_min_scale: float) -> bool:
    """Save ``rect`` of ``scene`` as a PNG at ``scale`` pixels per unit (lowered for big graphs); returns success."""
    if rect.isEmpty():
        return False
    area = rect.width() * rect.height()
    scale = min(scale, math.sqrt(MAX_EXPORT_PIXELS / area), MAX_EXPORT_SIDE / max(rect.width(), rect.height()))
    image = QImage(max(1, round(rect.width() * scale)), max(1, round(rect.height() * scale)), QImage.Format_ARGB32)
    image.fill(Qt.white)
    render(scene, text_layer, image, rect, scale, text_min_scale)
    return image.save(os.fspath(path), "PNG")


def write_svg(scene: QGraphicsScene, text_layer: QGraphicsItem, rect: QRectF, path: str | os.PathLike,
              text_min_scale: float) -> bool:
    """Save ``rect`` of ``scene`` as an SVG drawing; returns whether a file was written."""
    if rect.isEmpty():
        return False
    generator = QSvgGenerator()
    generator.setFileName(os.fspath(path))
    generator.setSize(QSize(math.ceil(rect.width()), math.ceil(rect.height())))
    generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    generator.setTitle("GradStep autograd graph")
    if not render(scene, text_layer, generator, rect, 1.0, text_min_scale):
        return False
    return os.path.getsize(path) > 0


def render(scene: QGraphicsScene, text_layer: QGraphicsItem, device: Any, rect: QRectF, scale: float,
           text_min_scale: float) -> bool:
    """Paint ``rect`` of the scene onto an image or SVG generator, the text layer shown if readable at ``scale``."""
    shown = text_layer.isVisible()
    text_layer.setVisible(scale >= text_min_scale)
    painter = QPainter()
    if not painter.begin(device):
        text_layer.setVisible(shown)
        return False
    painter.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
    painter.fillRect(QRectF(0, 0, rect.width() * scale, rect.height() * scale), Qt.white)
    scene.render(painter, QRectF(0, 0, rect.width() * scale, rect.height() * scale), rect)
    painter.end()
    text_layer.setVisible(shown)
    return True
