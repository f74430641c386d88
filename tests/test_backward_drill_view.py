"""The drill in the Backward panel's replay, on real lesson runs: asked before each backward function fires,
answered right or wrong, skipped, kept in the progress, readable at 1280×800 in both languages."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from test_i18n_window import english_words
from test_layout import in_sight, run_to

from app.progress import Progress
from app.workspace import LESSONS_DIR

#: loss = (x * w * c).sum(): SumBackward0 sends [1, 1] to the second MulBackward0, which sends c = [5, 6]
#: to x * w and None to c (it needs no gradient), then the first sends [5, 6] * w = [15, 24] to x and
#: [5, 6] * x = [5, 12] to w.
SOURCE = """\
import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
c = torch.tensor([5.0, 6.0])
loss = (x * w * c).sum()
print("loss", loss.item())
"""
PRINT_LINE = 6


def run_backward(qtbot, window, line):
    """Run to ``line``, click Run backward() in the Backward panel, wait for its replay."""
    run_to(qtbot, window, line)
    window.docks["backward"].raise_()
    panel = window.backward_panel
    tab = panel.backward_tab
    qtbot.waitUntil(lambda: tab.root_combo.currentText() == "loss" and tab.backward_button.isEnabled())
    with qtbot.waitSignal(window.bridge.replied, timeout=30_000):
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.replay_bar.isVisible() and panel.form.replay.position == -1)
    return panel


@pytest.fixture
def drilled(qtbot, window_on):
    """The Backward panel after Run backward() on :data:`SOURCE`, the Drill ticked."""
    window = window_on(SOURCE)
    panel = run_backward(qtbot, window, PRINT_LINE)
    assert [e["name"] for e in panel.form.replay.entries] == ["SumBackward0", "MulBackward0", "MulBackward0",
                                                   "AccumulateGrad", "AccumulateGrad"]
    assert not panel.replay_bar.drill_check.isChecked()
    tip = panel.replay_bar.drill_check.toolTip()
    assert "saved tensors" in tip and "AccumulateGrad" in tip
    qtbot.mouseClick(panel.replay_bar.drill_check, Qt.MouseButton.LeftButton)
    assert panel.replay_bar.drill_check.isChecked()
    return window, panel, panel.replay_bar.drill_view


def stored(window, lesson="lesson"):
    return Progress(Path(window.workspace.data_dir) / "progress.json").of(lesson)


def drills(window) -> tuple[int, int]:
    """(right, answered) of the drill in the progress file."""
    progress = stored(window)
    return progress.drills_right, progress.drills_answered


def answer(qtbot, panel, text):
    view = panel.replay_bar.drill_view
    view.answer_edit.clear()
    qtbot.keyClicks(view.answer_edit, text)
    qtbot.keyClick(view.answer_edit, Qt.Key.Key_Return)


def step(qtbot, panel):
    qtbot.mouseClick(panel.replay_bar.forward_button, Qt.MouseButton.LeftButton)


def test_a_right_answer_is_judged_right_recorded_and_the_node_fires(qtbot, drilled):
    window, panel, view = drilled
    marked = []
    window.graph_model.active_changed.connect(marked.append)
    step(qtbot, panel)
    assert view.asking and view.question_label.isVisible()
    assert panel.form.replay.position == -1  # the node has not fired yet
    assert marked == [panel.form.replay.entries[0]["id"]]  # the graph marks the node asked
    assert view.question_label.text().splitlines() == [
        "Before SumBackward0 fires: it receives grad_output = 1. What does it send to its inputs?",
        "Saved for backward: _saved_self_sym_sizes = [2]",
        "1 input gradient: grad_input[0] → MulBackward0",
    ]
    assert view.answer_edit.hasFocus()
    answer(qtbot, panel, "[1, 1]")
    assert not view.asking and view.verdict_label.text() == "✓ Right: SumBackward0 sends [1, 1]."
    assert panel.form.replay.position == 0 and panel.replay_bar.step_label.text().startswith("1/5 SumBackward0")
    assert drills(window) == (1, 1)


def test_a_wrong_answer_is_judged_wrong_with_the_right_values_shown(qtbot, drilled):
    window, panel, view = drilled
    step(qtbot, panel)
    answer(qtbot, panel, "[1, 1]")
    step(qtbot, panel)
    lines = view.question_label.text().splitlines()
    assert lines[0] == "Before MulBackward0 fires: it receives grad_output = [1, 1]. What does it send to its inputs?"
    assert "[5, 6] (c)" in lines[1]
    assert lines[2] == "2 input gradients: grad_input[0] and grad_input[1]"  # c has no node: not paired
    answer(qtbot, panel, "[5, 6], [1, 1]")  # c needs no gradient: None
    verdict = view.verdict_label.text()
    assert verdict.startswith("✗ Not quite: MulBackward0 sends [5, 6], None; ")
    assert "grad_input[1] is None" in verdict
    assert panel.form.replay.position == 1
    step(qtbot, panel)
    answer(qtbot, panel, "[5, 12], [15, 24]")  # x and w swapped
    assert "✗ Not quite: MulBackward0 sends [15, 24], [5, 12]; the right gradients in the wrong order" \
        in view.verdict_label.text()
    assert drills(window) == (1, 3)


def test_an_unreadable_answer_is_explained_and_nothing_is_judged(qtbot, drilled):
    window, panel, view = drilled
    step(qtbot, panel)
    answer(qtbot, panel, "[1, 1")
    assert view.asking and view.error_label.isVisible() and "cannot be read" in view.error_label.text()
    assert view.verdict_label.isHidden() and panel.form.replay.position == -1
    answer(qtbot, panel, "2*x")
    assert "is not a number" in view.error_label.text()
    assert drills(window) == (0, 0)


def test_skip_and_esc_go_on_without_a_record_and_say_skipped(qtbot, drilled):
    window, panel, view = drilled
    step(qtbot, panel)
    qtbot.mouseClick(view.skip_button, Qt.MouseButton.LeftButton)
    assert not view.asking and view.verdict_label.text() == "Skipped SumBackward0: not judged, nothing recorded."
    assert panel.form.replay.position == 0
    step(qtbot, panel)
    assert view.asking
    qtbot.keyClick(view.answer_edit, Qt.Key.Key_Escape)
    assert not view.asking and view.verdict_label.text().startswith("Skipped MulBackward0")
    assert panel.form.replay.position == 1
    assert drills(window) == (0, 0)


def test_leaves_are_not_asked_and_going_back_does_not_ask_again(qtbot, drilled):
    window, panel, view = drilled
    for text in ("[1, 1]", "[5, 6], None", "[15, 24], [5, 12]"):
        step(qtbot, panel)
        assert view.asking
        answer(qtbot, panel, text)
        assert view.verdict_label.text().startswith("✓ Right")
    for position in (3, 4):  # the AccumulateGrad leaves fire at once
        step(qtbot, panel)
        assert not view.asking and panel.form.replay.position == position
        assert "AccumulateGrad" in panel.replay_bar.step_label.text()
    step(qtbot, panel)
    assert panel.replay_bar.step_label.text().startswith("Done")
    qtbot.mouseClick(panel.replay_bar.back_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.replay_bar.back_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.replay_bar.back_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(panel.replay_bar.back_button, Qt.MouseButton.LeftButton)
    assert panel.form.replay.position == 1
    step(qtbot, panel)
    assert not view.asking and panel.form.replay.position == 2  # answered already
    qtbot.mouseClick(panel.replay_bar.restart_button, Qt.MouseButton.LeftButton)
    step(qtbot, panel)
    assert view.asking  # a restart asks again
    qtbot.mouseClick(panel.replay_bar.drill_check, Qt.MouseButton.LeftButton)  # the drill off: the question goes
    assert not view.asking
    step(qtbot, panel)
    assert panel.form.replay.position == 0 and not view.asking
    assert drills(window) == (3, 3)


def test_play_waits_for_each_answer_and_plays_on(qtbot, drilled):
    window, panel, view = drilled
    panel.replay_bar.speed_slider.setValue(panel.replay_bar.speed_slider.maximum())
    qtbot.mouseClick(panel.replay_bar.play_button, Qt.MouseButton.LeftButton)
    for text in ("[1, 1]", "[5, 6], None", "[15, 24], [5, 12]"):
        qtbot.waitUntil(lambda: view.asking, timeout=5000)
        assert not panel.form.replay.playing
        answer(qtbot, panel, text)
        assert panel.form.replay.playing  # it was playing: it plays on
    qtbot.waitUntil(lambda: panel.form.replay.position == len(panel.form.replay.entries), timeout=5000)
    assert not panel.form.replay.playing and not view.asking
    assert drills(window) == (3, 3)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_question_reads_whole_at_1280_and_the_lessons_list_keeps_the_score(qtbot, open_window, language):
    lesson = LESSONS_DIR / "01_dynamic_graphs.py"
    window = open_window(lesson, (1280, 800))
    window.set_language(language)
    lines = lesson.read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, 1) if text.startswith('print("nodes behind loss:"'))
    panel = run_backward(qtbot, window, line)
    assert panel.height() < 360  # the short bottom strip
    panel.replay_bar.drill_check.click()
    step(qtbot, panel)
    view = panel.replay_bar.drill_view
    assert view.asking

    def readable():
        for label in (view.question_label, panel.replay_bar.step_label):
            assert label.height() >= label.heightForWidth(label.width()), label.text()  # every line shows
        for widget in (view, view.answer_edit, view.check_button, panel.replay_bar.forward_button):
            assert in_sight(widget, panel._scroll), widget

    qtbot.waitUntil(readable)  # once laid out
    question = view.question_label.text()
    edit = view.answer_edit
    assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= edit.width() - 12
    if language == "zh":
        assert "SumBackward0 执行之前" in question and view.check_button.text() == "核对"
        assert panel.replay_bar.drill_check.text() == "自测"
        texts = [question, edit.placeholderText(), view.skip_button.text(), view.skip_button.toolTip(),
                 view.check_button.toolTip(), panel.replay_bar.drill_check.toolTip()]
        assert [word for text in texts for word in english_words(text) if word != "Esc"] == []  # a key, as Enter
    else:
        assert question.startswith("Before SumBackward0 fires")
    answer(qtbot, panel, "[1, 1, 1]")  # the sum's gradient: ones, one per element of c
    assert view.verdict_label.text().startswith("✓")
    assert language == "en" or english_words(view.verdict_label.text()) == []
    row = next(window.lesson_browser.list.item(r).text() for r in range(window.lesson_browser.list.count())
               if window.lesson_browser.list.item(r).text().startswith("01"))
    assert ("自测正确 1/1" if language == "zh" else "drills right 1/1") in row
    assert stored(window, "01_dynamic_graphs").drills_right == 1
