"""View > High Contrast restyles every panel at once, without a restart, at 7:1 or more, and is kept."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QGraphicsView, QLabel
from test_code_view import backgrounds, formats_of, row_y
from test_main_window import wait_paused

from app.workspace import LESSONS_DIR
from widgets import settings
from widgets.code_view import LINE_COLOURS
from widgets.colours import contrast_ratio
from widgets.graph_items import NORMAL_PALETTE

LOOPS = LESSONS_DIR / "03_loops.py"
Role = QPalette.ColorRole


def paused_in_the_loop(qtbot, open_window):
    """Lesson 03 paused at its RNN line, on the loop's second pass, Ask Predictions off."""
    window = open_window(LOOPS, (1280, 800))
    window.act_ask_predictions.setChecked(False)
    window.toggle_predictions()
    lines = LOOPS.read_text(encoding="utf-8").splitlines()
    line = next(i for i, text in enumerate(lines, 1) if re.match(r"\s+h_t = torch.tanh", text))
    window.code_view.toggle_breakpoint(line)
    window.act_run_to_end.trigger()
    wait_paused(qtbot, window, line)
    window.act_start.trigger()
    wait_paused(qtbot, window, line)
    qtbot.waitUntil(lambda: len(window.graph_view._scene.drawn) > 10)
    return window, line


def node_colours(window) -> list[tuple[QColor, QColor, QColor]]:
    """(fill, outline, text colour) of every node box drawn."""
    return [(drawn.box.brush().color(), drawn.box.pen().color(), drawn.texts[0].brush().color())
            for drawn in window.graph_view._scene.drawn.values()]


def indent_colour(view, line: int) -> QColor:
    """The colour on screen in ``line``'s indentation (the loop's body is indented: no text there)."""
    return view.viewport().grab().toImage().pixelColor(8, row_y(view, line))


def canvas_colour(window) -> QColor:
    """The graph canvas's colour on screen: the commonest of its four corners (a box may lie over one)."""
    image = window.graph_view.findChild(QGraphicsView, "graph_canvas").viewport().grab().toImage()
    right, bottom = image.width() - 3, image.height() - 3
    seen = Counter(image.pixelColor(x, y).name() for x, y in ((2, 2), (right, 2), (2, bottom), (right, bottom)))
    return QColor(seen.most_common(1)[0][0])


@pytest.mark.parametrize("text_size", [100, 150])  # at 150 % the locked code's viewport kept a light base
def test_high_contrast_restyles_every_panel_at_7_to_1_and_back_and_is_kept(qtbot, open_window, text_size):
    window, line = paused_in_the_loop(qtbot, open_window)
    action = window.menu_actions["high_contrast"]
    normal_base = QGuiApplication.palette().color(Role.Base)
    normal_nodes = node_colours(window)
    assert backgrounds(window.code_view, line) == {line: LINE_COLOURS["current"]}
    window.set_text_size(text_size)
    action.trigger()
    try:
        assert action.isChecked() and settings.get("view/high_contrast") is True
        palette = QGuiApplication.palette()
        for text, background in ((Role.Text, Role.Base), (Role.WindowText, Role.Window),
                                 (Role.ButtonText, Role.Button), (Role.HighlightedText, Role.Highlight),
                                 (Role.PlaceholderText, Role.Base), (Role.Link, Role.Base)):
            assert contrast_ratio(palette.color(text), palette.color(background)) >= 7, (text, background)
        # the graph: black boxes on a black canvas, outlined and lettered at 7:1 or more (Qt tells the docks'
        # panels of the new palette in events of their own)
        qtbot.waitUntil(lambda: canvas_colour(window).name() == "#000000")
        canvas = canvas_colour(window)
        for fill, outline, text in node_colours(window):
            assert contrast_ratio(text, fill) >= 7 and contrast_ratio(outline, canvas) >= 7
        # the code: the current line's background, and every colour of its code on it
        current, plain = indent_colour(window.code_view, line), indent_colour(window.code_view, line + 1)
        assert contrast_ratio(current, palette.color(Role.Text)) >= 7
        assert contrast_ratio(plain, palette.color(Role.Text)) >= 7  # the base of a line with no mark
        assert all(contrast_ratio(colour, current) >= 7 for _, colour, *_ in formats_of(window.code_view, line))
        # the panels beside: the variables' text, the console's output, the timeline's label
        for widget in (window.variables_view, window.console.output, window.timeline.label, window.notes_view):
            widget_palette = widget.palette()
            assert widget_palette.color(Role.Base).name() == "#000000"
            assert contrast_ratio(widget_palette.color(widget.foregroundRole()),
                                  widget_palette.color(widget.backgroundRole())) >= 7
        # kept: a new window opens in high contrast
        second = open_window(LOOPS)
        assert second.menu_actions["high_contrast"].isChecked()
        assert QGuiApplication.palette().color(Role.Base).name() == "#000000"
    finally:
        action.trigger()
        window.set_text_size(100)
    assert not action.isChecked() and settings.get("view/high_contrast") is False
    assert QGuiApplication.palette().color(Role.Base) == normal_base
    qtbot.waitUntil(lambda: canvas_colour(window) == normal_base)
    assert node_colours(window) == normal_nodes
    assert indent_colour(window.code_view, line).name() == LINE_COLOURS["current"]
    assert {fill.name() for fill, *_ in normal_nodes} <= {pair[0] for pair in NORMAL_PALETTE.values()
                                                          if isinstance(pair, tuple)}


def test_the_empty_graphs_card_follows_the_theme(qtbot, open_window):
    """Before a run the graph shows a card; in high contrast it is no light card on a black canvas."""
    window = open_window(LOOPS, (1280, 800))
    empty = window.graph_view.findChild(QLabel, "graph_empty_message")
    qtbot.waitUntil(empty.isVisible)

    def card() -> tuple[QColor, QColor]:
        image = empty.grab().toImage()
        background = image.pixelColor(image.width() // 2, 3)  # inside the border, above the text
        ink = max((image.pixelColor(x, y) for x in range(0, image.width(), 2)
                   for y in range(0, image.height(), 2)), key=lambda c: contrast_ratio(c, background))
        return background, ink

    light_background, _ = card()
    window.menu_actions["high_contrast"].trigger()
    qtbot.waitUntil(lambda: card()[0].lightness() < 64)
    background, ink = card()
    assert light_background.lightness() > 200
    assert contrast_ratio(ink, background) >= 7
    window.menu_actions["high_contrast"].trigger()
    qtbot.waitUntil(lambda: card()[0].lightness() > 200)
