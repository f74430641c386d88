"""The code view as the learner uses it: breakpoints in the gutter, the debugger's lines, editing, colours."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygments.token import Keyword
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QColor, QContextMenuEvent, QFont, QHelpEvent, QTextCursor, QWheelEvent
from PySide6.QtWidgets import QApplication, QInputDialog, QLabel, QToolTip, QWidget

from widgets.code_view import LINE_COLOURS, TOKEN_STYLES, CodeView

LESSON = '''"""Lesson: a tiny linear model, trained by hand.

Steps through a forward pass, backward() and one update of the weights.
"""

import torch

torch.manual_seed(0)


def predict(x, w, b):
    """The model: one linear layer."""
    return x @ w + b  # broadcasting adds b to every row


x = torch.randn(8, 3)
true_w = torch.tensor([[2.0], [-1.0], [0.5]])
y = x @ true_w + 0.1 * torch.randn(8, 1)

w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
learning_rate = 0.1

for step in range(5):
    prediction = predict(x, w, b)
    loss = ((prediction - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
    w.grad.zero_()
    b.grad.zero_()
    print(f"step {step}: loss = {loss.item():.4f}")

if loss.item() > 1.0:
    raise ValueError("the loss should have gone down")

print("w =", w.detach().flatten().tolist())
print("b =", b.item())
'''


#: The background of an unmarked line.
PLAIN = "#ffffff"


@pytest.fixture
def view(qtbot) -> CodeView:
    widget = CodeView()
    qtbot.addWidget(widget)
    widget.resize(600, 400)
    widget.set_source(LESSON, "/lessons/linear.py")
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def gutter(view: CodeView) -> QWidget:
    return view.findChild(QWidget, "code_gutter")


def gutter_point(view: CodeView, line: int) -> QPoint:
    """The middle of ``line``'s row in the gutter, left of the numbers where breakpoints are drawn."""
    block = view.document().findBlockByNumber(line - 1)
    row = view.blockBoundingGeometry(block).translated(view.contentOffset())
    return QPoint(6, int(row.center().y()))


def click_gutter(qtbot, view: CodeView, line: int) -> dict:
    with qtbot.waitSignal(view.breakpoints_changed) as blocker:
        qtbot.mouseClick(gutter(view), Qt.LeftButton, pos=gutter_point(view, line))
    return blocker.args[0]


def put_cursor(view: CodeView, line: int, column: int) -> None:
    cursor = view.textCursor()
    cursor.setPosition(view.document().findBlockByNumber(line - 1).position() + column)
    view.setTextCursor(cursor)


def select_lines(view: CodeView, first: int, last: int) -> None:
    """Select whole lines, line breaks included, as a triple-click and drag does."""
    cursor = view.textCursor()
    cursor.setPosition(view.document().findBlockByNumber(first - 1).position())
    cursor.setPosition(view.document().findBlockByNumber(last).position(), cursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)


def line_text(view: CodeView, line: int) -> str:
    return view.document().findBlockByNumber(line - 1).text()


def row_y(view: CodeView, line: int) -> int:
    block = view.document().findBlockByNumber(line - 1)
    return int(view.blockBoundingGeometry(block).translated(view.contentOffset()).center().y())


def backgrounds(view: CodeView, *lines: int) -> dict[int, str]:
    """Line -> the colour on screen at the right end of its row, past the text."""
    image = view.viewport().grab().toImage()
    return {line: image.pixelColor(image.width() - 4, row_y(view, line)).name() for line in lines}


def gutter_colours(view: CodeView, line: int) -> set[str]:
    """The colours drawn in ``line``'s row of the gutter, across its middle."""
    image = gutter(view).grab().toImage()
    return {image.pixelColor(x, row_y(view, line)).name() for x in range(image.width())}


def formats_of(view: CodeView, line: int) -> list[tuple[str, QColor, bool, bool]]:
    """(text, colour, bold, italic) of each coloured piece of ``line``."""
    block = view.document().findBlockByNumber(line - 1)
    return [(block.text()[r.start:r.start + r.length], r.format.foreground().color(),
             r.format.fontWeight() == QFont.Bold, r.format.fontItalic())
            for r in block.layout().formats()]


def colour_of(view: CodeView, line: int, word: str) -> QColor | None:
    text = line_text(view, line)
    column = text.index(word)
    for r in view.document().findBlockByNumber(line - 1).layout().formats():
        if r.start <= column < r.start + r.length:
            return r.format.foreground().color()
    return None


