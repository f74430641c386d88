"""The teaching layout: code and graph side by side at the sizes learners use, and the first steps of a run."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QLabel, QStyle, QTabBar, QToolBar, QToolButton
from test_main_window import click_lesson

from app.lesson_format import list_lessons
from app.workspace import LESSONS_DIR
from widgets.main_window import MIN_HEIGHT, MIN_WIDTH, MainWindow
from widgets.notes_view import broken_words
from widgets.variables_view import GRAD_COLUMNS, HEADERS

SIZES = [(1280, 800), (1600, 1000), (1920, 1080)]
LOOPS = LESSONS_DIR / "03_loops.py"


@pytest.fixture
def make_window(open_window):
    """A window of a given size on a bundled lesson, settings in a temporary file."""

    def make(width: int = 1280, height: int = 800, lesson=LOOPS) -> MainWindow:
        return open_window(lesson, (width, height))

    return make


def in_window(widget) -> QRect:
    """``widget``'s rectangle in its window's coordinates."""
    return QRect(widget.mapTo(widget.window(), widget.rect().topLeft()), widget.size())


def assert_teaching_layout(window: MainWindow) -> None:
    """Code and graph side by side, the graph a third of the width and over half the height (the output under it)."""
    graph, code = window.docks["graph"].widget(), window.code_view
    assert graph.isVisible() and code.isVisible()
    assert graph.width() >= window.width() / 3 and graph.height() >= window.height() / 2, (
        window.size(), graph.size(), code.size())
    graph_rect, code_rect = in_window(graph), in_window(code)
    assert not graph_rect.intersects(code_rect)
    assert code_rect.right() < graph_rect.left()  # side by side: the code on the left
    assert graph_rect.top() < code_rect.bottom() and code_rect.top() < graph_rect.bottom()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_code_and_graph_side_by_side_with_a_third_of_the_window_for_the_graph(qtbot, make_window, size):
    window = make_window(*size)
    qtbot.waitUntil(lambda: assert_teaching_layout(window))  # the docks take their sizes once the window is laid out
    assert all(window.docks[name].objectName() == name for name in
               ("lessons", "notes", "variables", "inspector", "console", "stack", "watch", "graph", "backward"))


def test_extra_width_goes_to_the_graph_not_the_code(qtbot, make_window):
    window = make_window(1280, 800)
    qtbot.waitUntil(lambda: assert_teaching_layout(window))
    code_width, graph_width = window.code_view.width(), window.docks["graph"].width()
    window.resize(1600, 800)
    qtbot.waitUntil(lambda: window.docks["graph"].width() >= graph_width + 300)
    assert abs(window.code_view.width() - code_width) <= 4


@pytest.mark.parametrize("saved", [False, True], ids=["fresh settings", "saved layout"])
def test_widening_the_window_never_narrows_the_graph(qtbot, make_window, saved):
    """Lesson 03 at 1280×800, then 1600×1000, then 1920×1080: the graph was 524, 844, then 787 px wide (the
    code's minimum share put the default layout back, narrowing the graph)."""
    if saved:  # a layout saved by a window closed at 1600×1000
        first = make_window(1600, 1000)
        qtbot.waitUntil(lambda: assert_teaching_layout(first))
        first.close()
    window = make_window(1280, 800)
    qtbot.waitUntil(lambda: assert_teaching_layout(window))
    widths = [window.docks["graph"].width()]
    for size in ((1600, 1000), (1920, 1080)):
        window.resize(*size)
        qtbot.waitUntil(lambda s=size: window.width() == s[0])
        qtbot.wait(50)  # the layout settles
        widths.append(window.docks["graph"].width())
        assert_teaching_layout(window)
    assert widths == sorted(widths) and widths[-1] > widths[0] + 400, widths
    assert window.code_view.width() >= 1920 * 0.33 - 2  # and the code keeps its third


def test_reset_layout_brings_the_teaching_layout_back(qtbot, make_window):
    window = make_window(1600, 1000)
    qtbot.waitUntil(lambda: assert_teaching_layout(window))
    window.docks["graph"].setFloating(True)
    window.docks["variables"].hide()
    window.splitDockWidget(window.docks["notes"], window.docks["console"], Qt.Orientation.Vertical)
    window.reset_layout()
    qtbot.waitUntil(lambda: assert_teaching_layout(window))
    assert not window.docks["graph"].isFloating() and window.docks["variables"].isVisible()
    assert window.dockWidgetArea(window.docks["console"]) == Qt.DockWidgetArea.RightDockWidgetArea  # under the graph


def test_the_window_cannot_shrink_below_its_minimum(make_window):
    window = make_window()
    window.resize(700, 500)
    assert (window.width(), window.height()) == (MIN_WIDTH, MIN_HEIGHT)


def test_no_stray_tab_bars_over_the_status_bar(make_window):
    window = make_window()
    status = in_window(window.statusBar())
    bars = [bar for bar in window.findChildren(QTabBar) if bar.isVisible()]
    assert bars and not any(in_window(bar).intersects(status) for bar in bars)


def wait_paused(qtbot, window, line):
    qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live is not None
                    and window.run.live["line"] == line, timeout=30_000)


