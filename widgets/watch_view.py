"""The watch list: expressions the main window re-evaluates at every pause, shown one per row.

Features
--------
- Expression | Value | Stop on change columns; the value is one dense line (``tensor[2,3] f32
  μ=0.12 σ=1.1 grad_fn=MulBackward0``, a scalar's repr, an error's type and message in red).
- Add with the entry line (Enter) or the Add button; edit with a double-click (or F2);
  remove with the Delete key or the context menu.
- A value that differs from the one of the previous pause is highlighted.
- "Stop on change" per expression: a running lesson stops where a ticked expression's value
  changes, compared as the highlight compares (:mod:`app.value_fingerprint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLineEdit, QPushButton, QTreeView, QVBoxLayout, QWidget

from app.i18n import N_, error_texts, tr
from app.value_fingerprint import result_fingerprint
from app.value_text import result_text
from widgets.colours import change_highlight, readable_color


@dataclass
class _Watch:
    expression: str
    stop_on_change: bool = False
    result: dict[str, Any] | None = None
    fingerprint: Any = None
    changed: bool = False


class WatchModel(QAbstractTableModel):
    """The watch expressions and their last results, one row each.

    Parameters
    ----------
    parent : QObject, optional
        The Qt parent.
    """

    EXPRESSION, VALUE, STOP = range(3)
    _HEADERS = (N_("Expression"), N_("Value"), N_("Stop on change"))

    edited = Signal()
    """The learner edited an expression in place."""

    stop_toggled = Signal()
    """The learner ticked or cleared a "Stop on change" box."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.watches: list[_Watch] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.watches)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return tr(self._HEADERS[section])
        if role == Qt.ItemDataRole.ToolTipRole and section == self.STOP:
            return tr("Stop a running lesson when this value changes")
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.column() == self.EXPRESSION:
            flags |= Qt.ItemFlag.ItemIsEditable
        elif index.column() == self.STOP:
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        watch = self.watches[index.row()]
        column = index.column()
        if column == self.EXPRESSION and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return watch.expression
        if column == self.STOP and role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if watch.stop_on_change else Qt.CheckState.Unchecked
        if column == self.STOP and role == Qt.ItemDataRole.ToolTipRole:
            return tr("Stop a running lesson when this value changes")
        if column != self.VALUE:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return "…" if watch.result is None else result_text(watch.result)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(watch)
        if role == Qt.ItemDataRole.ForegroundRole:
            if watch.result is None:
                return QPalette().color(QPalette.ColorRole.PlaceholderText)
            if not watch.result.get("ok"):
                return readable_color("#c62828", "#ff8a80")
        if role == Qt.ItemDataRole.BackgroundRole and watch.changed:
            return change_highlight()
        return None

    def _tooltip(self, watch: _Watch) -> str:
        if watch.result is None:
            return tr("Evaluated at the next pause")
        lines = [result_text(watch.result)]
        explanation = error_texts(watch.result["error"])[0] if watch.result.get("error") else None
        if explanation:
            lines.append(explanation)
        if watch.changed:
            lines.append(tr("Changed since the previous pause."))
        return "\n".join(lines)

    def setData(
        self, index: QModelIndex | QPersistentModelIndex, value: Any, role: int = Qt.ItemDataRole.EditRole
    ) -> bool:
        watch = self.watches[index.row()]
        if index.column() == self.STOP and role == Qt.ItemDataRole.CheckStateRole:
            watch.stop_on_change = Qt.CheckState(value) == Qt.CheckState.Checked
            self.dataChanged.emit(index, index)
            self.stop_toggled.emit()
            return True
        if index.column() == self.EXPRESSION and role == Qt.ItemDataRole.EditRole:
            text = str(value).strip()
            if not text or text == watch.expression or self.row_of(text) >= 0:
                return False
            self.watches[index.row()] = _Watch(text, watch.stop_on_change)
            self.dataChanged.emit(index.siblingAtColumn(0), index.siblingAtColumn(self.STOP))
            self.edited.emit()
            return True
        return False

    def row_of(self, expression: str) -> int:
        """The row of ``expression``, or -1."""
        return next((row for row, w in enumerate(self.watches) if w.expression == expression), -1)

    def reset(self, watches: list[_Watch]) -> None:
        """Replace every row."""
        self.beginResetModel()
        self.watches = watches
        self.endResetModel()

    def add(self, expression: str) -> None:
        """Append a row for ``expression``."""
        row = len(self.watches)
        self.beginInsertRows(QModelIndex(), row, row)
        self.watches.append(_Watch(expression))
        self.endInsertRows()

    def remove(self, row: int) -> None:
        """Drop one row."""
        self.beginRemoveRows(QModelIndex(), row, row)
        del self.watches[row]
        self.endRemoveRows()

    def set_result(self, row: int, result: dict[str, Any]) -> None:
        """Store a new result; it counts as changed when a previous result differs."""
        watch = self.watches[row]
        fingerprint = result_fingerprint(result)
        watch.changed = watch.result is not None and fingerprint != watch.fingerprint
        watch.result, watch.fingerprint = result, fingerprint
        self.dataChanged.emit(self.index(row, 0), self.index(row, self.STOP))


