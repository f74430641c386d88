"""A learner who uses no mouse walks a lesson: steps, selects a node, follows an edge, runs backward(), drills.

Every input below is a key event sent to whatever has the keyboard focus, as a keyboard-only
learner (or a screen reader user) would press it.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPlainTextEdit

from app.workspace import LESSONS_DIR
from widgets import settings

ALT = Qt.KeyboardModifier.AltModifier


def press(qtbot, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """One key, to the widget with the keyboard focus (the window when none has it)."""
    target = QApplication.focusWidget() or QApplication.activeWindow()
    qtbot.keyClick(target, key, modifier)


def tab_to(qtbot, widget, limit: int = 80) -> None:
    """Shift+Tab, then Tab, until ``widget`` has the keyboard focus (it may be just before the focus)."""
    for key in (Qt.Key.Key_Backtab, Qt.Key.Key_Tab):
        for _ in range(8 if key == Qt.Key.Key_Backtab else limit):
            if QApplication.focusWidget() is widget:
                return
            press(qtbot, key)
    raise AssertionError(f"Tab never reached {widget!r}; focus on {QApplication.focusWidget()!r}")


def step_to(qtbot, window, line: int) -> None:
    """F10 until the run is paused on ``line``."""
    for _ in range(150):
        if window.session.state == "paused" and window.run.live["line"] == line:
            return
        before = window.run.live_index if window.run else -1
        press(qtbot, Qt.Key.Key_F10)
        qtbot.waitUntil(lambda b=before: window.run is not None and window.run.live_index > b
                        and window.session.state == "paused", timeout=30_000)
    raise AssertionError(f"never paused on line {line}")


@pytest.mark.parametrize("stem", ["03_loops", "07_backward"])
def test_a_lesson_by_keyboard_alone(qtbot, open_window, tmp_path, stem):
    """Step to the lesson's first ``loss.backward()``, walk the graph from the newest node along an edge and
    back, Run backward() from the Backward panel, and answer the drill at three nodes."""
    settings.use_file(str(tmp_path / "settings.ini"))
    settings.put("course/ask_predictions", False)
    lesson = LESSONS_DIR / f"{stem}.py"
    window = open_window(lesson)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    lines = lesson.read_text(encoding="utf-8").splitlines()
    step_to(qtbot, window, next(i for i, text in enumerate(lines, 1) if text.startswith("loss.backward()")))
    graph = window.graph_model
    assert len(graph.nodes) >= 4

    press(qtbot, Qt.Key.Key_5, ALT)  # View > Go To Panel > Graph nodes
    table = window.node_list.table
    assert QApplication.focusWidget() is table
    press(qtbot, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)  # the last row: the newest node
    selected = graph.selected
    assert selected == graph.creation_order()[-1] and graph.nodes[selected]["name"] == "SumBackward0"  # loss's
    press(qtbot, Qt.Key.Key_Down, ALT)  # along the edge to its input
    assert graph.selected == graph.inputs(selected)[0]
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details")  # the drawing shows the same node
    assert details.toPlainText().startswith(graph.nodes[graph.selected]["name"])
    press(qtbot, Qt.Key.Key_Up, ALT)  # and back to the consumer
    assert graph.selected == selected
    press(qtbot, Qt.Key.Key_4, ALT)  # the drawing itself walks with the arrows alone
    assert QApplication.focusWidget().objectName() == "graph_canvas"
    press(qtbot, Qt.Key.Key_Down)
    assert graph.selected == graph.inputs(selected)[0]
    press(qtbot, Qt.Key.Key_Up)
    assert graph.selected == selected
    press(qtbot, Qt.Key.Key_Return)  # Enter reads the node's details
    assert QApplication.focusWidget().objectName() == "graph_details"

    press(qtbot, Qt.Key.Key_7, ALT)  # the Backward panel
    panel = window.backward_panel
    tab_to(qtbot, panel.backward_tab.backward_button)
    press(qtbot, Qt.Key.Key_Space)  # Run backward()
    qtbot.waitUntil(lambda: panel.form.shown is not None and panel.form.shown[0] == "backward", timeout=30_000)
    bar = panel.replay_bar
    tab_to(qtbot, bar.drill_check)
    press(qtbot, Qt.Key.Key_Space)
    assert bar.drill_check.isChecked() and bar.isVisible()  # moving the bar for the drill hid it
    asked, view = 0, bar.drill_view
    for _ in range(12):
        if asked == 3:
            break
        tab_to(qtbot, bar.forward_button)
        press(qtbot, Qt.Key.Key_Space)
        if view.asking:
            asked += 1
            assert QApplication.focusWidget() is view.answer_edit  # the answer takes the keyboard at once
            press(qtbot, Qt.Key.Key_1)
            press(qtbot, Qt.Key.Key_Return)
            qtbot.waitUntil(lambda: not view.asking)
            assert view.verdict_label.text()
    assert asked == 3, f"the drill asked {asked} node(s)"
