"""Every panel is a key away: View > Go To Panel (Alt+digit) shows the panel and puts the keyboard in it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from app import i18n
from app.workspace import LESSONS_DIR
from widgets.window_layout import GO_TO_KEYS

#: Where the keyboard lands in each panel.
LANDS_IN = {"lessons": "lesson_browser", "notes": "notes_view", "code": "code_view", "graph": "graph_view",
            "nodes": "node_list", "variables": "variables_view", "backward": "backward_panel", "console": "console",
            "watch": "watch_view", "stack": "stack_view"}


@pytest.fixture
def window(open_window):
    return open_window(LESSONS_DIR / "03_loops.py")


@pytest.mark.parametrize("name", list(GO_TO_KEYS))
def test_alt_digit_shows_the_panel_and_gives_it_the_keyboard(qtbot, window, name):
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    key = GO_TO_KEYS[name][-1]
    qtbot.keyClick(window, getattr(Qt.Key, f"Key_{key}"), Qt.KeyboardModifier.AltModifier)
    panel = getattr(window, LANDS_IN[name])
    focus = QApplication.focusWidget()
    qtbot.waitUntil(lambda: panel.isVisible() and focus is not None)
    assert focus is panel or panel.isAncestorOf(focus), (name, focus)
    assert not panel.visibleRegion().isEmpty()  # its tab in front


def test_the_go_to_menu_names_each_panel_in_the_interfaces_language(window):
    texts = [action.text() for action in window.menus["go_to"].actions()]
    assert texts[:3] == ["Lessons", "Lesson notes", "Code"] and len(texts) == len(GO_TO_KEYS)
    window.set_language("zh")
    try:
        assert [action.text() for action in window.menus["go_to"].actions()][:3] == [
            i18n.tr("Lessons"), i18n.tr("Lesson notes"), "代码"]
        assert window.menus["go_to"].title() == "转到面板(&G)"
    finally:
        window.set_language("en")