def test_f5_on_a_stopped_lesson_pauses_at_its_first_line(qtbot, window_on):
    window = window_on("import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    assert "first line" in window.act_start.toolTip()
    qtbot.waitUntil(window.isActiveWindow)  # the shortcuts work in the active window
    qtbot.keyClick(window.code_view, Qt.Key.Key_F5)
    wait_paused(qtbot, window, 1)
    assert window.code_view.current_line() == 1 and "Paused" in window.state_label.text()
    assert window.act_start.text() == "&Continue" and not window.act_run_to_end.isEnabled()


def test_run_to_end_runs_the_lesson_through(qtbot, window_on):
    window = window_on("import torch\nx = torch.ones(2, requires_grad=True)\nprint('sum', (x * 2).sum().item())\n")
    assert "F8" in window.act_run_to_end.toolTip()
    assert window.act_run_to_end in window.findChild(QToolBar, "run_toolbar").actions()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window.code_view, Qt.Key.Key_F8)
    qtbot.waitUntil(lambda: window.run is not None and window.run.ended is not None, timeout=30_000)
    assert window.run.ended.status == "ok" and "Finished" in window.state_label.text()
    qtbot.waitUntil(lambda: "sum 4.0" in window.console.output.toPlainText())


def code_line(path, start: str) -> int:
    """The 1-based number of the first line of code (not a note) that starts with ``start``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(n for n, text in enumerate(lines, 1) if text.strip().startswith(start))


def run_to(qtbot, window, line):
    """Run to Cursor on ``line``, Ask Predictions off: a prediction not yet asked would stop the run before it."""
    if window.act_ask_predictions.isChecked():
        window.act_ask_predictions.setChecked(False)
        window.toggle_predictions()
    window.code_view.go_to_line(line)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, line)


@pytest.mark.parametrize(("lesson", "line"), [("11_inplace_version.py", "c = b + 1"),
                                            ("03_loops.py", "h_t.retain_grad()")])  # a long name: hidden_states
def test_the_grad_state_columns_are_in_sight_at_1280(qtbot, make_window, lesson, line):
    window = make_window(1280, 800, LESSONS_DIR / lesson)
    run_to(qtbot, window, code_line(LESSONS_DIR / lesson, line))
    assert_grad_columns_in_sight(window)


def assert_grad_columns_in_sight(window: MainWindow) -> None:
    """The Variables grad-state columns lie wholly inside its viewport, nothing to scroll."""
    tree = window.variables_view.tree
    header, width = tree.header(), tree.viewport().width()
    assert window.docks["variables"].isVisible() and tree.model().rowCount() > 0
    for column in GRAD_COLUMNS:
        left = header.sectionViewportPosition(column)
        assert 0 <= left and left + header.sectionSize(column) <= width, HEADERS[column]


def in_sight(widget, scroll) -> bool:
    """Whether ``widget`` lies wholly inside the scroll area's viewport (nothing to scroll to see it).

    A label counts as far as its text reaches: the empty end of a stretched label is not cut text.
    """
    size = widget.size()
    if isinstance(widget, QLabel):
        size.setWidth(min(size.width(), widget.fontMetrics().boundingRect(
            widget.rect(), int(widget.alignment()) | Qt.TextFlag.TextWordWrap, widget.text()).width()))
    rect = QRect(widget.mapTo(scroll.viewport(), widget.rect().topLeft()), size)
    return widget.isVisible() and scroll.viewport().rect().contains(rect)


def test_backward_results_and_error_card_in_sight_at_1600(qtbot, make_window):
    window = make_window(1600, 1000)
    run_to(qtbot, window, code_line(LOOPS, "loss.backward()"))
    window.docks["backward"].raise_()
    panel = window.backward_panel
    qtbot.waitUntil(lambda: panel.backward_tab.root_combo.currentText() == "loss")
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 4)  # W_xh, W_hh, b_h, inputs
    qtbot.waitUntil(lambda: in_sight(panel.table, panel._scroll) and in_sight(panel.notes, panel._scroll))
    assert in_sight(panel.backward_tab.preview_button, panel._scroll)
    for _ in range(2):  # the second backward fails: the graph was freed
        with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
            qtbot.mouseClick(panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(panel.card.isVisible)
    scroll = panel._scroll
    assert in_sight(panel.card.title, scroll), (panel.card.geometry(), scroll.viewport().size(),
                                                scroll.verticalScrollBar().value(), panel.size())
    assert in_sight(panel.backward_tab.backward_button, scroll)  # the form stays beside the card, which scrolls
    panel._card_box.ensureWidgetVisible(panel.card.lesson_link, 0, 0)
    assert in_sight(panel.card.lesson_link, panel._card_box)


def block(window, line):
    return window.code_view.document().findBlockByNumber(line - 1)


def test_notes_cells_open_folded_and_line_numbers_stay_the_files(qtbot, make_window):
    window = make_window(1280, 800)
    view = window.code_view
    lines = LOOPS.read_text(encoding="utf-8").splitlines()
    marker = lines.index("# %% [markdown]", code_line(LOOPS, "W_xh = ")) + 1  # a notes cell after code
    fold = view.notes_folding.marker_at(marker)
    assert fold is not None and fold.folded and "The graph grows by one piece per step" in fold.labels["en"]
    assert block(window, marker).isVisible()
    assert not any(block(window, n).isVisible() for n in range(marker + 1, fold.end + 1))
    loop = code_line(LOOPS, "h_t = torch.tanh(")
    run_to(qtbot, window, loop)
    assert view.current_line() == loop and block(window, loop).text() == lines[loop - 1]
    assert block(window, loop).isVisible() and fold.folded
    rect = view.blockBoundingGeometry(block(window, marker)).translated(view.contentOffset())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert not fold.folded and all(block(window, n).isVisible() for n in range(marker, fold.end + 1))


def test_going_to_a_line_in_a_folded_cell_opens_it_and_the_view_menu_folds_all(qtbot, make_window):
    window = make_window(1280, 800)
    view = window.code_view
    header = view.notes_folding.folds()[0]
    view.go_to_line(header.end)
    assert not header.folded and block(window, header.end).isVisible()
    fold_all = next(a for a in window.view_menu.actions() if a.text() == "&Fold All Notes")
    fold_all.trigger()
    assert all(fold.folded for fold in view.notes_folding.folds())
    window.set_language("zh")
    assert header.labels["zh"] and header.labels["zh"] != header.labels["en"]


def test_backward_results_come_into_sight_in_the_short_panel_at_1280(qtbot, make_window):
    """At 1280×800 the replay strip took a third of the Backward panel's height, and results (of
    backward() and of the autograd.grad form) landed below the visible part, to be scrolled to."""
    window = make_window(1280, 800)
    run_to(qtbot, window, code_line(LOOPS, "loss.backward()"))
    window.docks["backward"].raise_()
    panel = window.backward_panel
    qtbot.waitUntil(lambda: panel.backward_tab.root_combo.currentText() == "loss")
    assert panel.height() < 360  # the bottom strip of the window: short
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 4)
    qtbot.waitUntil(lambda: in_sight(panel.results_title, panel._scroll))
    assert panel.replay_bar.height() < panel.height() / 3  # a strip of its own, its description beside the controls
    tab = panel.backward_tab
    assert in_sight(tab.preview_button, panel._scroll) and in_sight(tab.backward_button, panel._scroll)
    panel.tabs.setCurrentIndex(1)  # torch.autograd.grad
    panel.grad_tab.outputs_edit.setText("loss")
    panel.grad_tab.inputs_edit.setText("W_xh")
    panel._scroll.ensureWidgetVisible(panel.grad_tab.grad_button)  # as the learner scrolls to it
    qtbot.waitUntil(lambda: in_sight(panel.grad_tab.grad_button, panel._scroll))
    panel.grad_tab.grad_button.click()
    qtbot.waitUntil(lambda: panel.results_title.text() == "torch.autograd.grad" and panel.table.rowCount() == 1)
    qtbot.waitUntil(lambda: in_sight(panel.results_title, panel._scroll))


def assert_columns_readable(window: MainWindow) -> None:
    """The graph's drawing has a third of the window's width; the code and the notes are not crushed."""
    width = window.width()
    assert window.graph_view.width() >= width / 3, (window.size(), window.graph_view.size())
    assert window.centralWidget().width() >= width / 3, (window.size(), window.centralWidget().size())
    assert window.notes_view.width() >= 180, window.notes_view.size()


def toolbar_folded(window: MainWindow) -> bool:
    """Whether the run toolbar or the graph's toolbar put buttons into its "»" extension menu."""
    extensions = [toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
                  for toolbar in (window.toolbar, *window.graph_view.findChildren(QToolBar))]
    return any(extension is not None and extension.isVisible() for extension in extensions)


