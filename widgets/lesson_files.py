"""The file the window edits: saving, autosaving, reverting a lesson's copy, the edit lock and the recent files.

Edits are never lost: a bundled lesson is edited as the learner's own copy in the data
folder (saved as it is typed), any other file's unsaved edits are kept beside it until saved
or discarded, and a file another GradStep window holds is read-only here, so neither window
overwrites the other's work.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QLockFile
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from app.i18n import N_, tr
from app.session import LessonFileError, read_lesson
from app.workspace import Workspace
from widgets import settings
from widgets.autosave_timer import AutosaveTimer
from widgets.code_view import CodeView

#: Edits are kept this long after the last keystroke...
AUTOSAVE_MS = 1500
#: ...and at least this often while typing goes on, so a crash loses at most these last seconds.
AUTOSAVE_MAX_MS = 4000
#: Why a file is read-only in this window (typing shows it; an English msgid).
ELSEWHERE_NOTE = N_("Read-only here: this file is open in another GradStep window, which keeps its edits")
Ask = QMessageBox.StandardButton


class LessonFiles:
    """The open file of ``window`` and what keeps its edits.

    Parameters
    ----------
    window
        The window: parent of the dialogs, its title names the file.
    workspace
        Where edits of lessons go.
    code_view
        The editor of the file's text.
    moved
        Called with the old and new path when saving a bundled lesson makes the learner's copy.
    """

    def __init__(self, window: QWidget, workspace: Workspace, code_view: CodeView,
                 moved: Callable[[Path, Path], None]) -> None:
        self.window = window
        self.workspace = workspace
        self.code_view = code_view
        self._moved = moved
        self.path: Path | None = None
        self.edited_elsewhere = False
        """Whether another window holds the open file's edit lock: then it is read-only here, never autosaved."""
        self._edit_lock: tuple[Path, QLockFile] | None = None
        self._revert_basis: tuple[Path | None, bool] = (None, False)
        self.autosave = AutosaveTimer(window, AUTOSAVE_MS, AUTOSAVE_MAX_MS)
        self.autosave.due.connect(self.autosave_due)

    def lock(self, path: Path) -> None:
        """Take the edit lock of ``path``, giving back the last file's (another window's lock: read-only here)."""
        lock_path = self.workspace.lock_path(path)
        if self._edit_lock is None or self._edit_lock[0] != lock_path:
            self.release()
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = QLockFile(str(lock_path))
            lock.setStaleLockTime(0)  # held as long as the window is open; a crashed window's lock is stale by its PID
            if lock.tryLock(0):
                self._edit_lock = (lock_path, lock)
        self.edited_elsewhere = self._edit_lock is None
        self.allow_editing()

    def release(self) -> None:
        if self._edit_lock is not None:
            self._edit_lock[1].unlock()
            self._edit_lock = None

    def allow_editing(self) -> None:
        """The code view editable (no run holds it), unless another window edits the file."""
        if self.edited_elsewhere:
            self.code_view.set_read_only(True, ELSEWHERE_NOTE)
        else:
            self.code_view.set_read_only(False)

    def modified(self) -> bool:
        return self.code_view.document().isModified()

    def save(self) -> Path | None:
        """Write the code view's text (bundled lessons to the learner's copy); returns the file written."""
        if self.path is None:
            return None
        target = self.workspace.save(self.path, self.code_view.source())
        self.autosave.stop()
        self.workspace.forget_unsaved(self.path)
        if target != self.path:
            old, self.path = self.path, target
            self._moved(old, target)
        self.code_view.document().setModified(False)
        self.update_title()
        return target

    def as_it_comes(self, source: str) -> bool:
        """Whether ``source`` is the text of a bundled lesson as it comes (no edit of the learner's in it)."""
        if self.path is None:
            return False
        original = self.path if self.workspace.is_bundled(self.path) else self.workspace.original_of(self.path)
        if original is None:
            return False
        try:
            text = read_lesson(str(original))
        except LessonFileError:
            return False
        return text.replace("\r\n", "\n").rstrip() == source.replace("\r\n", "\n").rstrip()

    def revert(self) -> Path | None:
        """Drop the learner's copy of a bundled lesson, when they agree; returns the original to show."""
        if self.path is None or self.workspace.original_of(self.path) is None:
            return None
        answer = QMessageBox.question(self.window, tr("Revert to original"),
                                      tr("Throw away your changes to this lesson and show the original?"))
        if answer != Ask.Yes:
            return None
        self.code_view.document().setModified(False)
        return self.workspace.revert(self.path)

    def autosave_due(self) -> None:
        """Keep the edits: a lesson's copy is saved, any other file's edits are kept beside it."""
        if self.path is None or not self.modified() or self.edited_elsewhere:
            return
        if self.workspace.is_bundled(self.path) or self.workspace.original_of(self.path):
            self.save()
            return
        self.workspace.keep_unsaved(self.path, self.code_view.source())

    def may_stop_for(self, path: Path) -> bool:
        """Whether the learner agrees to stop the active run to open ``path`` (the same file needs no asking)."""
        if self.path is None or path == self.path:
            return True
        answer = QMessageBox.question(
            self.window, tr("Stop the running lesson?"),
            tr("{running} is running. Stop it and open {name}?", running=self.path.name, name=path.name),
            Ask.Yes | Ask.Cancel)
        return answer == Ask.Yes

    def may_discard_changes(self) -> bool:
        """Whether the open file's edits are safe to leave: saved, kept, or discarded by the learner's choice."""
        if self.path is None or not self.modified():
            return True
        if self.workspace.is_bundled(self.path) or self.workspace.original_of(self.path):
            self.save()
            return True
        answer = QMessageBox.question(
            self.window, tr("Unsaved changes"),
            tr("{name} has changes that are not saved. Save them?", name=self.path.name),
            Ask.Save | Ask.Discard | Ask.Cancel)
        if answer == Ask.Save:
            self.save()
            return True
        if answer == Ask.Discard:
            self.workspace.forget_unsaved(self.path)
            self.code_view.document().setModified(False)
            return True
        return False

    def revertible(self) -> bool:
        """Whether the open file is a copy of a bundled lesson (Revert goes back to it); asked once per path."""
        if self._revert_basis[0] != self.path:
            self._revert_basis = (self.path, self.workspace.original_of(self.path) is not None)
        return self._revert_basis[1]

    def fill_recent_menu(self, menu: QMenu, open_file: Callable[[str], object]) -> None:
        menu.clear()
        recent = [p for p in settings.get("recent_files") if os.path.exists(p)]
        for path in recent:
            menu.addAction(os.path.basename(path), lambda p=path: open_file(p)).setToolTip(path)
        menu.setEnabled(bool(recent))

    def update_title(self) -> None:
        name = self.path.name if self.path else tr("no file")
        copy = tr(" (your copy)") if self.path and self.workspace.original_of(self.path) else ""
        self.window.setWindowTitle(f"{name}{copy}[*] — GradStep")
        self.window.setWindowModified(self.modified())
