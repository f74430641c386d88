"""View > Text Size scales the interface, the code and the output together, and is kept."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics
from PySide6.QtWidgets import QApplication, QTabBar, QToolButton, QTreeView, QWidget

from app.workspace import LESSONS_DIR
from widgets import settings
from widgets.window_layout import READABLE_CODE_CHARS as READABLE


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
        step = window.run.live["step"]
        window.commands.step_over()
        # The session is paused (its reader thread) before the window shows that pause (a queued
        # signal): wait for the new pause itself, or the line read next is the old one's.
        qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live["step"] > step,  # noqa: B023
                        timeout=30_000)
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
    window = open_window(LESSONS_DIR / "03_loops.py", (1280, 800))
    window.set_text_size(150)

    def lessons_tabs_whole() -> bool:
        bars = [bar for bar in window.findChildren(QTabBar) if bar.isVisible()
                and {"Lessons", "Lesson notes"} <= {bar.tabText(i) for i in range(bar.count())}]
        return bool(bars) and all(bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(bar.tabText(i))
                                  for bar in bars for i in range(bar.count()))

    try:
        extension = window.toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
        assert extension is None or not extension.isVisible()
        qtbot.waitUntil(lessons_tabs_whole)  # once the dock tab bars are laid out
    finally:
        window.set_text_size(100)
    qtbot.waitUntil(lambda: window.toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon)


def fits(label) -> bool:
    """``label``'s text is drawn whole: as wide as its room at most."""
    return QFontMetrics(label.font()).horizontalAdvance(label.text()) <= label.contentsRect().width()


def in_window(widget) -> QRect:
    return QRect(widget.mapTo(widget.window(), QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_at_150_percent_on_1280_nothing_is_clipped_and_the_code_shows_a_line(qtbot, open_window, language):
    """At 150 % the code showed 24 characters of a line, "第 2 步，共 2 步（当前" lost its end and the Backward
    form ran past the panel's right edge."""
    from test_high_contrast import paused_in_the_loop

    window, _ = paused_in_the_loop(qtbot, open_window)
    window.set_language(language)
    window.set_text_size(150)
    try:
        layout = window.window_layout
        qtbot.waitUntil(lambda: layout.lessons_in_strip and window.docks["lessons"].isVisible())
        code = window.code_view
        # the layout asks for READABLE characters; the graph gives room down to its least share (36 %): 57 at 1280
        qtbot.waitUntil(lambda: code.viewport().width() // code.fontMetrics().horizontalAdvance("x") >= READABLE - 5)
        assert window.docks["graph"].width() >= window.width() * 0.36  # the graph keeps its least share
        status = window.status
        labels = [window.timeline.label, status.state_label, status.step_label, status.grad_label]
        qtbot.waitUntil(lambda: all(fits(label) for label in labels))
        extension = window.toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
        assert extension is None or not extension.isVisible()
        for bar in window.findChildren(QTabBar):  # the docks' tabs and the Backward form's
            if bar.isVisible():
                assert all(bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(bar.tabText(i))
                           for i in range(bar.count())), [bar.tabText(i) for i in range(bar.count())]
        header = window.variables_view.findChild(QTreeView, "variables_tree").header()
        model = header.model()
        for column in range(model.columnCount() - 1):  # the last one runs on past the view, scrolled to
            text = model.headerData(column, Qt.Orientation.Horizontal)
            assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance(text), text
        window.docks["backward"].raise_()
        form, dock = window.backward_panel.tabs, window.docks["backward"]
        qtbot.waitUntil(lambda: form.isVisible() and in_window(form).right() <= in_window(dock).right())
        assert all(in_window(child).right() <= in_window(dock).right()
                   for child in form.currentWidget().findChildren(QWidget) if child.isVisible())
    finally:
        window.set_text_size(100)
    qtbot.waitUntil(lambda: not window.window_layout.lessons_in_strip)
    assert window.dockWidgetArea(window.docks["notes"]) == Qt.DockWidgetArea.LeftDockWidgetArea