def test_the_graph_keeps_a_third_of_the_width_after_resizes_and_restarts_at_other_sizes(qtbot, make_window):
    """1920×1080 shrunk to 1280×800 left the graph 158 px wide (Qt took the width from the docks, and
    the window took it once more from the graph), and a layout saved then came back as crushed."""
    window = make_window(1920, 1080)
    qtbot.waitUntil(lambda: assert_columns_readable(window))
    for size in [(1280, 800), (MIN_WIDTH, MIN_HEIGHT), (1600, 1000), (1920, 1080), (1280, 800)]:
        window.resize(*size)
        qtbot.waitUntil(lambda s=size: window.size().toTuple() == s)
        assert_columns_readable(window)
        if size == (1280, 800):
            assert not toolbar_folded(window)
    window.resize(1920, 1080)
    window.close()  # saves the layout
    for size in [(1280, 800), (MIN_WIDTH, MIN_HEIGHT), (1600, 1000)]:
        again = make_window(*size)
        qtbot.waitUntil(lambda w=again: assert_columns_readable(w) is None)
        assert not (size == (1280, 800) and toolbar_folded(again))
        again.close()


def fits(label) -> bool:
    """Whether all of ``label``'s wrapped text shows: visible, tall enough, and inside its window."""
    return (label.isVisible() and label.height() >= label.heightForWidth(label.width())
            and label.window().rect().contains(in_window(label)))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_selected_variable_shows_value_shape_dtype_and_grad_state_at_1280(qtbot, make_window, language):
    """At 1280×800 the Value column was cut and shape and dtype lay off-screen, to the right."""
    lesson = LESSONS_DIR / "01_dynamic_graphs.py"
    window = make_window(1280, 800, lesson)
    window.set_language(language)
    run_to(qtbot, window, code_line(lesson, 'print("c.grad_fn:"'))
    tree, details = window.variables_view.tree, window.variables_view.details
    row = next(r for r in range(tree.model().rowCount()) if tree.model().index(r, 0).data() == "c")
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton,
                     pos=tree.visualRect(tree.model().index(row, 0)).center())
    qtbot.waitUntil(lambda: details.text().startswith("c = tensor[3] f32 μ="))
    value = tree.model().index(row, 1).data()
    assert tree.header().sectionViewportPosition(1) + tree.header().sectionSize(1) > tree.viewport().width()
    assert value in details.text()  # the cut value, whole
    for fact in ("shape\u00a0[3]", "dtype\u00a0float32", "requires_grad\u00a0True", "is_leaf\u00a0False",
                 "grad_fn\u00a0ExpBackward0", "_version\u00a00"):
        assert fact in details.text()
    qtbot.waitUntil(lambda: fits(details))  # the strip lays the grown label out at the next pass


