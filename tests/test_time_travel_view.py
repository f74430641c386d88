"""Stepping back and scrubbing the timeline in the main window, on a real lesson process."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit, QSlider
from test_graph_view import boxes
from test_main_window import press, wait_ended, wait_paused

LESSON = '''import torch
w = torch.ones(2, requires_grad=True)
total = 0
for i in range(3):
    total = total + i
    y = w * i
print("done", total)
'''


@pytest.fixture
def window(window_on):
    return window_on(LESSON, "loop.py")


def shown_value(win, name):
    index = win.variables_view.model.index_for_path(f":{name}")
    return index.siblingAtColumn(1).data() if index.isValid() else None


def step_n(qtbot, win, count):
    press(qtbot, win, Qt.Key.Key_F11)
    wait_paused(qtbot, win)
    for _ in range(count - 1):
        before = win.run.live["step"]
        press(qtbot, win, Qt.Key.Key_F11)
        qtbot.waitUntil(lambda b=before: win.session.state == "paused" and win.run.live["step"] > b)


def test_step_back_shows_the_values_they_had_then(qtbot, window):
    step_n(qtbot, window, 9)  # into the second pass of the loop
    live = window.run.live
    assert live["vars"]["total"]["value"] == 1 and shown_value(window, "total") == "1"
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back
    assert window.run.viewing == 7
    assert "Viewing the past" in window.state_label.text()
    assert window.timeline.is_past() and "(past)" in window.timeline.label_text()
    for _ in range(3):
        press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    past = window.run.history.snapshot(window.run.viewing)
    assert window.code_view.current_line() == past["line"]
    assert shown_value(window, "total") == str(past["vars"]["total"]["value"]) == "0"
    assert len(boxes(window.graph_view)) == len(past["graph_full"]["nodes"])


def test_dragging_the_timeline_moves_every_panel_and_live_resumes(qtbot, window):
    step_n(qtbot, window, 10)
    slider = window.timeline.findChild(QSlider, "timeline_slider")
    slider.setSliderPosition(4)
    slider.sliderMoved.emit(4)
    past = window.run.history.snapshot(4)
    assert window.run.viewing == 4 and window.code_view.current_line() == past["line"]
    assert set(n for n in past["vars"]) <= {"w", "total", "i", "y"}
    assert [shown_value(window, name) is not None for name in past["vars"]] == [True] * len(past["vars"])
    assert len(boxes(window.graph_view)) == len(past["graph_full"]["nodes"])
    # stepping from the past goes back to the live pause first, then steps for real
    live_step = window.run.live["step"]
    press(qtbot, window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: window.run.live["step"] == live_step + 1)
    assert window.run.viewing is None and not window.timeline.is_past()
    assert "Viewing the past" not in window.state_label.text()


def test_record_to_end_then_browse_the_whole_run(qtbot, window):
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)  # record to end
    wait_ended(qtbot, window)
    history = window.run.history
    assert len(history) >= 15  # every line, call and return of the run
    assert [entry[2] for entry in history.entries()][:3] == [1, 2, 3]
    qtbot.waitUntil(lambda: "done 3" in window.console.output.toPlainText())
    window.run.view(5)
    assert "Viewing the past" in window.state_label.text()
    assert "done 3" not in window.console.output.toPlainText()  # the output as it was then
    window.time_travel.bar.compare_requested.emit()
    assert "total" in window.time_travel.last_comparison
    window.run.go_live()
    qtbot.waitUntil(lambda: "done 3" in window.console.output.toPlainText())


def test_f10_on_a_past_step_of_a_finished_run_asks_before_a_new_run_replaces_the_recording(
        qtbot, window, monkeypatch):
    """F10 there started a new run at once and the recording being browsed was gone."""
    from PySide6.QtWidgets import QMessageBox

    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)  # record to end
    wait_ended(qtbot, window)
    run, steps = window.run, len(window.run.history)
    run.view(5)
    asked, answer = [], QMessageBox.StandardButton.Cancel
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kw: asked.append(args[2]) or answer)
    press(qtbot, window, Qt.Key.Key_F10)
    assert len(asked) == 1 and "Step 6 of the finished run is in view" in asked[0] and f"{steps} steps" in asked[0]
    assert window.run is run and run.viewing == 5 and len(run.history) == steps  # still browsable
    assert "Viewing the past" in window.state_label.text()
    answer = QMessageBox.StandardButton.Yes
    press(qtbot, window, Qt.Key.Key_F10)
    wait_paused(qtbot, window, 1)
    assert len(asked) == 2 and window.run is not run


def backward_from_the_panel(qtbot, window_on):
    """A window paused at line 4 of a small lesson, after b.backward() from the Backward panel; and the
    number of steps recorded before it."""
    window = window_on("import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\nb = (a * a).sum()\n"
                       "c = 1\nd = 2\n")
    window.code_view.go_to_line(4)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 4)
    steps_before = len(window.run.history)
    panel = window.backward_panel
    qtbot.waitUntil(lambda: panel.backward_tab.root_combo.findText("b") >= 0)
    panel.backward_tab.root_combo.setCurrentIndex(panel.backward_tab.root_combo.findText("b"))
    with qtbot.waitSignal(window.bridge.replied, timeout=30_000):
        qtbot.mouseClick(panel.backward_tab.backward_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(window.run.history) == steps_before + 1 and panel.table.rowCount() > 0)
    return window, steps_before


def test_a_backward_run_from_the_panel_is_a_step_that_diff_with_live_sees(qtbot, window_on):
    """Run backward() from the Backward panel, step back, Diff with live: it said "nothing changed"
    though a.grad went from None to values."""
    window, _ = backward_from_the_panel(qtbot, window_on)
    assert window.run.live["vars"]["a"]["grad"] is not None
    assert "action" in window.run.marks.values()  # a tick on the timeline
    window.act_step_back.trigger()  # Step Back (Shift+F10): to the pause before it
    assert window.run.history.snapshot(window.run.viewing)["vars"]["a"]["grad"] is None
    window.time_travel.bar.compare_requested.emit()
    assert "tensor a: .grad" in window.time_travel.last_comparison
    assert "nothing changed" not in window.time_travel.last_comparison


def test_a_past_step_before_a_backward_result_does_not_show_that_result(qtbot, window_on):
    """The Backward panel kept showing a.grad's new values on the steps before backward() ran."""
    window, _ = backward_from_the_panel(qtbot, window_on)
    panel = window.backward_panel
    assert panel.table.isVisibleTo(panel) and panel.results_title.isVisibleTo(panel)
    result_step = window.run.live_index + 1
    window.act_step_back.trigger()  # the pause before backward() ran
    assert not panel.table.isVisibleTo(panel) and not panel.results_title.isVisibleTo(panel)
    assert f"computed at step {result_step}, after the step in view" in panel.state_label.text()
    window.commands.go_live()
    assert panel.table.isVisibleTo(panel) and panel.results_title.isVisibleTo(panel) and panel.table.rowCount() > 0
    assert "computed at step" not in panel.state_label.text()


