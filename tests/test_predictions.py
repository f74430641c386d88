"""Predict, then step: predictions and checks in the lesson format, judging answers, progress, the prediction bar."""

from __future__ import annotations

import queue
from pathlib import Path

import pytest
import torch
from conftest import borrow, give_back
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QGraphicsView, QPushButton
from test_main_window import press, wait_ended, wait_paused

from app import messages as m
from app.coach import Coach
from app.lesson.predictions import judge, passed
from app.lesson_format import LessonFormatError, list_lessons, parse_lesson
from app.progress import Progress
from widgets import settings

LESSON = '''"""A small lesson with predictions."""
# %% [markdown]
# [en]
# # Small
# Predictions.
# [zh]
# # 小
# 预测。

# %%
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2  # predict: h.requires_grad | True | False
s = h.sum()  # predict: s.grad_fn
u = 3
print("s", s.item())

# %% [markdown]
# [en]
# ## Try it
# 1. Set `u` to 4.
# [zh]
# ## 动手试试
# 1. 把 `u` 改成 4。
# check: u == 4
'''
H_LINE, S_LINE, U_LINE = 13, 14, 15


def test_predictions_and_checks_are_read_from_the_lesson():
    lesson = parse_lesson(LESSON)
    assert [(p.line, p.expression, p.choices) for p in lesson.predictions] == [
        (H_LINE, "h.requires_grad", ("True", "False")), (S_LINE, "s.grad_fn", ())]
    assert [(c.expression, c.exercise) for c in lesson.checks] == [("u == 4", 1)]
    assert "check:" not in lesson.notes[-1].text["en"] and "check:" not in lesson.notes[-1].text["zh"]
    assert lesson.prediction_at(H_LINE).expression == "h.requires_grad" and lesson.prediction_at(U_LINE) is None


@pytest.mark.parametrize("line, message", [
    ("h = x * 2  # predict: h.(", "not a Python expression"),
    ("# predict: h", "ends the code line"),
    ("h = x * 2  # predict:", "needs an expression"),
    ("h = x * 2  # predict: h | | b", "an empty choice"),
])
def test_a_broken_prediction_names_its_line(line, message):
    with pytest.raises(LessonFormatError, match=message):
        parse_lesson(LESSON.replace("h = x * 2  # predict: h.requires_grad | True | False", line))


def test_answers_are_judged_numbers_with_allclose_names_exactly():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    right = [(h.requires_grad, "True"), (h.grad_fn, "MulBackward0"), (h, "[2., 4.]"), (h, "tensor([2.0000, 4.0001])"),
             (x.grad, "None"), (h.shape, "[2]"), (h.dtype, "torch.float32"), (h.is_leaf, "False"), (3, "3.0"),
             (torch.tensor(float("nan")), "nan"), ("relu", "relu"), (h.sum(), "6")]
    wrong = [(h.requires_grad, "False"), (h.grad_fn, "mulbackward0"), (h, "[2., 5.]"), (h, "[2.]"), (x.grad, "0"),
             ("relu", "Relu"), (h.sum(), "True")]
    assert [answer for value, answer in right if not judge(value, answer)] == []
    assert [answer for value, answer in wrong if judge(value, answer)] == []
    assert passed(torch.ones(2) > 0) and not passed(torch.tensor([True, False])) and not passed(0)


def test_the_coach_asks_each_prediction_once_and_records_the_verdicts(tmp_path):
    progress = Progress(tmp_path / "progress.json")
    coach = Coach(parse_lesson(LESSON), "09_small", progress)
    pause = {"event": "line", "file": "lesson.py", "line": H_LINE}
    assert coach.stop_lines() == {H_LINE, S_LINE}
    prediction = coach.question_at(pause, "lesson.py")
    assert prediction.line == H_LINE and coach.question_at(pause, "lesson.py") is None  # a loop asks once
    assert coach.stop_lines() == {S_LINE}
    assert coach.question_at({**pause, "line": S_LINE, "recording": True}, "lesson.py") is None
    coach.answer(prediction, " True ")
    assert coach.take_waiting({}) == (prediction, "True") and coach.take_waiting({}) is None
    verdict = coach.verdict(prediction, "True", {"ok": True, "right": True, "shown": "True"})
    assert verdict.right and verdict.value == "True"
    results = coach.check_results([{"expression": "u == 4", "passed": False, "error": None}])
    assert [r.passed for r in results] == [False]
    again = Progress(tmp_path / "progress.json")  # kept across restarts
    assert again.of("09_small").right == 1 and again.of("09_small").passed == 0
    again.record_checks("09_small", {"u == 4": True})
    again.record_checks("09_small", {"u == 4": False})  # a pass stays a pass
    assert Progress(tmp_path / "progress.json").of("09_small").passed == 1
    again.reset("09_small")
    assert Progress(tmp_path / "progress.json").of("09_small").answered == 0