def visible_rows(table, scroll) -> int:
    """How many of ``table``'s rows lie wholly in sight: inside its viewport and inside the scroll area's."""
    seen = scroll.viewport().rect()
    count = 0
    for row in range(table.rowCount()):
        rect = table.visualRect(table.model().index(row, 0))
        top_left = table.viewport().mapTo(scroll.viewport(), rect.topLeft())
        if table.viewport().rect().contains(rect) and seen.contains(QRect(top_left, rect.size())):
            count += 1
    return count


@pytest.mark.parametrize("language", ["en", "zh"])
def test_output_lines_and_backward_results_read_whole_at_1280(qtbot, make_window, language):
    """At 1280×800 the Output pane was 185 px wide (a print wrapped every ~20 characters) and the
    Backward panel showed one result row."""
    window = make_window(1280, 800)
    window.set_language(language)
    run_to(qtbot, window, code_line(LOOPS, "loss.backward()"))
    output = window.console.output
    qtbot.waitUntil(lambda: "step 4" in output.toPlainText())
    printed = next(b for b in iter_blocks(output.document()) if b.text().startswith("step 0:"))
    output.setTextCursor(QTextCursor(printed))  # a plain text view lays out only the blocks in sight
    output.ensureCursorVisible()
    qtbot.waitUntil(lambda: printed.layout().lineCount() > 0)
    assert len(printed.text()) >= 40 and printed.layout().lineCount() == 1  # a print of the lesson, on one line
    assert output.viewport().width() >= 60 * output.fontMetrics().horizontalAdvance("m")
    window.docks["backward"].raise_()
    panel = window.backward_panel
    qtbot.waitUntil(lambda: panel.backward_tab.root_combo.currentText() == "loss")
    with qtbot.waitSignal(window.bridge.replied, timeout=10_000):
        qtbot.mouseClick(panel.backward_tab.preview_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.table.rowCount() == 4)
    qtbot.waitUntil(lambda: visible_rows(panel.table, panel._scroll) >= 3)
    line = window.console.input
    for enabled, shown in [(True, "paused"), (False, "past"), (False, "ended"), (False, "idle"), (False, "running")]:
        window.console.set_input_enabled(enabled, shown)  # each placeholder the console shows, whole
        assert line.fontMetrics().horizontalAdvance(line.placeholderText()) <= line.width() - 12, (
            shown, line.placeholderText(), line.width())


