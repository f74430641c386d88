"""The keys back to a window when a dialog over it closes, where no window manager hands them back."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget


class KeysBack(QObject):
    """Activates ``window`` after a dialog that blocked it closed, when that left no window active.

    A window manager gives activation back to the window under a closed dialog; in a kiosk
    session or under Xvfb there is none, and the first shortcut after "Stop it and open …?"
    went nowhere. Activation brings back the keyboard focus the window had.
    """

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window = window
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.WindowUnblocked:
            QTimer.singleShot(0, self._take_back)  # once the dialog has given up activation
        return False

    def _take_back(self) -> None:
        if QApplication.activeWindow() is None and self._window.isVisible():
            self._window.activateWindow()
