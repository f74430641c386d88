"""Every control says what it is to a screen reader, in English and 中文, and the graph is readable as a table.

Lesson 03 stepped into its loop; each dock is brought to the front in turn, and every visible
widget that takes the keyboard is read through ``QAccessible.queryAccessibleInterface`` as an
assistive technology reads it.
"""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QWidget
from test_main_window import wait_paused

from app.workspace import LESSONS_DIR


def unnamed(window) -> list[str]:
    """The visible widgets that take the keyboard and have no accessible name."""
    missing = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.focusPolicy() == Qt.FocusPolicy.NoFocus:
            continue
        interface = QAccessible.queryAccessibleInterface(widget)
        if interface is None or not interface.text(QAccessible.Text.Name).strip():
            parent = widget.parentWidget()
            missing.append(f"{type(widget).__name__}:{widget.objectName()} in "
                           f"{type(parent).__name__}:{parent.objectName() if parent else ''}")
    return missing


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_control_without_a_name_and_one_table_row_per_graph_node(qtbot, open_window, language):
    lesson = LESSONS_DIR / "03_loops.py"
    window = open_window(lesson)
    window.set_language(language)
    window.act_ask_predictions.setChecked(False)
    window.toggle_predictions()
    lines = lesson.read_text(encoding="utf-8").splitlines()
    window.code_view.toggle_breakpoint(next(i for i, text in enumerate(lines, 1)
                                            if re.match(r"\s+h_t = torch.tanh", text)))
    window.act_run_to_end.trigger()
    wait_paused(qtbot, window)
    window.act_start.trigger()  # the second pass of the loop
    wait_paused(qtbot, window)
    missing = set()
    for name in ("graph", "nodes", "console", "watch", "variables", "backward", "inspector", "stack", "notes",
                 "lessons"):
        window.docks[name].raise_()
        qtbot.wait(10)
        missing.update(unnamed(window))
    assert not missing, sorted(missing)
    assert window.node_list.row_count() == len(window.graph_model.nodes) == len(window.graph_view._scene.drawn) > 10