def iter_blocks(document):
    block = document.begin()
    while block.isValid():
        yield block
        block = block.next()


def broken_heading_words(browser) -> list[str]:
    """The words of ``browser``'s headings that a line break cuts in two."""
    broken = []
    block = browser.document().begin()
    while block.isValid():
        if block.blockFormat().headingLevel():
            broken += broken_words(block)
        block = block.next()
    return broken


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_notes_heading_breaks_a_word_at_1280(qtbot, make_window, language):
    """A level-1 heading at Qt's Markdown size broke a word in the notes column at 1280 px."""
    window = make_window(1280, 800)
    window.set_language(language)
    notes, browser = window.notes_view, window.notes_view.browser
    window.docks["notes"].raise_()
    qtbot.waitUntil(lambda: browser.viewport().width() > 0 and browser.isVisible())
    assert browser.viewport().width() < 200  # the narrow column
    for lesson in list_lessons(LESSONS_DIR):
        notes.set_source(lesson.path.read_text(encoding="utf-8"))
        for section in [s for s in notes.lesson.sections if s.kind == "notes"]:
            notes.show_line(section.start_line)
            assert browser.document().textWidth() == browser.viewport().width()
            assert not broken_heading_words(browser), (lesson.path.name, section.start_line)


def in_front(widget) -> bool:
    """Whether ``widget`` shows (a dock's tab behind another is 'visible' but has no region on screen)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def marked_lessons(window: MainWindow) -> list[str]:
    """The file names of the Lessons list's rows drawn as marked (selected or current)."""
    browser = window.lesson_browser.list
    rows = {browser.row(item) for item in browser.selectedItems()} | ({browser.currentRow()} - {-1})
    return [browser.item(row).data(Qt.ItemDataRole.UserRole).rsplit("/", 1)[-1] for row in sorted(rows)]