def test_a_past_step_shows_what_the_output_pane_held_at_that_step(qtbot, window):
    """The Output pane of a past step held only the lesson's prints: "▶ Running" and the console's
    answers of that step were gone, and later answers never belong there."""
    step_n(qtbot, window, 3)
    type_in_console(qtbot, window, "40 + 1")
    qtbot.waitUntil(lambda: "41" in window.console.output.toPlainText())
    live = window.console.output.toPlainText()
    assert "▶ Running loop.py" in live
    window.act_step_back.trigger()
    shown = window.console.output.toPlainText()
    assert "Output up to step 2" in shown and "▶ Running loop.py" in shown
    assert "41" not in shown  # typed at step 3
    window.commands.go_live()
    assert window.console.output.toPlainText() == live


def type_in_console(qtbot, win, text):
    win.console.input.setText(text)
    with qtbot.waitSignal(win.bridge.replied, timeout=30_000):
        qtbot.keyClick(win.console.input, Qt.Key.Key_Return)


def test_the_console_transcript_survives_a_look_at_the_past(qtbot, window):
    """Go to live after a step back lost what the console had said: the run's start, the learner's
    evaluations and their results."""
    step_n(qtbot, window, 9)
    type_in_console(qtbot, window, "total * 100")
    before = window.console.output.toPlainText()
    assert "▶ Running loop.py" in before and ">>> total * 100" in before and "100" in before.split(">>> total * 100")[1]
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back
    assert "Output up to step" in window.console.output.toPlainText()
    assert ">>> total * 100" not in window.console.output.toPlainText()
    window.act_go_live.trigger()
    assert window.console.output.toPlainText() == before


def test_a_console_statement_is_a_step_of_the_history_and_shows_in_variables(qtbot, window):
    """A statement typed in the console changed the lesson, but Variables kept the old values and
    stepping back could not see the change."""
    step_n(qtbot, window, 9)
    steps = len(window.run.history)
    type_in_console(qtbot, window, "total = 41")
    qtbot.waitUntil(lambda: shown_value(window, "total") == "41")
    assert len(window.run.history) == steps + 1 and window.run.marks[steps] == "action"
    assert window.run.live["changed_by"] == "console"
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert shown_value(window, "total") == "1"
    window.time_travel.bar.compare_requested.emit()
    assert "changed variables: total" in window.time_travel.last_comparison


