"""When the editor's text is kept: soon after typing stops, and regularly while it goes on."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal


class AutosaveTimer(QObject):
    """Says when to keep the learner's edits.

    A quiet-period timer alone (restarted at every keystroke) never fires while the
    learner types steadily, so a crash would lose everything typed; a second timer,
    started by the first unkept edit and never restarted, bounds how old the kept copy
    can get.

    Parameters
    ----------
    parent
        The owner (the main window).
    quiet_ms
        Keep the edits this long after the last one.
    max_ms
        Keep them at least this often while editing goes on.
    """

    due = Signal()
    """The edits since the last keep should be kept now."""

    def __init__(self, parent: QObject | None = None, quiet_ms: int = 1500, max_ms: int = 4000) -> None:
        super().__init__(parent)
        self._quiet = QTimer(self, singleShot=True, interval=quiet_ms)
        self._longest = QTimer(self, singleShot=True, interval=max_ms)
        self._quiet.timeout.connect(self._fire)
        self._longest.timeout.connect(self._fire)

    def edited(self) -> None:
        """The text changed."""
        self._quiet.start()
        if not self._longest.isActive():
            self._longest.start()

    def stop(self) -> None:
        """The edits were kept (or dropped) some other way: nothing is due."""
        self._quiet.stop()
        self._longest.stop()

    def _fire(self) -> None:
        self.stop()
        self.due.emit()
