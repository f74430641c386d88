"""The call stack of the current pause: one row per lesson frame, innermost first.

Selecting a row asks for that frame's variables; double-clicking also shows its line.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.i18n import tr
from app.shown_step import Step


class CallStackView(QWidget):
    """A list of the paused lesson's frames."""

    frame_selected = Signal(int, int)
    """The learner picked a frame: its index in the stack (0 = innermost) and its line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setAlternatingRowColors(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self._filling = False
        self.list.currentRowChanged.connect(self._on_list_current_row_changed)
        self.list.setAccessibleName(tr("Call stack"))
        self.clear()

    def set_stack(self, stack: list[dict[str, Any]], selected: int = 0, cut: bool = False) -> None:
        """Show ``stack`` (innermost first) with row ``selected`` current; ``cut``: outer frames were left out."""
        self._filling = True
        self._stack = stack
        self._cut = cut
        self.list.clear()
        for depth, frame in enumerate(stack):
            name = frame["function"]
            label = f"{name}()" if name != "<module>" else tr("module level")
            item = QListWidgetItem(f"{label}  —  {tr('line {line}', line=frame['line'])}")
            item.setData(Qt.ItemDataRole.UserRole, frame["line"])
            item.setToolTip(tr("{file}, line {line}, depth {depth}", file=os.path.basename(frame["file"]),
                               line=frame["line"], depth=depth))
            self.list.addItem(item)
        if cut:
            more = QListWidgetItem(tr("… outer frames not shown"))
            more.setFlags(Qt.ItemFlag.NoItemFlags)  # not a frame: nothing to select
            more.setToolTip(tr("A pause reads the innermost {count} frames of a deep stack.", count=len(stack)))
            self.list.addItem(more)
        self.list.setCurrentRow(selected)
        self._filling = False

    def show_step(self, step: Step) -> None:
        """The stack of the step in view; a step that keeps the same stack (another frame picked) keeps the rows."""
        if not step.stack:
            self.clear()
        elif step.stack is not self._stack or step.stack_cut != self._cut:
            self.set_stack(step.stack, step.frame, step.stack_cut)

    def retranslate(self) -> None:
        """Show the rows again in the current language."""
        self.list.setAccessibleName(tr("Call stack"))
        if self._stack is not None:
            self.set_stack(self._stack, max(self.list.currentRow(), 0), self._cut)
        else:
            self.clear()

    def clear(self) -> None:
        """No pause: say so."""
        self._stack: list[dict[str, Any]] | None = None
        self._filling = True
        self.list.clear()
        idle = QListWidgetItem(tr("(the lesson is not paused)"))
        idle.setFlags(Qt.ItemFlag.NoItemFlags)  # not a frame; the list still takes the keyboard, to be read
        self.list.addItem(idle)
        self._filling = False

    def _on_list_current_row_changed(self, row: int) -> None:
        if self._filling or row < 0:
            return
        self.frame_selected.emit(row, self.list.item(row).data(Qt.ItemDataRole.UserRole))