def test_an_exercise_passed_in_an_earlier_run_is_not_reported_as_not_yet(tmp_path):
    """A run that undoes a passed exercise said "✗ not yet" for it, though its progress kept the pass."""
    from widgets.prediction_bar import check_text

    lesson = parse_lesson(LESSON)
    coach = Coach(lesson, "09_small", Progress(tmp_path / "progress.json"))
    (first,) = coach.check_results([{"expression": "u == 4", "passed": False, "error": None}])
    assert not first.done_before and check_text(first) == "Try it 1: ✗ not yet: still false: u == 4"
    (done,) = coach.check_results([{"expression": "u == 4", "passed": True, "error": None}])
    assert check_text(done) == "Try it 1: ✓ done (u == 4)"
    (later,) = Coach(lesson, "09_small", Progress(tmp_path / "progress.json")).check_results(
        [{"expression": "u == 4", "passed": False, "error": None}])
    assert later.done_before and later.passed is False
    assert check_text(later) == "Try it 1: ✓ done in an earlier run (u == 4 is false in this one)"
    assert "not yet" not in check_text(later)


def test_a_false_check_tells_what_is_still_missing_in_the_interface_language(tmp_path):
    from app import i18n
    from widgets.prediction_bar import check_text

    coach = Coach(parse_lesson(LESSON), "09_small", Progress(tmp_path / "progress.json"))
    (result,) = coach.check_results([{"expression": "u == 4", "passed": False, "error": None, "missing": "u == 4"}])
    assert result.missing == "u == 4"
    assert check_text(result) == "Try it 1: ✗ not yet: still false: u == 4"
    i18n.set_language("zh")
    assert check_text(result) == "动手试试 1：✗ 还没有完成：仍为假的是 u == 4"


def test_a_damaged_progress_file_is_an_empty_progress(tmp_path):
    (tmp_path / "progress.json").write_text("{not json", encoding="utf-8")
    assert Progress(tmp_path / "progress.json").of("01_x").answered == 0


@pytest.mark.timeout(60)
def test_the_lesson_process_judges_a_prediction_and_runs_the_checks_at_the_end(tmp_path):
    path = tmp_path / "lesson.py"
    path.write_text(LESSON, encoding="utf-8")
    events: queue.Queue = queue.Queue()
    session = borrow(events.put)
    replies = {}
    try:
        session.breakpoints[str(path)] = {S_LINE: None}
        session.start(str(path), stop_on_entry=False, checks=["u == 3", "u == 4", "missing + 1"])
        while not isinstance(message := events.get(timeout=30), m.Ended):
            if isinstance(message, m.Paused):
                for answer in ("True", "False"):
                    session.request("predict", expression="h.requires_grad", answer=answer)
                    while not isinstance(reply := events.get(timeout=30), m.Reply):
                        pass
                    replies[answer] = reply.result["right"]
                session.resume()
    finally:
        give_back(session)
    assert replies == {"True": True, "False": False}
    assert [(c["passed"], c["error"] is not None) for c in message.checks] == [(True, False), (False, False),
                                                                               (None, True)]


def test_lesson_infos_count_predictions_and_checks(tmp_path):
    (tmp_path / "09_small.py").write_text(LESSON, encoding="utf-8")
    info = list_lessons(tmp_path)[0]
    assert (info.predictions, info.checks) == (2, 1)


