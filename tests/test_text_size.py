"""View > Text Size scales the interface, the code and the output together, and is kept."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication

from app.workspace import LESSONS_DIR
from widgets import settings


def test_150_percent_scales_the_interface_the_code_and_the_output_and_is_remembered(qtbot, open_window):
    window = open_window(LESSONS_DIR / "03_loops.py")
    base_app = QApplication.font().pointSizeF()
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).pointSizeF()
    base_code = window.code_view.font().pointSizeF()
    window.text_size_actions[150].trigger()
    try:
        assert QApplication.font().pointSizeF() == base_app * 1.5
        assert window.code_view.font().pointSizeF() == base_code * 1.5
        assert window.console.output.font().pointSizeF() == fixed * 1.5
        # the tables follow the application font (Qt tells each widget in an event)
        qtbot.waitUntil(lambda: window.variables_view.font().pointSizeF() == base_app * 1.5)
        assert window.text_size_actions[150].isChecked() and not window.text_size_actions[100].isChecked()
        assert settings.get("view/text_size") == 150
    finally:
        window.set_text_size(100)
    assert QApplication.font().pointSizeF() == base_app and window.code_view.font().pointSizeF() == base_code


def test_the_graphs_text_grows_with_the_text_size(qtbot, window_on):
    """The graph framed its nodes at the same zoom at 150 % as at 100 %: its text stayed small."""
    from PySide6.QtWidgets import QGraphicsView
    from test_main_window import wait_paused

    window = window_on("import torch\n\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\nprint(y)\n")
    window.commands.step_over()
    wait_paused(qtbot, window)
    while window.run.live["line"] < 5:  # to the print, after y's graph is made
        window.commands.step_over()
        wait_paused(qtbot, window)
    qtbot.waitUntil(lambda: len(window.graph_model.nodes) >= 3)
    canvas = window.graph_view.findChild(QGraphicsView, "graph_canvas")
    window.graph_view.fit_to_view()
    normal = canvas.transform().m11()
    window.set_text_size(150)
    try:
        grown = canvas.transform().m11()  # 1.5 times larger, or as large as the whole graph fits
        assert normal * 1.05 < grown <= normal * 1.5 + 1e-6
    finally:
        window.set_text_size(100)
    assert canvas.transform().m11() == pytest.approx(normal)


def test_at_150_percent_on_1280_the_toolbar_and_the_lessons_tabs_stay_whole(qtbot, open_window):
    """At 150 % the toolbar folded half its buttons into "»" and the tabs read "Les…" and "Lesson …"."""
    from PySide6.QtWidgets import QTabBar, QToolButton

    window = open_window(LESSONS_DIR / "03_loops.py", (1280, 800))
    window.set_text_size(150)
    try:
        qtbot.waitUntil(lambda: max(window.docks[n].width() for n in ("lessons", "notes")) >= 285)
        extension = window.toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
        assert extension is None or not extension.isVisible()
        qtbot.wait(50)  # the dock tab bars are laid out
        bars = [bar for bar in window.findChildren(QTabBar)
                if {bar.tabText(i) for i in range(bar.count())} == {"Lessons", "Lesson notes"}]
        assert bars and all(bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(bar.tabText(i))
                            for bar in bars for i in range(bar.count()))
    finally:
        window.set_text_size(100)
    qtbot.waitUntil(lambda: window.toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
