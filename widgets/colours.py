"""Colours that suit the theme: a blend of two colours, a colour readable on the base, the watch's change tint,
and the WCAG contrast between two colours (the high-contrast theme keeps every text at 7:1 or more)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QTableWidget, QWidget

from widgets.theme import follow_palette, high_contrast

#: The contrast the high-contrast theme gives text (WCAG AAA).
STRONG_CONTRAST = 7.0


def blend(start: QColor, end: QColor, amount: float) -> QColor:
    """The opaque colour ``amount`` of the way from ``start`` to ``end``.

    A tint laid over the theme's base colour (``blend(base, amber, 0.35)``) suits light and dark palettes alike.
    """
    pairs = zip(start.getRgbF()[:3], end.getRgbF()[:3], strict=True)
    return QColor.fromRgbF(*(a + (b - a) * amount for a, b in pairs))


def luminance(colour: QColor) -> float:
    """WCAG relative luminance, 0 (black) to 1 (white)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in colour.getRgbF()[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: QColor, second: QColor) -> float:
    """WCAG contrast ratio of two colours, 1 to 21."""
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def ensure_contrast(colour: QColor, background: QColor, ratio: float = STRONG_CONTRAST) -> QColor:
    """``colour``, or the least change of it towards white (on a dark ``background``) or black that reads at
    ``ratio`` against ``background``."""
    target = QColor("#ffffff" if luminance(background) < 0.18 else "#000000")
    for step in range(11):
        shown = blend(colour, target, step / 10)
        if contrast_ratio(shown, background) >= ratio:
            return shown
    return target


def readable_color(light: str, dark: str) -> QColor:
    """``light`` in a light theme (dark text on a light base), ``dark`` in a dark one; in high contrast,
    made to read at 7:1 on the base."""
    base = QPalette().color(QPalette.ColorRole.Base)
    colour = QColor(light if base.lightness() >= 128 else dark)
    return ensure_contrast(colour, base) if high_contrast() else colour


def tint(colour: QColor, amount: float) -> QColor:
    """A background ``amount`` of the way from the theme's base to ``colour``; in high contrast, as little of it
    as keeps the text at 7:1."""
    palette = QPalette()
    base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
    shown = blend(base, colour, amount)
    while high_contrast() and amount > 0 and contrast_ratio(shown, text) < STRONG_CONTRAST:
        amount = max(amount - 0.05, 0.0)
        shown = blend(base, colour, amount)
    return shown


def change_highlight() -> QColor:
    """The background of a watched value that changed: amber blended into the theme's base colour."""
    return tint(QColor("#ffb300"), 0.35)


def keep_readable(widget: QWidget, light: str, dark: str) -> None:
    """Colour ``widget``'s text ``readable_color(light, dark)``, now and after each change of theme."""
    def colour() -> None:
        widget.setStyleSheet(f"color: {readable_color(light, dark).name()};")
    colour()
    follow_palette(widget, colour)


def retint_changes(table: QTableWidget) -> None:
    """Give the table's tinted cells (the values that changed) the change tint of the theme in use."""
    for row in range(table.rowCount()):
        for column in range(table.columnCount()):
            item = table.item(row, column)
            if item is not None and item.background().style() != Qt.BrushStyle.NoBrush:
                item.setBackground(change_highlight())
