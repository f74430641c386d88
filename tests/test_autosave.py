"""The learner's edits are kept while they type, and a killed app loses only the last seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from PySide6.QtCore import QTimer

from app.progress import Progress
from app.workspace import Workspace
from widgets.autosave_timer import AutosaveTimer
from widgets.lesson_files import AUTOSAVE_MAX_MS, AUTOSAVE_MS

ROOT = Path(__file__).resolve().parent.parent

#: A real window in its own process, on a user's file, typing one letter every 0.5 s (driven
#: by a QTimer in its own event loop) and printing each letter with the time it was typed.
TYPIST = """
import sys, time
from pathlib import Path
from PySide6.QtCore import QTimer, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
from app.session import Session
from app.progress import Progress
from app.workspace import Workspace
from widgets import settings
from widgets.main_window import MainWindow

folder = Path(sys.argv[1])
settings.use_file(str(folder / "settings.ini"))
app = QApplication([])
session = Session(warm_spare=False)
window = MainWindow(session, Workspace(folder / "data"))
window.show()
window.open_file(folder / "own.py")
QTest.keyClick(window.code_view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
letters = iter("abcdefghijklmnopqrstuvwxyz" * 4)

def type_one():
    letter = next(letters)
    QTest.keyClick(window.code_view, letter)
    print(letter, time.monotonic(), flush=True)

typist = QTimer(interval=500)
typist.timeout.connect(type_one)
typist.start()
app.exec()
"""


def test_the_policy_is_within_the_promise():
    assert AUTOSAVE_MS <= 2000 and AUTOSAVE_MAX_MS <= 5000


def test_steady_editing_is_kept_regularly_and_once_more_when_it_stops(qtbot):
    autosave = AutosaveTimer(quiet_ms=300, max_ms=400)
    kept = []
    autosave.due.connect(lambda: kept.append(True))
    typist = QTimer(interval=50)
    typist.timeout.connect(autosave.edited)
    typist.start()
    qtbot.waitUntil(lambda: len(kept) >= 2, timeout=5000)  # a quiet-period timer alone: never
    typist.stop()
    autosave.edited()  # the last keystroke
    with qtbot.waitSignal(autosave.due, timeout=2000):
        pass
    with qtbot.assertNotEmitted(autosave.due, wait=600):  # nothing new: nothing due
        pass


def test_stop_cancels_what_was_due(qtbot):
    autosave = AutosaveTimer(quiet_ms=100, max_ms=200)
    autosave.edited()
    autosave.stop()
    with qtbot.assertNotEmitted(autosave.due, wait=400):
        pass


def test_a_killed_window_keeps_all_but_the_last_seconds_of_steady_typing(tmp_path):
    original = "x = 1\n# "
    own = tmp_path / "own.py"
    own.write_text(original, encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with open(tmp_path / "stderr.txt", "w") as stderr:
        child = subprocess.Popen([sys.executable, "-c", TYPIST, str(tmp_path)], cwd=str(ROOT), env=env,
                                 stdout=subprocess.PIPE, stderr=stderr, text=True)
        typed: list[tuple[str, float]] = []
        try:
            while len(typed) < 20:  # 10 s of typing
                line = child.stdout.readline()
                assert line, f"the window died: {(tmp_path / 'stderr.txt').read_text()}"
                letter, when = line.split()
                typed.append((letter, float(when)))
        finally:
            killed_at = time.monotonic()
            child.send_signal(signal.SIGKILL)
            child.wait()
            child.stdout.close()
    recovered = Workspace(tmp_path / "data").unsaved(own, original)
    assert recovered is not None and recovered.startswith(original)
    letters = "".join(letter for letter, _ in typed)
    kept = recovered[len(original):]
    assert letters.startswith(kept)
    must_keep = sum(1 for _, when in typed if when < killed_at - 5)
    assert len(kept) >= must_keep >= 9


def test_a_second_window_on_the_same_file_never_overwrites_the_first_ones_autosave(qtbot, open_window, tmp_path):
    """Two windows on one settings folder: the second one's autosave went over the first one's edits."""
    own = tmp_path / "own.py"
    own.write_text("x = 1\n", encoding="utf-8")
    first, second = open_window(own), open_window(own)
    qtbot.keyClicks(first.code_view, "# first ")
    first.files.autosave_due()
    recovery = first.workspace.recovery_path(own)
    kept = recovery.read_text(encoding="utf-8")
    assert "# first" in kept
    qtbot.keyClicks(second.code_view, "# second ")
    second.files.autosave_due()
    assert recovery.read_text(encoding="utf-8") == kept
    assert "# second" not in second.code_view.source() and second.code_view.isReadOnly()
    assert not second.act_save.isEnabled()
    assert "open in another GradStep window" in second.state_label.text()
    first.save()
    first.close()  # its lock goes with it: the file is the second window's to edit now
    second.open_file(own)
    assert not second.files.edited_elsewhere and not second.code_view.isReadOnly() and second.act_save.isEnabled()


def test_two_windows_keep_each_others_progress(tmp_path):
    """Each window wrote the progress it had read at its start, dropping what the other had recorded."""
    path = tmp_path / "progress.json"
    first, second = Progress(path), Progress(path)
    first.record_prediction("01_x", "a", True)
    second.record_prediction("01_x", "b", False)
    first.record_checks("01_x", {"c": True})
    stored = Progress(path).of("01_x")
    assert (stored.answered, stored.right, stored.passed) == (2, 1, 1)
