"""View > Text Size: the interface's text, the code and the output at 100 %, 125 %, 150 % or 200 %, together.

The application font scales every widget that uses it (menus, tables, notes, forms); the code
and the output use a fixed-width font of their own, scaled by the same factor. The setting is
kept between sessions.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication

#: The sizes offered, in percent of the platform's.
SIZES = (100, 125, 150, 200)

_base: QFont | None = None  # the application font before any scaling


def apply_text_size(percent: int) -> float:
    """Scale the application font to ``percent`` of the platform's; returns the factor."""
    global _base
    app = QApplication.instance()
    scale = percent / 100
    if app is None or (_base is None and percent == 100):
        return scale  # nothing scaled yet: the platform's font stays as it is
    if _base is None:
        _base = QFont(app.font())
    font = QFont(_base)
    if _base.pointSizeF() > 0:
        font.setPointSizeF(_base.pointSizeF() * scale)
    else:
        font.setPixelSize(round(_base.pixelSize() * scale))
    app.setFont(font)
    return scale


def fixed_font(scale: float) -> QFont:
    """The platform's fixed-width font at ``scale`` times its size (code and output)."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setPointSizeF(font.pointSizeF() * scale)
    return font