# -- source ----------------------------------------------------------------------------------

def test_set_source_roundtrip_is_not_an_edit(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    with qtbot.assertNotEmitted(view.source_edited):
        view.set_source("a = 1\r\nb = 2\n", "/tmp/two.py")
    assert view.source() == "a = 1\nb = 2\n"
    assert view.path() == "/tmp/two.py"
    assert not view.document().isModified()
    view.set_source(LESSON, None)
    assert view.source() == LESSON and view.path() is None


def test_typing_emits_source_edited_and_clears_the_debugger_marks(qtbot, view):
    view.set_current_line(12)
    view.set_previous_line(11)
    put_cursor(view, 6, len("import torch"))
    with qtbot.waitSignal(view.source_edited):
        qtbot.keyClicks(view, ", math")
    assert line_text(view, 6) == "import torch, math"
    assert view.current_line() is None
    assert backgrounds(view, 11, 12) == {11: PLAIN, 12: PLAIN}


# -- breakpoints -----------------------------------------------------------------------------

def test_gutter_click_adds_and_removes_a_breakpoint(qtbot, view):
    assert click_gutter(qtbot, view, 25) == {25: None}
    assert click_gutter(qtbot, view, 27) == {25: None, 27: None}
    assert click_gutter(qtbot, view, 25) == {27: None}
    assert view.breakpoints() == {27: None}
    assert "Breakpoint" in view.gutter_tip(27)


def test_clicking_below_the_last_line_sets_nothing(qtbot, view):
    view.set_source("x = 1\n")
    with qtbot.assertNotEmitted(view.breakpoints_changed):
        qtbot.mouseClick(gutter(view), Qt.LeftButton, pos=QPoint(6, gutter(view).height() - 5))
    assert view.breakpoints() == {}


def right_click_and_choose(view: CodeView, line: int, label: str) -> None:
    """Right-click ``line``'s gutter and pick ``label`` in the menu that pops up."""

    def choose() -> None:
        menu = QApplication.activePopupWidget()
        if menu is None:
            QTimer.singleShot(10, choose)
            return
        [action] = [action for action in menu.actions() if action.text() == label]
        menu.close()
        action.trigger()

    QTimer.singleShot(0, choose)
    point = gutter_point(view, line)
    event = QContextMenuEvent(QContextMenuEvent.Mouse, point, gutter(view).mapToGlobal(point))
    QApplication.sendEvent(gutter(view), event)


def test_conditional_breakpoint_from_the_gutter_menu(qtbot, view, monkeypatch):
    asked = []

    def answer(parent, title, label, mode, text):
        asked.append(text)
        return "step == 3", True

    monkeypatch.setattr(QInputDialog, "getText", answer)
    with qtbot.waitSignal(view.breakpoints_changed) as blocker:
        right_click_and_choose(view, 26, "Add conditional breakpoint…")
    assert blocker.args[0] == {26: "step == 3"}
    assert asked == [""]
    point = gutter_point(view, 26)
    QApplication.sendEvent(gutter(view), QHelpEvent(QEvent.ToolTip, point, gutter(view).mapToGlobal(point)))
    qtbot.waitUntil(lambda: "step == 3" in QToolTip.text())

    right_click_and_choose(view, 26, "Edit condition…")
    assert asked == ["", "step == 3"]
    monkeypatch.setattr(QInputDialog, "getText", lambda *args: ("", True))
    right_click_and_choose(view, 26, "Edit condition…")
    assert view.breakpoints() == {26: None}
    right_click_and_choose(view, 26, "Remove breakpoint")
    assert view.breakpoints() == {}


def test_set_condition_and_set_breakpoints(qtbot, view):
    with qtbot.waitSignal(view.breakpoints_changed) as blocker:
        view.set_condition(30, "  loss.item() < 0.5 ")
    assert blocker.args[0] == {30: "loss.item() < 0.5"}
    view.set_breakpoints({3: None, 30: "w.grad is None", 999: None})
    assert view.breakpoints() == {3: None, 30: "w.grad is None"}
    with pytest.raises(ValueError):
        view.toggle_breakpoint(0)
    put_cursor(view, 11, 0)
    view.toggle_breakpoint()
    assert 11 in view.breakpoints()


def note(view: CodeView) -> str:
    label = view.findChild(QLabel, "code_lock_label")
    return label.text() if label.isVisible() else ""


def test_a_breakpoint_on_a_line_without_code_goes_to_the_next_line_that_has_some(qtbot, view):
    """A breakpoint on a docstring, blank line or comment was accepted and could never be hit."""
    assert click_gutter(qtbot, view, 12) == {13: None}  # the docstring of predict(): no bytecode
    assert "line 13" in note(view) and "line 12 has no code" in note(view)
    blank = next(n for n, text in enumerate(LESSON.splitlines(), 1) if n > 13 and not text.strip())
    following = next(n for n, text in enumerate(LESSON.splitlines(), 1) if n > blank and text.strip()
                     and not text.lstrip().startswith("#"))
    assert click_gutter(qtbot, view, blank) == {13: None, following: None}
    view.set_condition(blank, "step > 1")  # a condition asked for there goes to the same line
    assert view.breakpoints()[following] == "step > 1"


def test_a_breakpoint_below_the_last_code_is_refused_and_the_view_says_why(qtbot, view):
    view.set_source("x = 1\n\n# the end\n")
    with qtbot.assertNotEmitted(view.breakpoints_changed):
        qtbot.mouseClick(gutter(view), Qt.LeftButton, pos=gutter_point(view, 3))
    assert view.breakpoints() == {}
    assert "No code on line 3" in note(view)


def test_breakpoints_follow_their_code_through_edits(qtbot, view):
    view.set_breakpoints({25: None, 27: "step > 1"})
    assert line_text(view, 25).strip() == "prediction = predict(x, w, b)"

    # A line inserted above moves both down.
    put_cursor(view, 6, len(line_text(view, 6)))
    with qtbot.waitSignal(view.breakpoints_changed) as blocker:
        qtbot.keyClick(view, Qt.Key_Return)
    assert blocker.args[0] == {26: None, 28: "step > 1"}

    # Enter before the code of a breakpoint's line moves the breakpoint down with its code...
    put_cursor(view, 26, 0)
    qtbot.keyClick(view, Qt.Key_Return)
    assert view.breakpoints() == {27: None, 29: "step > 1"}
    assert line_text(view, 27).strip() == "prediction = predict(x, w, b)"
    # ... undo brings it back...
    view.undo()
    assert view.breakpoints() == {26: None, 28: "step > 1"}
    # ... and so does Backspace at the start of the line, joining it to the blank line above.
    put_cursor(view, 26, 0)
    qtbot.keyClick(view, Qt.Key_Return)
    put_cursor(view, 27, 0)
    qtbot.keyClick(view, Qt.Key_Backspace)
    assert line_text(view, 26).strip() == "prediction = predict(x, w, b)"
    assert view.breakpoints() == {26: None, 28: "step > 1"}

    # Deleting a line above moves them up; deleting a breakpoint's line drops its breakpoint.
    select_lines(view, 7, 7)
    qtbot.keyClick(view, Qt.Key_Delete)
    assert view.breakpoints() == {25: None, 27: "step > 1"}
    select_lines(view, 25, 25)
    with qtbot.waitSignal(view.breakpoints_changed) as blocker:
        qtbot.keyClick(view, Qt.Key_Delete)
    assert blocker.args[0] == {26: "step > 1"}
    assert line_text(view, 26).strip() == "loss.backward()"


def test_breakpoints_on_a_read_only_view_still_toggle(qtbot, view):
    view.set_read_only(True)
    assert click_gutter(qtbot, view, 28) == {28: None}


# -- the debugger's lines --------------------------------------------------------------------

def test_current_and_previous_lines_are_highlighted_with_arrows(view):
    view.set_previous_line(25)
    view.set_current_line(26)
    assert view.current_line() == 26
    assert backgrounds(view, 24, 25, 26, 27) == {
        24: PLAIN, 25: LINE_COLOURS["previous"], 26: LINE_COLOURS["current"], 27: PLAIN}
    assert LINE_COLOURS["current_arrow"] in gutter_colours(view, 26)
    assert LINE_COLOURS["previous_arrow"] in gutter_colours(view, 25)
    assert LINE_COLOURS["current_arrow"] not in gutter_colours(view, 27)

    view.set_current_line(36, "exception")
    view.set_previous_line(35)
    assert backgrounds(view, 35, 36) == {35: LINE_COLOURS["previous"], 36: LINE_COLOURS["exception"]}
    assert "exception" in view.gutter_tip(36)
    view.set_current_line(12, "return")
    assert "Returns" in view.gutter_tip(12)
    view.set_error_line(36)
    assert backgrounds(view, 36) == {36: LINE_COLOURS["error"]}
    view.set_current_line(None)
    view.set_previous_line(None)
    view.set_error_line(None)
    assert backgrounds(view, 35, 36) == {35: PLAIN, 36: PLAIN}


def test_the_same_line_twice_shows_only_the_current_mark(view):
    view.set_previous_line(24)
    view.set_current_line(24)
    assert backgrounds(view, 24) == {24: LINE_COLOURS["current"]}
    assert LINE_COLOURS["previous_arrow"] not in gutter_colours(view, 24)


def test_current_line_scrolls_only_when_off_screen(view):
    view.set_source("\n".join(f"x{n} = {n}" for n in range(1, 301)))
    bar = view.verticalScrollBar()
    view.set_current_line(5)
    assert bar.value() == 0
    view.set_current_line(200)
    first = bar.value()
    assert 150 < first < 200
    view.set_current_line(201)  # on screen already: no jump
    assert bar.value() == first
    view.go_to_line(3)
    assert view.cursor_line() == 3 and bar.value() < 3


# -- editing ---------------------------------------------------------------------------------

def test_read_only_blocks_typing_and_says_so(qtbot, view):
    view.set_read_only(True)
    label = view.findChild(QLabel, "code_lock_label")
    assert not label.isVisible()
    assert view.viewport().palette().color(view.viewport().backgroundRole()).name() != PLAIN  # tinted
    put_cursor(view, 6, 0)
    qtbot.keyClicks(view, "oops")
    qtbot.keyClick(view, Qt.Key_Return)
    qtbot.keyClick(view, Qt.Key_Tab)
    assert view.source() == LESSON
    assert label.isVisible() and "Read-only" in label.text()
    qtbot.waitUntil(lambda: not label.isVisible(), timeout=5000)  # the note goes away by itself
    qtbot.keyClick(view, Qt.Key_Down)  # the cursor still moves, for run-to-cursor
    assert view.cursor_line() == 7
    view.set_read_only(False)
    assert not label.isVisible()
    put_cursor(view, 6, 0)
    qtbot.keyClicks(view, "ok")
    assert line_text(view, 6) == "okimport torch"


def test_auto_indent_tab_and_backspace(qtbot, view):
    view.set_source("")
    qtbot.keyClicks(view, "def f(x):")
    qtbot.keyClick(view, Qt.Key_Return)
    qtbot.keyClicks(view, "if x:")
    qtbot.keyClick(view, Qt.Key_Return)
    qtbot.keyClicks(view, "return x")
    qtbot.keyClick(view, Qt.Key_Return)
    assert view.source() == "def f(x):\n    if x:\n        return x\n    "
    qtbot.keyClick(view, Qt.Key_Backspace)
    qtbot.keyClick(view, Qt.Key_Tab)
    qtbot.keyClick(view, Qt.Key_Tab)
    qtbot.keyClicks(view, "y")
    assert view.source().splitlines()[-1] == "        y"

    select_lines(view, 2, 3)
    qtbot.keyClick(view, Qt.Key_Tab)
    assert view.source().splitlines()[1:3] == ["        if x:", "            return x"]
    qtbot.keyClick(view, Qt.Key_Backtab)
    qtbot.keyClick(view, Qt.Key_Backtab)
    assert view.source().splitlines()[1:3] == ["if x:", "    return x"]


def test_ctrl_slash_toggles_comments_on_the_selected_lines(qtbot, view):
    cursor = view.textCursor()
    cursor.setPosition(view.document().findBlockByNumber(28).position())
    cursor.setPosition(view.document().findBlockByNumber(30).position() + 3, cursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    qtbot.keyClick(view, Qt.Key_Slash, Qt.ControlModifier)
    assert [line_text(view, n) for n in (29, 30, 31)] == [  # commented at the outermost indentation
        "    #     w -= learning_rate * w.grad", "    #     b -= learning_rate * b.grad", "    # w.grad.zero_()"]
    qtbot.keyClick(view, Qt.Key_Slash, Qt.ControlModifier)
    assert view.source() == LESSON


def test_zoom_with_ctrl_plus_and_minus(qtbot, view):
    size, width = view.font().pointSizeF(), gutter(view).width()
    qtbot.keyClick(view, Qt.Key_Plus, Qt.ControlModifier)
    qtbot.keyClick(view, Qt.Key_Plus, Qt.ControlModifier)
    assert view.font().pointSizeF() == size + 2
    assert gutter(view).width() > width
    qtbot.keyClick(view, Qt.Key_Minus, Qt.ControlModifier)
    assert view.font().pointSizeF() == size + 1
    qtbot.keyClick(view, Qt.Key_0, Qt.ControlModifier)
    assert view.font().pointSizeF() == size
    centre = QPointF(view.viewport().rect().center())
    wheel = QWheelEvent(centre, QPointF(view.viewport().mapToGlobal(centre.toPoint())), QPoint(), QPoint(0, 120),
                        Qt.NoButton, Qt.ControlModifier, Qt.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), wheel)
    assert view.font().pointSizeF() == size + 1
    assert view.fontMetrics().horizontalAdvance("i") == view.fontMetrics().horizontalAdvance("W")  # monospace


# -- colours ---------------------------------------------------------------------------------

def test_keywords_names_strings_and_comments_look_different(view):
    keyword = colour_of(view, 11, "def")
    assert keyword == QColor(TOKEN_STYLES[Keyword][0])
    assert colour_of(view, 11, "x,") is None  # a plain name keeps the text colour
    assert colour_of(view, 11, "predict") not in (None, keyword)
    comment = colour_of(view, 13, "# broadcasting")
    string = colour_of(view, 36, '"the loss')
    assert None not in (comment, string) and comment != string and keyword not in (comment, string)
    assert any(italic for text, _, _, italic in formats_of(view, 13) if text.startswith("#"))


def test_a_docstring_over_several_lines_stays_a_string(view):
    string = colour_of(view, 1, '"""Lesson')
    assert colour_of(view, 3, "Steps through") == string
    assert colour_of(view, 4, '"""') == string
    assert colour_of(view, 6, "import") != string  # the string closed on line 4
    # Opening a docstring re-colours the lines after it; closing it restores them.
    cursor = view.textCursor()
    cursor.setPosition(view.document().findBlockByNumber(5).position())
    cursor.insertText('"""')
    assert colour_of(view, 8, "torch") == string
    view.undo()
    assert colour_of(view, 8, "torch") != string


def test_a_two_thousand_line_file_is_coloured_to_its_last_line(view):
    # how fast is for a benchmark to say; here: every line is coloured, the last one included
    source = "\n".join(f"value_{n} = torch.ones({n}) * {n}.5  # line {n}" for n in range(2000))
    view.set_source(source)
    assert colour_of(view, 2000, "# line") is not None


def test_screenshot_of_a_paused_lesson(qtbot, view):
    view.set_breakpoints({25: None, 29: "step == 3"})
    view.set_previous_line(25)
    view.set_current_line(26)
    view.verticalScrollBar().setValue(8)
    qtbot.wait(10)
    path = Path("/tmp/code_view.png")
    view.grab().save(str(path))
    assert path.stat().st_size > 0


NOTES_LESSON = '''# %% [markdown]
# [en]
# # Keeping the graph with retain_graph
# Why a second backward needs it.
# [zh]
# # 用 retain_graph 保留计算图
# 为什么第二次 backward 需要它。

# %%
x = 1
'''


def test_notes_cells_fold_to_a_marker_and_an_edit_keeps_them_folded(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    view.set_source(NOTES_LESSON)
    [fold] = view.notes_folding.folds()
    assert (fold.start, fold.end, fold.folded) == (1, 7, True)  # the blank line after the cell stays in sight
    assert fold.labels == {"en": "Keeping the graph with retain_graph", "zh": "用 retain_graph 保留计算图"}
    document = view.document()
    assert [document.findBlockByNumber(n).isVisible() for n in range(10)] == [True] + [False] * 6 + [True] * 3
    cursor = view.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    view.setTextCursor(cursor)
    qtbot.keyClick(view, Qt.Key_Return)
    qtbot.keyClicks(view, "y = 2")
    assert view.notes_folding.folds()[0].folded and not document.findBlockByNumber(3).isVisible()


WHERE_LINE = "        safe_root = torch.where(leaf > 0, torch.sqrt(leaf), torch.zeros_like(leaf))"


@pytest.mark.parametrize("picked", [False, True], ids=["alone", "after a node was picked"])
def test_an_operation_off_to_the_right_scrolls_into_view_and_back(qtbot, view, picked):
    """Lesson 01's torch.where line at 1280×800: step 3 of Alt+F11, torch.zeros_like(leaf), lay
    off-screen to the right; a node picked in the graph earlier kept its selection over the highlight;
    and the view stayed scrolled sideways after the line."""
    line = WHERE_LINE
    view.set_source(f"import torch\n{line}\nx = 1\n", "/lessons/where.py")
    view.resize(420, 300)
    start = line.index("torch.zeros_like")
    end = start + len("torch.zeros_like(leaf)")
    view.set_current_line(2)
    if picked:  # a graph node picked at an earlier step selected the whole expression
        view.select_span([2, line.index("torch.where"), 2, len(line)])
    view.set_operation_span([2, start, 2, end])
    assert not view.textCursor().hasSelection()
    cursor = QTextCursor(view.document())
    viewport = view.viewport().rect()
    for column in (start, end):
        cursor.setPosition(view.document().findBlockByNumber(1).position() + column)
        assert viewport.contains(view.cursorRect(cursor).center()), column
    assert view.horizontalScrollBar().value() > 0
    view.set_operation_span(None)  # the line's operations are done
    assert view.horizontalScrollBar().value() == 0


def test_each_operation_of_lesson_01s_torch_where_line_is_in_view_at_1280x800(qtbot, open_window):
    """Alt+F11 through `safe_root = torch.where(...)`: the third operation lay off-screen to the right."""
    from conftest import line_of
    from test_main_window import wait_paused

    from app.workspace import LESSONS_DIR

    path = LESSONS_DIR / "01_dynamic_graphs.py"
    line = line_of(str(path), "    safe_root = torch.where(")
    window = open_window(path, (1280, 800))
    code = window.code_view
    code.go_to_line(line)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, line)
    seen = []
    for _ in range(4):
        step = window.run.live["step"]
        window.commands.step_expression()
        qtbot.waitUntil(lambda s=step: window.session.state == "paused" and window.run.live["step"] > s,
                        timeout=30_000)
        if "op" not in window.run.live:
            break
        start, end = code.operation_span()
        x = []
        for position in (start, end):
            cursor = QTextCursor(code.document())
            cursor.setPosition(position)
            x.append(code.cursorRect(cursor).center())
        fits = x[1].x() - x[0].x() < code.viewport().width()
        # the whole operation when it fits in the view, else its start
        for point in x if fits else x[:1]:
            assert code.viewport().rect().contains(point), window.run.live["op"]["name"]
        seen.append(code.document().toPlainText()[start:end])
    assert "torch.zeros_like(leaf)" in seen
    window.commands.step_over()  # on past the line: the view scrolls back
    qtbot.waitUntil(lambda: window.session.state == "paused" and window.run.live["line"] != line, timeout=30_000)
    assert code.horizontalScrollBar().value() == 0


def test_a_node_picked_on_a_long_line_shows_the_line_from_its_start_and_a_step_scrolls_back(view):
    """Clicking a graph node whose line ends in a long # predict: comment scrolled the code sideways to the line's
    end, out of view, and it stayed so while stepping on (lines read "ired = []", "ayer = nn.Linear")."""
    long_line = "out = layer(x)  # predict: out.grad_fn | " + " | ".join(["BackwardHookFunctionBackward"] * 6)
    view.setPlainText(f"x = 1\n{long_line}\ny = 2\n")
    view.resize(400, 200)
    view.show()
    bar = view.horizontalScrollBar()
    assert bar.maximum() > 0  # the line is wider than the view
    view.select_line(2)
    assert bar.value() == 0 and view.textCursor().selectedText().startswith("out = layer(x)")
    view.select_span([2, 6, 2, 14])  # layer(x): in view without a scroll
    assert bar.value() == 0
    view.select_span([2, len(long_line) - 10, 2, len(long_line)])  # the end of the comment: scrolled to it
    assert bar.value() > 0
    view.set_current_line(3)  # the next step: its line from the start again
    assert bar.value() == 0


def test_stepping_down_keeps_the_next_lines_in_view(view):
    """The line about to run sat on the bottom edge while stepping, the next one (often a question) hidden."""
    view.setPlainText("".join(f"value_{n} = {n}\n" for n in range(1, 101)))
    view.resize(400, 200)
    for line in range(1, 60):
        view.set_current_line(line)
        below = view.document().findBlockByNumber(line + 1)  # two lines on
        geometry = view.blockBoundingGeometry(below).translated(view.contentOffset())
        assert 0 <= geometry.top() and geometry.bottom() <= view.viewport().height() + 0.5, line
    assert view.verticalScrollBar().value() > 40