@pytest.fixture
def window(open_window, tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "09_small.py").write_text(LESSON, encoding="utf-8")
    settings.put("course/ask_predictions", True)  # as on a learner's first start
    win = open_window(lessons / "09_small.py")
    win.lesson_browser.set_lessons(list_lessons(lessons), "en")
    win._show_progress()
    return win


def bar_text(win) -> str:
    return win.prediction_bar.question.text()


def test_the_run_stops_to_ask_and_a_right_answer_is_said_right(qtbot, window):
    """F8 ran through every prediction without asking; now the run stops before the line and asks."""
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    bar = window.prediction_bar
    assert bar.isVisible() and "h.requires_grad" in bar_text(window)
    assert [b.text() for b in bar._choice_buttons] == ["True", "False"] and not bar.answer_edit.isVisible()
    qtbot.mouseClick(bar._choice_buttons[0], Qt.LeftButton)  # "True": the line runs, then the verdict
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert window.run.live["line"] == S_LINE
    # the verdict stays above the next question, since this pause is itself a prediction line
    assert bar.verdict_label.text() == "✓ Right: <code>h.requires_grad</code> is <code>True</code>."
    assert "s.grad_fn" in bar_text(window) and bar.answer_edit.isVisible()
    qtbot.waitUntil(lambda: "✓ Right: h.requires_grad is True" in window.console.output.toPlainText())
    assert window.status.announcement.startswith("✓ Right: h.requires_grad is True")  # said to a screen reader too


def test_the_question_waits_for_the_live_step_while_the_past_is_in_view(qtbot, window):
    """Stepping back from a question left it over the past step's code, as if that line asked it."""
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    press(qtbot, window, Qt.Key.Key_F5)  # on to the first prediction
    wait_paused(qtbot, window, H_LINE)
    bar = window.prediction_bar
    assert bar.isVisible() and "h.requires_grad" in bar_text(window)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # Step Back
    assert window.run.viewing is not None and not bar.isVisible()
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.run.viewing is None and bar.isVisible() and "h.requires_grad" in bar_text(window)


def test_f10_on_an_open_question_runs_nothing_and_esc_skips_it_out_loud(qtbot, window):
    """F10 with a question open ran the line: the question vanished with no verdict and no note."""
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    bar, step = window.prediction_bar, window.run.live["step"]
    assert "answer the question above" in window.state_label.text()
    plain, ctrl = Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ControlModifier
    for key, modifier in ((Qt.Key.Key_F10, plain), (Qt.Key.Key_F11, plain), (Qt.Key.Key_F5, plain),
                          (Qt.Key.Key_F5, ctrl)):
        press(qtbot, window, key, modifier)
        assert window.session.state == "paused" and window.run.live["step"] == step, key
        assert bar.asking and "h.requires_grad" in bar_text(window)
        waits = "the line runs with Step Into" if key == Qt.Key.Key_F11 else "or skip it (Esc); the line has not run"
        assert "answer the question above (Enter)" in window.state_label.text() and waits in window.state_label.text()
    press(qtbot, window, Qt.Key.Key_Escape)  # the explicit skip
    assert not bar.isVisible() and window.run.live["line"] == H_LINE
    assert "Skipped the question on line 13" in window.state_label.text()
    qtbot.waitUntil(lambda: "Skipped the prediction on line 13 (h.requires_grad): not judged"
                    in window.console.output.toPlainText())
    press(qtbot, window, Qt.Key.Key_F10)  # now F10 runs the line, and the next question comes
    wait_paused(qtbot, window, S_LINE)
    assert bar.asking and "s.grad_fn" in bar_text(window) and bar.verdict is None


def test_the_backward_panel_gives_nothing_away_while_a_question_waits(qtbot, window):
    """Lesson 07 asks "what will w.grad be?" at loss.backward(); Backward > Preview gradients answered it, and Run
    backward() would have changed the .grad the line is about."""
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    panel = window.backward_panel
    window.window_layout.go_to("backward")
    buttons = [b for b in panel.findChildren(QPushButton) if b.text() in ("Preview gradients", "Run backward()")]
    assert len(buttons) == 2
    assert not any(b.isEnabled() for b in buttons)
    assert all(b.toolTip() == "Not while a prediction waits for its answer" for b in buttons)
    assert panel.state_label.text().startswith("Predict first: answer or skip the question above the code")
    window.set_language("zh")
    assert panel.state_label.text().startswith("先预测：回答或跳过代码上方的问题")
    window.set_language("en")
    press(qtbot, window, Qt.Key.Key_Escape)  # skipped: the panel is the learner's again
    assert all(b.isEnabled() for b in buttons) and not panel.state_label.isVisible()