class WatchView(QWidget):
    """The watch list panel.

    Parameters
    ----------
    parent : QWidget, optional
        The Qt parent.
    """

    expressions_changed = Signal(list)
    """Expressions were added, removed or edited; the new list of all of them."""

    stop_on_change_changed = Signal(list)
    """A "Stop on change" box was toggled; the expressions now ticked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = WatchModel(self)
        self.tree = QTreeView(self)
        self.tree.setModel(self.model)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setEditTriggers(QTreeView.EditTrigger.DoubleClicked | QTreeView.EditTrigger.EditKeyPressed)
        self.tree.setSelectionMode(QTreeView.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(WatchModel.VALUE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(WatchModel.STOP, QHeaderView.ResizeMode.ResizeToContents)
        header.resizeSection(WatchModel.EXPRESSION, 140)

        self.edit_action = QAction(self)
        self.edit_action.setShortcut(QKeySequence(Qt.Key.Key_F2))
        self.edit_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.remove_action = QAction(self)
        self.remove_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.remove_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.tree.addActions([self.edit_action, self.remove_action])

        self.entry = QLineEdit(self)
        self.entry.setClearButtonEnabled(True)
        self.add_button = QPushButton(self)
        self.retranslate()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.entry, 1)
        row.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)

        self.entry.returnPressed.connect(self._on_entry_return_pressed)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.edit_action.triggered.connect(self._on_edit_action_triggered)
        self.remove_action.triggered.connect(self._on_remove_action_triggered)
        self.tree.doubleClicked.connect(self._on_tree_double_clicked)
        self.model.edited.connect(self._on_model_edited)
        self.model.stop_toggled.connect(self._on_model_stop_toggled)


    def retranslate(self) -> None:
        """Set the entry's, the buttons' and the headers' texts again, in the current language."""
        self.edit_action.setText(tr("Edit expression"))
        self.remove_action.setText(tr("Remove"))
        self.entry.setPlaceholderText(tr("Add a watch expression, e.g. {example}", example="w.grad"))
        self.entry.setAccessibleName(tr("New watch expression"))
        self.tree.setAccessibleName(tr("Watch expressions"))
        self.add_button.setText(tr("Add"))
        self.add_button.setToolTip(tr("Watch this expression; it is evaluated at every pause"))
        self.model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self.model.columnCount() - 1)
    def expressions(self) -> list[str]:
        """Every watch expression, in display order."""
        return [w.expression for w in self.model.watches]

    def stop_on_change(self) -> list[str]:
        """The expressions whose "Stop on change" box is ticked."""
        return [w.expression for w in self.model.watches if w.stop_on_change]

    def set_expressions(self, expressions: Sequence[str], stop_on_change: Sequence[str] = ()) -> None:
        """Replace the list (restoring it from settings); results are cleared."""
        unique = list(dict.fromkeys(e.strip() for e in expressions if e.strip()))
        self.model.reset([_Watch(e, e in stop_on_change) for e in unique])

    def add_expression(self, expression: str) -> None:
        """Watch ``expression`` (ignored when empty; an existing one is only selected)."""
        expression = expression.strip()
        if not expression:
            return
        row = self.model.row_of(expression)
        if row < 0:
            self.model.add(expression)
            row = len(self.model.watches) - 1
            self.expressions_changed.emit(self.expressions())
        self.tree.setCurrentIndex(self.model.index(row, WatchModel.EXPRESSION))

    def set_result(self, expression: str, result: dict[str, Any]) -> None:
        """Show the result of evaluating ``expression`` at this pause (``{"ok", "value" | "error"}``)."""
        row = self.model.row_of(expression)
        if row >= 0:
            self.model.set_result(row, result)

    def _on_entry_return_pressed(self) -> None:
        self.add_expression(self.entry.text())
        self.entry.clear()

    def _on_add_button_clicked(self) -> None:
        self._on_entry_return_pressed()

    def _on_tree_double_clicked(self, index: QModelIndex) -> None:
        if index.column() == WatchModel.VALUE:
            self.tree.edit(index.siblingAtColumn(WatchModel.EXPRESSION))

    def _on_edit_action_triggered(self) -> None:
        index = self.tree.currentIndex()
        if index.isValid():
            self.tree.edit(index.siblingAtColumn(WatchModel.EXPRESSION))

    def _on_remove_action_triggered(self) -> None:
        rows = sorted({index.row() for index in self.tree.selectionModel().selectedRows()}, reverse=True)
        if not rows and self.tree.currentIndex().isValid():
            rows = [self.tree.currentIndex().row()]
        for row in rows:
            self.model.remove(row)
        if rows:
            self.expressions_changed.emit(self.expressions())

    def _on_model_edited(self) -> None:
        self.expressions_changed.emit(self.expressions())

    def _on_model_stop_toggled(self) -> None:
        self.stop_on_change_changed.emit(self.stop_on_change())
