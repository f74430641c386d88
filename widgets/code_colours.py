"""The code view's colours in the theme in use: the marked lines' backgrounds, the gutter's marks, the operation
that just ran, the lock note, the tint of a locked view (View > High Contrast switches them)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

from widgets.colours import blend
from widgets.theme import high_contrast

#: Background of the sub-expression whose operation just ran (step into expression), over the current line's.
OPERATION_COLOUR = "#ffb74d"
#: Full-width backgrounds of the marked lines and the colours of the gutter's marks.
LINE_COLOURS = {
    "current": "#fff1b8",
    "exception": "#ffd6d6",
    "previous": "#e2f3da",
    "error": "#ffe1e1",
    "current_arrow": "#c62828",
    "previous_arrow": "#8cc56a",
    "breakpoint": "#e51400",
    "breakpoint_edge": "#a30f00",
}
#: View > High Contrast: dark line backgrounds the code's colours read on at 7:1, bright marks, a yellow frame
#: round the current line; the operation's background is the lightest, the one the code's colours are made to suit.
HIGH_CONTRAST_LINE_COLOURS = {
    "current": "#262600",
    "exception": "#3d0000",
    "previous": "#002600",
    "error": "#3d0000",
    "current_arrow": "#ff6666",
    "previous_arrow": "#66ff66",
    "breakpoint": "#ff3333",
    "breakpoint_edge": "#ffffff",
    "operation": "#00335a",
    "frame": "#ffff00",
}


def line_colours() -> dict[str, str]:
    """The line backgrounds and gutter marks of the theme in use."""
    return HIGH_CONTRAST_LINE_COLOURS if high_contrast() else LINE_COLOURS


def operation_colour() -> str:
    """The background of the operation that just ran, in the theme in use."""
    return HIGH_CONTRAST_LINE_COLOURS["operation"] if high_contrast() else OPERATION_COLOUR


def syntax_background() -> QColor | None:
    """The background the code's colours must read on at 7:1 in high contrast (the lightest it is drawn on), or
    None for the usual colours."""
    return QColor(HIGH_CONTRAST_LINE_COLOURS["operation"]) if high_contrast() else None


def lock_note_sheet() -> str:
    """The style of the note a locked view shows when typed into."""
    colours = "#000000; color: #ffffff; border: 1px solid #ffff00" if high_contrast() else \
        "rgba(255, 255, 255, 215); color: #5f6b7a; border: 1px solid #c5ccd6"
    return f"QLabel {{ background: {colours}; border-radius: 3px; padding: 1px 6px; }}"


def locked_palette(read_only: bool) -> QPalette:
    """A read-only view's base tinted with the highlight colour; an editable one's: the application's.

    Only the base is set: the view hears of a new application palette as long as it inherits the other roles.
    """
    palette = QPalette()
    if read_only:
        app = QGuiApplication.palette()
        palette.setColor(QPalette.ColorRole.Base, blend(app.color(QPalette.ColorRole.Base),
                                                        app.color(QPalette.ColorRole.Highlight), 0.07))
    return palette
