"""The window steps lesson 03 with F10 and Stop ends its process, on whichever OS part the process layer uses.

The portable leg of .ci/run runs it with the portable part forced (``GRADSTEP_PORTABLE=1``), and
tests/test_portable_withheld.py runs it with what Windows lacks withheld.
"""

from __future__ import annotations

from pathlib import Path

import psutil
from conftest import line_of
from PySide6.QtCore import Qt
from test_main_window import press, wait_ended, wait_paused

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "03_loops.py"


def test_lesson_03_steps_with_f10_and_stop_ends_its_process(qtbot, open_window):
    window = open_window(LESSON)
    window.activateWindow()  # the shortcuts are the window's: it must be the active one
    window.code_view.setFocus()
    qtbot.waitUntil(window.isActiveWindow)
    press(qtbot, window, Qt.Key.Key_F11)
    wait_paused(qtbot, window, 1)
    for marker in ("import torch", "from torch import nn", "from course import count_nodes"):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_paused(qtbot, window, line_of(str(LESSON), marker))
    assert window.step_label.text() == "step 4"
    process = psutil.Process(window.session._process.pid)
    window.act_stop.trigger()
    assert wait_ended(qtbot, window).status == "stopped"
    assert not process.is_running() or process.status() == psutil.STATUS_ZOMBIE