def test_a_message_of_the_run_before_never_reaches_the_panels(qtbot, window):
    """Restart: a pause or output the old lesson process sent just before it was stopped must not be
    shown over the new run."""
    from app import messages as m

    step_n(qtbot, window, 3)
    old = window.session.generation
    stale = {**window.run.live, "line": 6, "step": 999}
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    wait_paused(qtbot, window)
    assert window.session.generation == old + 1
    fresh = window.run.live["step"]
    window.bridge._message_arrived.emit(old, m.Paused(stale))
    window.bridge._on_message_arrived(old, m.Output("stdout", "from the old run\n"))
    qtbot.wait(50)
    assert window.run.live["step"] == fresh and window.code_view.current_line() != 6
    assert "from the old run" not in window.console.output.toPlainText()


def test_when_a_recording_stops_at_its_limit_the_graph_shows_every_node_it_recorded(qtbot, window, monkeypatch):
    """Record to End that stopped at its step limit showed the graph of the last step only: the
    nodes made by the recorded lines were missing."""
    monkeypatch.setattr("widgets.run_commands.RECORD_LIMIT", 12)
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window)
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)  # record to end, 12 steps
    qtbot.waitUntil(lambda: window.session.state == "paused" and len(window.run.history) > 12)
    expected = {node["id"] for node in window.run.live_graph()["nodes"]}
    assert len(expected) >= 2  # y = w * i made nodes while recording
    # The view redraws on the event after the pause (under load that came after the wait above).
    qtbot.waitUntil(lambda: set(boxes(window.graph_view)) == expected, timeout=10_000)


def tinted(win):
    """The rows Variables tints as changed by the step that led to the one in view."""
    model = win.variables_view.model
    return {path.lstrip(":") for path in model.paths()
            if model.index_for_path(path).siblingAtColumn(1).data(Qt.ItemDataRole.BackgroundRole) is not None}


@pytest.fixture
def steps_window(window_on):
    """A window on a lesson whose every line changes one variable, but for a print."""
    return window_on("import torch\na = torch.ones(2)\nb = a * 2\nprint('b', b)\na.add_(1)\nc = b + 1\n"
                     "done = 1\n", "tint.py")


def test_the_changed_tint_says_what_the_step_that_led_here_changed_however_the_learner_arrived(qtbot, steps_window):
    """Drag the timeline from live back to a print: rows were tinted though the print changed
    nothing (compared with the live step shown before); Shift+F10 to the line before it: nothing
    tinted; back to live: every name that differed from that past step was tinted."""
    window = steps_window
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for line in range(2, 8):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line)
    assert [entry[2] for entry in window.run.history.entries()] == [1, 2, 3, 4, 5, 6, 7]
    assert tinted(window) == {"c"}  # line 6 made c
    slider = window.timeline.findChild(QSlider, "timeline_slider")
    slider.setSliderPosition(4)
    slider.sliderMoved.emit(4)  # line 5 in view: the print on line 4 led there
    assert window.run.viewing == 4 and window.code_view.current_line() == 5
    assert tinted(window) == set()
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back: line 3 led there
    assert window.run.viewing == 3 and tinted(window) == {"b"}
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.run.viewing is None and tinted(window) == {"c"}  # as before the look at the past
    window.run.view(5)  # a.add_(1) led there: changed in place, not a new name
    assert tinted(window) == {"a"}
    tip = window.variables_view.model.index_for_path(":a").data(Qt.ItemDataRole.ToolTipRole)
    assert "Changed by the step that led here: changed in place (_version 1)" in tip


def test_closing_the_diff_dialog_gives_the_keys_back_to_the_window(qtbot, window):
    """The first Ctrl+Shift+F10 after closing "Diff with live" did nothing, and each click made one more dialog."""
    from PySide6.QtWidgets import QApplication, QDialog

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    step_n(qtbot, window, 6)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back
    for _ in range(2):
        window.time_travel.bar.compare_requested.emit()
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, QDialog) and dialog.findChild(QPlainTextEdit).toPlainText().startswith("From step 5")
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda shown=dialog: not shown.isVisible())
        assert len(window.findChildren(QDialog)) == 1  # shown again, not made again
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    assert QApplication.focusWidget() is not None and QApplication.focusWidget().window() is window
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier
                   | Qt.KeyboardModifier.ShiftModifier)  # Go to Live, sent where the keys go now
    assert window.run.viewing is None and not window.timeline.is_past()