def test_choosing_a_lesson_shows_its_notes_and_the_list_marks_the_open_file(qtbot, make_window, tmp_path):
    """The list kept lesson 14 marked while the learner's own file was open (its row came back with a redraw)."""
    window = make_window(1280, 800)
    window.docks["lessons"].raise_()
    click_lesson(qtbot, window, "14_hooks")
    qtbot.waitUntil(lambda: in_front(window.notes_view))  # the notes of the chosen lesson
    assert window.path.name == "14_hooks.py" and "hook" in window.notes_view.text().lower()
    assert marked_lessons(window) == ["14_hooks.py"]
    own = tmp_path / "mine.py"
    own.write_text("x = 1\n", encoding="utf-8")
    assert window.open_file(own)
    assert marked_lessons(window) == []
    window.set_language("zh")  # the list is drawn again, as after a run's progress
    window._show_progress()
    assert marked_lessons(window) == []
    window.docks["lessons"].raise_()
    click_lesson(qtbot, window, "02_if_else")
    qtbot.waitUntil(lambda: window.path.name == "02_if_else.py")
    assert marked_lessons(window) == ["02_if_else.py"] and in_front(window.notes_view)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_lessons_list_entries_are_whole_at_1280_after_a_resize(qtbot, make_window, language):
    """Rows laid out at another width keep their height: an entry cut with "…", its progress line lost."""
    first = make_window(1920, 1080)
    first.set_language(language)
    first.docks["lessons"].raise_()
    first.close()  # saves the layout of 1920×1080: restored at 1280×800 it crushed the lessons column to 123 px
    window = make_window(1280, 800)
    browser = window.lesson_browser.list
    qtbot.waitUntil(lambda: browser.isVisible())
    window.resize(1600, 1000)
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: window.size().toTuple() == (1280, 800))
    assert browser.viewport().width() >= 160

    margin = browser.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, browser) + 1  # the delegate's

    def whole() -> bool:
        for row in range(browser.count()):
            item, rect = browser.item(row), browser.visualItemRect(browser.item(row))
            needed = browser.fontMetrics().boundingRect(0, 0, rect.width() - 2 * margin, 10_000,
                                                        Qt.TextFlag.TextWordWrap, item.text()).height()
            if rect.height() < needed:
                return False
        return True

    qtbot.waitUntil(whole)
    assert all(window.lesson_browser.progress_text(info) in browser.item(row).text()
               for row, info in enumerate(window.lesson_browser.lessons()))
