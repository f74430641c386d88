"""Starting the GradStep application: the QApplication, the session and the main window."""

from __future__ import annotations

import gc
import os
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.lesson_format import list_lessons
from app.session import Session
from app.workspace import LESSONS_DIR
from widgets.gui_gc import collect_on_gui_thread
from widgets.main_window import MainWindow

#: Set to a number of milliseconds to quit that long after the window is up (CI's smoke start).
EXIT_AFTER_ENV = "GRADSTEP_EXIT_AFTER_MS"


def run_app(path: str | None = None) -> int:
    """Open the window on ``path`` (or the last file, or the first lesson) and run the event loop."""
    app = QApplication.instance() or QApplication(sys.argv)
    app.setApplicationName("GradStep")
    app.setOrganizationName("GradStep")
    session = Session()
    window = MainWindow(session)
    window.show()
    # The app's own objects (Qt wrappers, the lesson list) live until it quits: keeping them
    # out of the collector's scans stops full collections from stalling a step.
    gc.freeze()
    collect_on_gui_thread()  # never on the session's reader threads, where a Qt object must not die
    first = path or _default_file()
    if first:
        window.open_file(first)
    exit_after = os.environ.get(EXIT_AFTER_ENV)
    if exit_after:
        QTimer.singleShot(int(exit_after), window.close)
    code = app.exec()
    session.close()
    return code


def _default_file() -> str | None:
    from widgets import settings

    last = settings.get("last_file")
    if last and os.path.isfile(last):
        return last
    lessons = list_lessons(LESSONS_DIR)
    return str(lessons[0].path) if lessons else None
