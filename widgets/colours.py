"""Colours that suit the theme: a blend of two colours, a colour readable on the base, the watch's change tint."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette


def blend(start: QColor, end: QColor, amount: float) -> QColor:
    """The opaque colour ``amount`` of the way from ``start`` to ``end``.

    A tint laid over the theme's base colour (``blend(base, amber, 0.35)``) suits light and dark palettes alike.
    """
    pairs = zip(start.getRgbF()[:3], end.getRgbF()[:3], strict=True)
    return QColor.fromRgbF(*(a + (b - a) * amount for a, b in pairs))


def readable_color(light: str, dark: str) -> QColor:
    """``light`` in a light theme (dark text on a light base), ``dark`` in a dark one."""
    return QColor(light if QPalette().color(QPalette.ColorRole.Base).lightness() >= 128 else dark)


def change_highlight() -> QColor:
    """The background of a watched value that changed: amber blended into the theme's base colour."""
    return blend(QPalette().color(QPalette.ColorRole.Base), QColor("#ffb300"), 0.35)
