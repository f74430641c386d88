"""Stepping back and scrubbing the timeline in the main window, on a real lesson process."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSlider
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
        before = win._last_snapshot["step"]
        press(qtbot, win, Qt.Key.Key_F11)
        qtbot.waitUntil(lambda b=before: win.session.state == "paused" and win._last_snapshot["step"] > b)


def test_step_back_shows_the_values_they_had_then(qtbot, window):
    step_n(qtbot, window, 9)  # into the second pass of the loop
    live = window._last_snapshot
    assert live["vars"]["total"]["value"] == 1 and shown_value(window, "total") == "1"
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)  # step back
    assert window.time_travel.viewing == 7
    assert "Viewing the past" in window.state_label.text()
    assert window.timeline.is_past() and "(past)" in window.timeline.label_text()
    for _ in range(3):
        press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    past = window.time_travel.history.snapshot(window.time_travel.viewing)
    assert window.code_view.current_line() == past["line"]
    assert shown_value(window, "total") == str(past["vars"]["total"]["value"]) == "0"
    assert len(boxes(window.graph_view)) == len(past["graph_full"]["nodes"])


def test_dragging_the_timeline_moves_every_panel_and_live_resumes(qtbot, window):
    step_n(qtbot, window, 10)
    slider = window.timeline.findChild(QSlider, "timeline_slider")
    slider.setSliderPosition(4)
    slider.sliderMoved.emit(4)
    past = window.time_travel.history.snapshot(4)
    assert window.time_travel.viewing == 4 and window.code_view.current_line() == past["line"]
    assert set(n for n in past["vars"]) <= {"w", "total", "i", "y"}
    assert [shown_value(window, name) is not None for name in past["vars"]] == [True] * len(past["vars"])
    assert len(boxes(window.graph_view)) == len(past["graph_full"]["nodes"])
    # stepping from the past goes back to the live pause first, then steps for real
    live_step = window._last_snapshot["step"]
    press(qtbot, window, Qt.Key.Key_F11)
    qtbot.waitUntil(lambda: window._last_snapshot["step"] == live_step + 1)
    assert window.time_travel.viewing is None and not window.timeline.is_past()
    assert "Viewing the past" not in window.state_label.text()


def test_record_to_end_then_browse_the_whole_run(qtbot, window):
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)  # record to end
    wait_ended(qtbot, window)
    history = window.time_travel.history
    assert len(history) >= 15  # every line, call and return of the run
    assert [entry[2] for entry in history.entries()][:3] == [1, 2, 3]
    qtbot.waitUntil(lambda: "done 3" in window.console.output.toPlainText())
    window.time_travel.show(5)
    assert "Viewing the past" in window.state_label.text()
    assert "done 3" not in window.console.output.toPlainText()  # the output as it was then
    window.time_travel.bar.compare_requested.emit()
    assert "total" in window.time_travel.last_comparison
    window.time_travel.go_live()
    qtbot.waitUntil(lambda: "done 3" in window.console.output.toPlainText())


def test_a_backward_run_from_the_panel_is_a_step_that_diff_with_live_sees(qtbot, window_on):
    """Run backward() from the Backward panel, step back, Diff with live: it said "nothing changed"
    though a.grad went from None to values."""
    window = window_on("import torch\na = torch.tensor([1.0, 2.0], requires_grad=True)\nb = (a * a).sum()\n"
                       "c = 1\nd = 2\n")
    window.code_view.go_to_line(4)
    window.run_to_cursor()
    wait_paused(qtbot, window, 4)
    steps_before = len(window.time_travel.history)
    panel = window.backward_panel
    qtbot.waitUntil(lambda: panel.root_combo.findText("b") >= 0)
    panel.root_combo.setCurrentIndex(panel.root_combo.findText("b"))
    with qtbot.waitSignal(window.bridge.replied, timeout=30_000):
        qtbot.mouseClick(panel.backward_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: len(window.time_travel.history) == steps_before + 1)
    assert window._last_snapshot["vars"]["a"]["grad"] is not None
    assert "action" in window.time_travel.marks.values()  # a tick on the timeline
    window.act_step_back.trigger()  # Step Back (Shift+F10): to the pause before it
    assert window.time_travel.history.snapshot(window.time_travel.viewing)["vars"]["a"]["grad"] is None
    window.time_travel.bar.compare_requested.emit()
    assert "tensor a: .grad" in window.time_travel.last_comparison
    assert "nothing changed" not in window.time_travel.last_comparison
