"""The output console: ordered, coloured, bounded output; clickable errors; the evaluation line."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from app.lesson.summaries import Summarizer
from widgets.console_view import LINE_CHARS, ConsoleView


@pytest.fixture
def console(qtbot) -> ConsoleView:
    view = ConsoleView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    qtbot.waitExposed(view)
    return view


def text_of(view: ConsoleView) -> str:
    return view.output.toPlainText()


def runs(view: ConsoleView) -> list[tuple[str, str]]:
    """Every fragment of the output as (text, foreground colour name), merged when the colour repeats."""
    out: list[tuple[str, str]] = []
    block = view.output.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            color = fragment.charFormat().foreground().color().name()
            if out and out[-1][1] == color:
                out[-1] = (out[-1][0] + fragment.text(), color)
            else:
                out.append((fragment.text(), color))
            it += 1
        if out and block.next().isValid():
            out[-1] = (out[-1][0] + "\n", out[-1][1])
        block = block.next()
    return out


def color_at(view: ConsoleView, needle: str) -> str:
    """Foreground colour of the first character of ``needle`` in the output."""
    position = text_of(view).index(needle)
    cursor = QTextCursor(view.output.document())
    cursor.setPosition(position + 1)  # the format of the character before the cursor
    return cursor.charFormat().foreground().color().name()


def summary(value) -> dict:
    return Summarizer().summarize(value)


def test_chunks_join_lines_in_order_with_stream_colours(qtbot, console):
    for stream, chunk in [("stdout", "hel"), ("stdout", "lo\nwor"), ("stdout", "ld\n"),
                          ("stderr", "oops: "), ("stderr", "bad\n"), ("native", "Segmentation fault\n"),
                          ("stdout", "done\n")]:
        console.append_output(stream, chunk)
    qtbot.waitUntil(lambda: "done" in text_of(console))
    assert text_of(console) == "hello\nworld\noops: bad\nSegmentation fault\ndone\n"
    stdout, stderr, native = color_at(console, "hello"), color_at(console, "oops"), color_at(console, "Segm")
    assert len({stdout, stderr, native}) == 3
    assert color_at(console, "world") == color_at(console, "done") == stdout
    assert color_at(console, "bad") == stderr
    # one run per stream change: the colours follow the text, not the chunks
    assert [text for text, _ in runs(console)] == ["hello\nworld\n", "oops: bad\n", "Segmentation fault\n", "done\n"]


def test_a_warning_line_is_amber_even_when_it_arrives_in_pieces(qtbot, console):
    console.append_output("stderr", "lesson.py:3: User")
    qtbot.waitUntil(lambda: "User" in text_of(console))
    console.append_output("stderr", "Warning: the grad of a non-leaf\n")
    console.append_output("stderr", "plain error\n")
    qtbot.waitUntil(lambda: "plain error" in text_of(console))
    warning = color_at(console, "lesson.py")
    assert color_at(console, "Warning") == warning
    assert color_at(console, "plain error") != warning


def test_scrollback_stays_bounded_under_a_flood(qtbot, console):
    bound = console.max_lines
    for start in range(0, 2_000, 100):  # some output the GUI keeps up with
        console.append_output("stdout", "".join(f"line {i}\n" for i in range(start, start + 100)))
        qtbot.waitUntil(lambda start=start: f"line {start + 99}\n" in text_of(console))
    for start in range(2_000, 20_000, 100):  # then a flood between two flushes
        console.append_output("stdout", "".join(f"line {i}\n" for i in range(start, start + 100)))
    assert len(console._pending) <= 2 * bound // 100 + 1  # the buffer itself is bounded
    qtbot.waitUntil(lambda: "line 19999\n" in text_of(console))
    document = console.output.document()
    assert document.blockCount() <= bound
    lines = text_of(console).splitlines()
    assert lines[-1] == "line 19999"
    notes = [line for line in lines if "lines dropped" in line]
    assert len(notes) == 1
    dropped = int(notes[0].split()[1].replace(",", ""))
    kept = [int(line.split()[1]) for line in lines[lines.index(notes[0]) + 1:]]
    assert kept == list(range(20_000 - len(kept), 20_000))  # the newest lines, in order
    assert dropped + len(kept) == 18_000  # nothing of the flood is lost silently



def test_a_very_long_line_is_drawn_in_part_and_says_how_much_it_left_out(qtbot, console):
    """A lesson printing a 5 MB line froze the window for good (Qt lays a line out whole: 41 s for
    1,000,000 characters): a line is drawn up to LINE_CHARS, also when it arrives over several
    flushes, and ends with the count of what was left out; the lines around it are untouched."""
    long = "x" * 250_000
    console.append_output("stdout", "before\n" + long[:6_000])
    qtbot.waitUntil(lambda: "x" * 6_000 in text_of(console))  # drawn: the rest comes at later flushes
    for start in range(6_000, len(long), 65_536):
        console.append_output("stdout", long[start:start + 65_536])
    console.append_output("stdout", "\nafter\n" + "y" * 12_000)  # a second long line, never ended
    console.append_message("Run ended")
    qtbot.waitUntil(lambda: "Run ended" in text_of(console))
    assert text_of(console).splitlines() == [
        "before", "x" * LINE_CHARS + " … and 240,000 more characters on this line",
        "after", "y" * LINE_CHARS + " … and 2,000 more characters on this line", "Run ended"]
    assert color_at(console, " … and 240,000") == color_at(console, "Run ended") != color_at(console, "before")
    console.append_output("stdout", "short\n")
    qtbot.waitUntil(lambda: "short" in text_of(console))
    assert text_of(console).splitlines()[-1] == "short"  # the count starts again after a cut line


def test_the_pane_follows_the_end_through_long_wrapped_lines_until_the_learner_scrolls_up(qtbot, console):
    """Qt lays out a wrapped line after it is written, so the scroll bar's end moves later: the pane
    still ends on the last line, and stays where the learner scrolled to."""
    output = console.output
    console.resize(420, 110)  # as small as at 1280x800: the scroll bar appears, and the long lines wrap again

    def last_line_shown() -> bool:
        last = output.document().lastBlock()
        return output.blockBoundingGeometry(last).translated(output.contentOffset()).bottom() \
            <= output.viewport().height() + 1

    console.append_message("Running")
    console.append_output("stdout", "x" * 9_000 + "\nthe end\n")
    console.append_message("Finished")
    qtbot.waitUntil(lambda: "Finished" in text_of(console))
    qtbot.wait(200)  # the layout settles
    assert last_line_shown()
    bar = output.verticalScrollBar()
    bar.triggerAction(bar.SliderAction.SliderToMinimum)  # the learner scrolls back to read
    console.append_output("stdout", "more\n" + "y" * 9_000 + "\n")
    qtbot.waitUntil(lambda: "more" in text_of(console))
    qtbot.wait(100)
    assert bar.value() == bar.minimum()

def test_clicking_a_traceback_line_asks_for_that_line(qtbot, console):
    console.append_output("stdout", "before\n")
    console.append_error({
        "type": "TypeError", "message": "unsupported operand type(s) for *: 'Tensor' and 'str'", "line": 12,
        "traceback": [
            {"file": "/lessons/lesson.py", "line": 20, "function": "<module>", "text": "f(x)"},
            {"file": "/lessons/lesson.py", "line": 12, "function": "f", "text": "    return x * 'a'"},
        ],
    })
    text = text_of(console)
    assert text.index("before") < text.index("Traceback (user frames):")
    assert 'File "lesson.py", line 12, in f' in text
    assert text.rstrip().endswith("TypeError: unsupported operand type(s) for *: 'Tensor' and 'str'")
    assert color_at(console, "TypeError") != color_at(console, "before")

    cursor = QTextCursor(console.output.document())
    cursor.setPosition(text.index("line 12, in f") + 2)
    where = console.output.cursorRect(cursor).center()
    with qtbot.waitSignal(console.line_activated) as clicked:
        qtbot.mouseClick(console.output.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert clicked.args == [12]

    cursor.setPosition(text.index("before") + 2)
    plain = console.output.cursorRect(cursor).center()
    with qtbot.assertNotEmitted(console.line_activated):
        qtbot.mouseClick(console.output.viewport(), Qt.MouseButton.LeftButton, pos=plain)


def test_a_syntax_error_links_its_line_and_points_at_the_column(qtbot, console):
    console.append_error({"type": "SyntaxError", "message": "invalid syntax", "line": 3, "column": 7,
                          "text": "x = = 1", "traceback": []})
    lines = text_of(console).splitlines()
    assert lines[:4] == ["  Line 3", "    x = = 1", "          ^", "SyntaxError: invalid syntax"]


def test_messages_follow_buffered_output_and_look_different(qtbot, console):
    console.append_output("stdout", "partial")
    console.append_message("▶ Run started")
    console.append_message("■ Lesson ended: exited 3", "error")
    console.append_message("■ Lesson finished", "success")
    assert text_of(console).splitlines() == ["partial", "▶ Run started", "■ Lesson ended: exited 3",
                                             "■ Lesson finished"]
    colours = {color_at(console, needle) for needle in ("partial", "▶", "■ Lesson ended", "■ Lesson finished")}
    assert len(colours) == 4
    cursor = QTextCursor(console.output.document())
    cursor.setPosition(text_of(console).index("Run") + 1)
    assert cursor.charFormat().fontItalic()


def test_enter_asks_for_evaluation_and_up_down_walk_the_history(qtbot, console):
    assert not console.input.isEnabled()
    assert "pause" in console.input.placeholderText().lower()
    console.set_input_enabled(True)
    console.input.setFocus()
    for expression in ["x + 1", "y.grad", "y.grad"]:
        qtbot.keyClicks(console.input, expression)
        with qtbot.waitSignal(console.evaluate_requested) as asked:
            qtbot.keyClick(console.input, Qt.Key.Key_Return)
        assert asked.args == [expression]
        assert console.input.text() == ""
    assert ">>> x + 1" in text_of(console)

    qtbot.keyClicks(console.input, "dra")
    seen = []
    for key in [Qt.Key.Key_Up, Qt.Key.Key_Up, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Down]:
        qtbot.keyClick(console.input, key)
        seen.append(console.input.text())
    assert seen == ["y.grad", "x + 1", "x + 1", "y.grad", "dra"]


def test_a_tensor_result_prints_a_short_description(qtbot, console):
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    console.set_input_enabled(True)
    qtbot.keyClicks(console.input, "x * 2")
    qtbot.keyClick(console.input, Qt.Key.Key_Return)
    console.show_result("x * 2", {"ok": True, "value": summary(x * 2)})
    lines = text_of(console).splitlines()
    assert lines[0] == ">>> x * 2"  # the echo is not repeated when the answer follows it
    assert lines[1] == "Tensor  shape=[2, 3]  dtype=f32  device=cpu"
    assert "grad_fn=MulBackward0" in lines[2] and "is_leaf=False" in lines[2]
    assert lines[3].strip().startswith("[[ 2.") and lines[4].strip().endswith("12.]]")
    assert lines[-1] == "  .grad: None"

    console.show_result("big", {"ok": True, "value": summary(torch.randn(200, 300))})
    lines = text_of(console).splitlines()
    assert ">>> big" in lines  # something else came between the question and the answer
    assert any("60,000 values" in line and "μ=" in line and "σ=" in line for line in lines)
    assert not any(line.strip().startswith("[[") for line in lines[lines.index(">>> big"):])

    console.show_result("n", {"ok": True, "value": summary(7)})
    assert text_of(console).splitlines()[-1] == "7"


def test_an_error_result_prints_type_message_and_explanation(qtbot, console):
    console.append_output("stdout", "ok\n")
    qtbot.waitUntil(lambda: "ok" in text_of(console))
    console.show_result("z", {"ok": False, "error": {"type": "NameError", "message": "name 'z' is not defined",
                                                     "explanation": "No variable z exists in this frame."}})
    lines = text_of(console).splitlines()
    assert lines[-3:] == [">>> z", "NameError: name 'z' is not defined", "No variable z exists in this frame."]
    assert color_at(console, "NameError") != color_at(console, "ok")


def test_clear_empties_the_output(qtbot, console):
    console.append_output("stdout", "a lot\n")
    console.append_message("▶ Run started")
    qtbot.mouseClick(console.clear_button, Qt.MouseButton.LeftButton)
    assert text_of(console) == ""
    console.append_output("stdout", "again\n")
    qtbot.waitUntil(lambda: text_of(console) == "again\n")


def test_a_tensor_outside_autograd_prints_no_grad_line_and_one_inside_does(qtbot, console):
    """`a.grad` in the console ended with ".grad: None": the gradient tensor's own gradient, which no
    learner asked for."""
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    (a * a).sum().backward()
    console.show_result("a.grad", {"ok": True, "value": summary(a.grad)})
    console.show_result("a", {"ok": True, "value": summary(a)})
    lines = text_of(console).splitlines()
    shown_a = lines.index(">>> a")
    assert not any(".grad:" in line for line in lines[:shown_a])  # a.grad: no line about its own .grad
    assert any(line.strip().startswith(".grad: tensor") for line in lines[shown_a:])  # a: its .grad