def test_record_to_end_says_how_many_predictions_it_passed_unasked(qtbot, window):
    """Ctrl+F5 ran past every question silently."""
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)
    wait_ended(qtbot, window)
    qtbot.waitUntil(lambda: "Record to End skipped 2 prediction(s) without asking, on line(s) 13, 14"
                    in window.console.output.toPlainText())


def test_a_wrong_free_answer_says_what_the_value_is_and_progress_is_kept(qtbot, window):

    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    window.prediction_bar._on_skip_button_clicked()  # skip the first: the line has not run
    assert not window.prediction_bar.isVisible() and window.run.live["line"] == H_LINE
    press(qtbot, window, Qt.Key.Key_F5)  # continue: stops at the next prediction
    wait_paused(qtbot, window, S_LINE)
    bar = window.prediction_bar
    assert "s.grad_fn" in bar_text(window)
    qtbot.keyClicks(bar.answer_edit, "AddBackward0")
    qtbot.keyClick(bar.answer_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert "Not quite" in bar.verdict_label.text() and "SumBackward0" in bar.verdict_label.text()
    assert bar.close_button.isVisible() and not bar.question.isVisible()
    press(qtbot, window, Qt.Key.Key_F5)
    wait_ended(qtbot, window)
    text = window.console.output.toPlainText()
    assert "✗ Not quite: you said AddBackward0; s.grad_fn is SumBackward0" in text
    assert "Try it 1: ✗ not yet: still false: u == 4" in text
    row = window.lesson_browser.list.item(0).text()
    assert "predictions right 0/2" in row and "exercises 0/1" in row
    stored = Progress(Path(window.workspace.data_dir) / "progress.json").of("09_small")
    assert stored.answered == 1 and stored.right == 0


def test_the_exercise_done_is_ticked_and_the_progress_can_be_reset(qtbot, window):
    window.code_view.setPlainText(window.code_view.source().replace("u = 3", "u = 4"))
    window.act_ask_predictions.setChecked(False)
    window.toggle_predictions()
    press(qtbot, window, Qt.Key.Key_F8)
    wait_ended(qtbot, window)
    assert not window.prediction_bar.isVisible()
    assert "Try it 1: ✓ done (u == 4)" in window.console.output.toPlainText()
    assert "✓ exercises 1/1" in window.lesson_browser.list.item(0).text()
    window.code_view.setPlainText(window.code_view.source().replace("u = 4", "u = 3"))  # undone: a pass stays
    press(qtbot, window, Qt.Key.Key_F8)
    wait_ended(qtbot, window)
    output = window.console.output.toPlainText()
    assert "Try it 1: ✓ done in an earlier run (u == 4 is false in this one)" in output and "not yet" not in output
    assert "✓ exercises 1/1" in window.lesson_browser.list.item(0).text()
    window.lesson_browser.progress_reset_requested.emit("09_small")
    assert "exercises 0/1" in window.lesson_browser.list.item(0).text()



def test_exercises_of_a_lesson_run_as_it_comes_are_not_tried_yet_not_failed(qtbot, open_window):
    """Lesson 01 run to its end unedited said "✗ not yet: still false: course.before('first_nan = ', ...)":
    a failure, in the course's own check code, for exercises the learner never tried."""
    from app.workspace import LESSONS_DIR

    settings.put("course/ask_predictions", False)
    window = open_window(LESSONS_DIR / "01_dynamic_graphs.py", (1280, 800))
    window.commands.run_to_end()  # F8
    wait_ended(qtbot, window, timeout=60_000)
    output = window.console.output.toPlainText()
    tried = [line for line in output.splitlines() if line.startswith("Try it")]
    assert tried and all("not tried yet" in line and "✗" not in line and "course." not in line for line in tried)
    window.code_view.setPlainText(window.code_view.source().replace("\n", "\n# my notes\n", 1))  # edited
    window.commands.run_to_end()  # F8
    wait_ended(qtbot, window, timeout=60_000)
    later = window.console.output.toPlainText().splitlines()
    assert [line for line in later if line.startswith("Try it")][0].startswith("Try it 1: ✗ not yet: still false")

def test_the_question_and_verdict_follow_the_language(qtbot, window):
    window.set_language("zh")
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    assert "先预测，再运行" in bar_text(window) and window.prediction_bar.skip_button.text() == "跳过"
    window.set_language("en")
    assert "Predict before this line runs" in bar_text(window)


def line_in_view(code_view, line: int) -> bool:
    block = code_view.document().findBlockByNumber(line - 1)
    geometry = code_view.blockBoundingGeometry(block).translated(code_view.contentOffset())
    return geometry.top() >= 0 and geometry.bottom() <= code_view.viewport().height()


def test_the_question_over_the_code_never_hides_the_line_it_asks_about(qtbot, open_window, tmp_path):
    """Lesson 14's fourth question: paused at line 234, the code view ended at line 233 once the bar
    (taller in 中文) was shown over it."""
    filler = "".join(f"v{i} = {i}\n" for i in range(200))
    source = LESSON.replace("h = x * 2  # predict:", filler + "h = x * 2  # predict:")
    path = tmp_path / "lessons" / "09_long.py"
    path.parent.mkdir()
    path.write_text(source, encoding="utf-8")
    settings.put("course/ask_predictions", True)
    window = open_window(path, (1280, 800))
    window.set_language("zh")
    line = H_LINE + 200
    window.commands.run_to_end()  # F8
    wait_paused(qtbot, window, line)
    code, bar = window.code_view, window.prediction_bar
    qtbot.waitUntil(lambda: bar.isVisible() and line_in_view(code, line))
    prediction, with_bar = bar.prediction, code.viewport().height()
    bar.dismiss()
    qtbot.waitUntil(lambda: code.viewport().height() > with_bar)

    def last_in_view() -> bool:  # aim again while the layout settles after the bar went
        block = code.document().findBlockByNumber(line - 1)
        # a line's own height: with some fonts one pixel more than the font's line spacing (16 and 15 here)
        rows = int(code.viewport().height() // code.blockBoundingRect(block).height())
        code.verticalScrollBar().setValue(block.firstLineNumber() - rows + 1)
        return line_in_view(code, line) and not line_in_view(code, line + 1)

    # the paused line is the last one in view (the step before stopped just above it) when the question comes
    qtbot.waitUntil(last_in_view)
    full = code.viewport().height()
    bar.ask(prediction)
    qtbot.waitUntil(lambda: code.viewport().height() < full)
    assert line_in_view(code, line)


def test_box_labels_on_one_header_do_not_overlap_after_a_prediction(qtbot, open_window):
    """Lesson 03, F5 to its first prediction, answer, step: "line 105" and "ran while continuing" framed
    nearly the same nodes, and their labels were drawn over each other."""
    from widgets.graph_items import OriginBox

    settings.put("course/ask_predictions", True)
    window = open_window(Path(__file__).resolve().parent.parent / "lessons" / "03_loops.py", (1920, 1080))
    window.commands.start_or_continue()  # F5: paused at the first line
    qtbot.waitUntil(lambda: window.session.state == "paused", timeout=30_000)
    window.commands.start_or_continue()  # F5 again: on to the first prediction
    qtbot.waitUntil(lambda: window.prediction_bar.asking, timeout=30_000)
    window.prediction_bar.answered.emit("TanhBackward0")
    qtbot.waitUntil(lambda: window.prediction_bar.verdict is not None, timeout=30_000)
    scene = window.graph_view.findChild(QGraphicsView, "graph_canvas").scene()
    captions = [item.caption.sceneBoundingRect() for item in scene.items() if isinstance(item, OriginBox)]
    assert len(captions) >= 2
    assert not [(a, b) for i, a in enumerate(captions) for b in captions[i + 1:] if a.intersects(b)]


def test_after_a_verdict_the_notes_show_the_note_that_explains_it(qtbot, open_window):
    """Lesson 20 said "The notes explain why" while the notes still showed the section that asked; the
    explanation came only a few steps later, with the next section."""
    settings.put("course/ask_predictions", True)
    window = open_window(Path(__file__).resolve().parent.parent / "lessons" / "20_be_the_engine.py", (1280, 800))
    bar, notes = window.prediction_bar, window.notes_view
    window.commands.run_to_end()  # F8
    asked = wait_paused(qtbot, window)["line"]
    assert "len(order)" in bar_text(window)
    qtbot.mouseClick(next(b for b in bar._choice_buttons if b.text() == "6"), Qt.LeftButton)
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    press(qtbot, window, Qt.Key.Key_F5)  # on to the next question: z.grad, on out.backward()
    qtbot.waitUntil(lambda: bar.asking and "z.grad" in bar_text(window), timeout=30_000)
    line = window.run.live["line"]
    assert line > asked and "## Run the engine" in notes.text()
    qtbot.mouseClick(next(b for b in bar._choice_buttons if b.text() == "-0.5"), Qt.LeftButton)
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert "The notes explain why" in bar.verdict_label.text()
    assert window.run.live["line"] == line + 1  # the print below it: still the section that asked
    assert notes.explaining and "## Why `+=`" in notes.text() and "`z.grad` is -1.0" in notes.text()
    assert "Why +=" in notes.browser.toPlainText()  # what the learner reads, not only what was set
    window.set_language("zh")
    assert "## 为什么用 `+=`" in notes.text()
    window.set_language("en")
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back: the question's own notes
    qtbot.waitUntil(lambda: window.run.viewing is not None)
    assert not notes.explaining and "## Run the engine" in notes.text()



def test_the_note_after_two_questions_waits_for_the_second_verdict(qtbot, open_window):
    """Lesson 03 asks h_t.grad_fn, then nodes, in one cell: after the first verdict the notes showed
    the note below the cell, which says "Step 0 found 13", while the nodes question was open."""
    settings.put("course/ask_predictions", True)
    window = open_window(Path(__file__).resolve().parent.parent / "lessons" / "03_loops.py", (1280, 800))
    bar, notes = window.prediction_bar, window.notes_view
    window.commands.run_to_end()  # F8: on to the first question
    qtbot.waitUntil(lambda: bar.asking and "h_t.grad_fn" in bar_text(window), timeout=30_000)
    bar.answered.emit("AddBackward0")
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert not notes.explaining and "found 13" not in notes.text()
    press(qtbot, window, Qt.Key.Key_F5)  # on to the next question, in the same cell
    qtbot.waitUntil(lambda: bar.asking and "nodes" in bar_text(window), timeout=30_000)
    for language in ("zh", "en"):
        window.set_language(language)
        assert not notes.explaining and "13" not in notes.text()
    bar.answered.emit("10")
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert notes.explaining and "Step 0 found 13" in notes.text()

def test_lesson_20_says_how_to_step_into_the_engine_past_its_question(qtbot, open_window):
    """Lesson 20 said "press F11 on out.backward()", a line that asks first: F11 did nothing while it asked, and
    the answer ran the whole line. A run that does what the notes say now (skip, then F11) is in Value.backward."""
    settings.put("course/ask_predictions", True)
    window = open_window(Path(__file__).resolve().parent.parent / "lessons" / "20_be_the_engine.py", (1280, 800))
    bar = window.prediction_bar
    window.commands.run_to_end()  # F8, to the first question: skipped
    wait_paused(qtbot, window)
    press(qtbot, window, Qt.Key.Key_Escape)
    press(qtbot, window, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: bar.asking and "z.grad" in bar_text(window), timeout=30_000)
    line = window.run.live["line"]
    for lang, skip, f11 in (("en", "skip the question (Skip, or Esc) and press F11", "on `out.backward()`"),
                            ("zh", "跳过这个问题（点“跳过”或按 Esc），在 `out.backward()` 上按 F11", "")):
        window.set_language(lang)
        assert skip in window.notes_view.text() and f11 in window.notes_view.text()
    window.set_language("en")
    press(qtbot, window, Qt.Key.Key_Escape)
    press(qtbot, window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: window.run.live["function"] == "backward", timeout=30_000)
    assert window.run.live["stack"][1]["line"] == line  # called from out.backward()


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)], ids=["1280x800", "1600x1000"])
def test_the_answer_hint_reads_whole_and_its_tooltip_says_what_an_answer_may_be(
        qtbot, open_window, tmp_path, size, language):
    """At 1600x1000 in 中文 the hint was cut: "你的答案：数字、True/False、None、列表，或名…"."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "09_small.py").write_text(LESSON, encoding="utf-8")
    settings.put("course/ask_predictions", True)
    win = open_window(lessons / "09_small.py", size)
    win.set_language(language)
    win.commands.run_to_end()  # F8
    wait_paused(qtbot, win, H_LINE)
    bar = win.prediction_bar
    qtbot.mouseClick(bar._choice_buttons[0], Qt.LeftButton)  # on to the free-text question
    qtbot.waitUntil(lambda: bar.answer_edit.isVisible(), timeout=30_000)
    edit = bar.answer_edit
    room = edit.width() - 2 * edit.style().pixelMetric(edit.style().PixelMetric.PM_DefaultFrameWidth) - 8
    assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= room, (edit.placeholderText(), room)
    assert "MulBackward0" in edit.toolTip() and "None" in edit.toolTip()


def test_step_into_on_a_question_line_answers_first_then_steps_into_and_judges_back_on_the_line(qtbot, open_window):
    """Lesson 12 says to step into ``loss.backward()``, a line that asks first: F11 did nothing, the answer ran the
    whole line as Step Over, and ``Cube.backward`` was never seen."""
    settings.put("course/ask_predictions", True)
    window = open_window(Path(__file__).resolve().parent.parent / "lessons" / "12_custom_function.py", (1280, 800))
    bar = window.prediction_bar
    window.code_view.go_to_line(88)
    window.commands.run_to_cursor()
    qtbot.waitUntil(lambda: bar.asking and "y.grad_fn" in bar_text(window), timeout=30_000)
    bar.answered.emit("CubeBackward")
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    window.commands.run_to_cursor()
    qtbot.waitUntil(lambda: bar.asking and "x.grad" in bar_text(window), timeout=30_000)
    assert window.run.live["line"] == 88
    press(qtbot, window, Qt.Key.Key_F11)  # waits for the answer, and says what the answer will do
    assert window.run.live["line"] == 88 and bar.asking
    assert "the line runs with Step Into" in window.state_label.text()
    bar.answered.emit("tensor([3., 12., 0.75])")
    qtbot.waitUntil(lambda: window.run.live["function"] == "backward", timeout=30_000)
    assert window.run.live["stack"][1]["line"] == 88 and bar.verdict is None  # not judged in Cube.backward's frame
    press(qtbot, window, Qt.Key.Key_F11, Qt.KeyboardModifier.ShiftModifier)  # step out, back to the lesson
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert window.run.live["depth"] == 0 and window.run.live["line"] != 88
    assert bar.verdict_label.text().startswith("✓ Right: <code>x.grad</code>")


def test_enter_picks_the_choice_with_the_focus(qtbot, window):
    """The status bar says "answer the question above (Enter)"; on a multiple-choice question Enter did nothing."""
    press(qtbot, window, Qt.Key.Key_F8)
    wait_paused(qtbot, window, H_LINE)
    bar = window.prediction_bar
    assert "(Enter)" in window.state_label.text() and QApplication.focusWidget() is bar._choice_buttons[0]
    qtbot.keyClick(bar._choice_buttons[0], Qt.Key.Key_Tab)  # to the second choice
    assert QApplication.focusWidget() is bar._choice_buttons[1] and bar._choice_buttons[1].text() == "False"
    qtbot.keyClick(bar._choice_buttons[1], Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bar.verdict is not None, timeout=30_000)
    assert bar.verdict.answer == "False" and bar.verdict.right is False
