"""View > High Contrast: the application's palette (black base, white text, yellow and cyan marks) switched at run
time, and the way a panel re-reads the colours it chose when the palette changes.

Qt tells every widget in an event when the application's palette changes; :func:`follow_palette`
turns that event into a call of the panel's own ``restyle``, so colours a panel worked out
once (a tint, a style sheet, a graph's pens) are worked out again, without a restart.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPalette
from PySide6.QtWidgets import QApplication, QStyle, QWidget

from widgets import graph_items

Role = QPalette.ColorRole
#: The high-contrast palette: every text at least 7:1 against the background it is drawn on.
HIGH_CONTRAST = {
    Role.Window: "#000000", Role.WindowText: "#ffffff", Role.Base: "#000000", Role.AlternateBase: "#1a1a1a",
    Role.Text: "#ffffff", Role.Button: "#000000", Role.ButtonText: "#ffffff", Role.BrightText: "#ffff00",
    Role.Highlight: "#ffff00", Role.HighlightedText: "#000000", Role.Link: "#00ffff", Role.LinkVisited: "#ff99ff",
    Role.ToolTipBase: "#000000", Role.ToolTipText: "#ffffff", Role.PlaceholderText: "#c8c8c8",
    Role.Light: "#ffffff", Role.Midlight: "#d0d0d0", Role.Mid: "#b0b0b0", Role.Dark: "#ffffff", Role.Shadow: "#ffffff",
}
#: Disabled controls: still 7:1 on black, told apart from enabled ones by their grey.
HIGH_CONTRAST_DISABLED = {Role.WindowText: "#a8a8a8", Role.Text: "#a8a8a8", Role.ButtonText: "#a8a8a8",
                          Role.PlaceholderText: "#a8a8a8", Role.Highlight: "#a8a8a8"}

#: What the style draws in the window's colour made darker (invisible on black): the frames of fields and the
#: boxes of check boxes, drawn white here; a ticked box is filled yellow.
HIGH_CONTRAST_SHEET = """
QLineEdit, QComboBox, QAbstractSpinBox { border: 1px solid #ffffff; padding: 1px 2px; }
QLineEdit:focus, QComboBox:focus, QAbstractSpinBox:focus { border: 2px solid #ffff00; }
QCheckBox::indicator, QRadioButton::indicator, QGroupBox::indicator, QTreeView::indicator {
    border: 1px solid #ffffff; background: #000000; width: 12px; height: 12px; }
QCheckBox::indicator:checked, QRadioButton::indicator:checked, QGroupBox::indicator:checked,
QTreeView::indicator:checked { background: #ffff00; }
QRadioButton::indicator { border-radius: 7px; }
"""

_normal: QPalette | None = None  # the application's palette before high contrast
_high_contrast = False


def high_contrast_palette() -> QPalette:
    """The application palette of the high-contrast theme."""
    palette = QPalette()
    for role, colour in HIGH_CONTRAST.items():
        palette.setColor(role, QColor(colour))
    for role, colour in HIGH_CONTRAST_DISABLED.items():
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour))
    return palette


def high_contrast() -> bool:
    """Whether the high-contrast theme is on."""
    return _high_contrast


def set_high_contrast(on: bool) -> None:
    """Switch the high-contrast theme on or off; every panel that follows the palette restyles itself."""
    global _normal, _high_contrast
    app = QApplication.instance()
    if app is None or on == _high_contrast:
        return
    if _normal is None:
        _normal = QPalette(QGuiApplication.palette())
    _high_contrast = on
    graph_items.use_high_contrast(on)  # before the palette's events: the graph restyles from the new colours
    app.setPalette(high_contrast_palette() if on else _normal)
    app.setStyleSheet(HIGH_CONTRAST_SHEET if on else "")


class _PaletteFollower(QObject):
    """Calls ``restyle`` when its widget's palette changes to another theme (once per change)."""

    def __init__(self, widget: QWidget, restyle: Callable[[], None]) -> None:
        super().__init__(widget)
        self._restyle = restyle
        self._theme = _theme_key()
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.ApplicationPaletteChange, QEvent.Type.PaletteChange):
            theme = _theme_key()
            if theme != self._theme:  # a style sheet set by restyle changes the palette again: not a new theme
                self._theme = theme
                self._restyle()
        return False


def _theme_key() -> tuple[bool, str]:
    return _high_contrast, QGuiApplication.palette().color(Role.Base).name()


def follow_palette(widget: QWidget, restyle: Callable[[], None]) -> None:
    """Call ``restyle`` whenever the application's palette changes to another theme (View > High Contrast)."""
    _PaletteFollower(widget, restyle)


def standard_icon(widget: QWidget, pixmap: QStyle.StandardPixmap) -> QIcon:
    """The style's icon ``pixmap``; in high contrast, drawn in the palette's button text colour (the style's own
    icons are dark, unseen on black)."""
    icon = widget.style().standardIcon(pixmap)
    if not _high_contrast:
        return icon
    colour = QGuiApplication.palette().color(Role.ButtonText)
    recoloured = QIcon()
    for size in icon.availableSizes():
        drawn = icon.pixmap(size)
        painter = QPainter(drawn)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
        painter.fillRect(drawn.rect(), colour)
        painter.end()
        recoloured.addPixmap(drawn)
    return recoloured
