"""The autograd graph as a table beside the drawing: one row per node, for the keyboard, a screen reader, or sorting.

Features
--------
* One row per node of the :class:`~app.graph_model.GraphModel`, in the order the lesson made
  them: its name (and the variables it stands for), the line and pass that made it,
  ``requires_grad``, leaf or not, what it saved for backward, and its inputs.
* Kept in step with the drawing: selecting a row selects the node (the graph outlines it and
  shows its details), selecting a node in the graph selects its row.
* Sort by any column, filter by text, or show only the nodes the step in view made.
* Keys: Up/Down move through rows; Alt+Down goes to the selected node's first input, Alt+Up
  to the node that consumes it, Alt+Left/Alt+Right to a sibling input; Enter shows its details.
* A standard Qt view, so Orca and NVDA read each node as a row with named cells.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QCheckBox, QHBoxLayout, QLineEdit, QTableView, QVBoxLayout, QWidget

from app.graph_model import GraphModel
from app.i18n import N_, join_words, tr
from widgets.graph_groups import box_label, origin_keys
from widgets.graph_view import WALKS  # Alt + the keys that walk the drawing
from widgets.translated_texts import TranslatedTexts

#: The columns (English msgids; ``requires_grad`` is PyTorch's own name, the same in every language).
COLUMNS = (N_("Node"), N_("Made by"), "requires_grad", N_("Leaf"), N_("Saves"), N_("Inputs"))
NEW_ROLE = Qt.ItemDataRole.UserRole + 1
ID_ROLE = Qt.ItemDataRole.UserRole


def node_label(model: GraphModel, node_id: int) -> str:
    """A node as a row names it: ``MulBackward0 (y)``, or a leaf's variable."""
    node = model.nodes.get(node_id, {})
    names = model.names_of(node_id)
    name = node.get("name") or "?"
    return f"{name} ({', '.join(names)})" if names else name


def made_by(origin: dict[str, Any] | None) -> str:
    """The code that made a node, short: its line box's label (``line 7 · pass 2``) and the operation's text."""
    if not origin:
        return ""
    text = box_label(origin_keys(origin)[0])
    return f"{text}: {' '.join(origin['text'].split())}" if origin.get("line") is not None and origin.get("text") \
        else text


def requires_grad(node: dict[str, Any]) -> bool:
    """Whether the tensor a node stands for requires grad: a leaf's own flag; an operation's output always does."""
    leaf = node.get("leaf")
    return bool(leaf.get("requires_grad")) if isinstance(leaf, dict) else node.get("kind") != "leaf"


class NodeRows(QAbstractTableModel):
    """The graph model's nodes as table rows, rebuilt when the graph changes."""

    def __init__(self, graph: GraphModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graph = graph
        self.ids: list[int] = []

    def refresh(self) -> None:
        self.beginResetModel()
        self.ids = self.graph.creation_order()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.ids)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(COLUMNS[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node_id = self.ids[index.row()]
        if role == ID_ROLE:
            return node_id
        if role == NEW_ROLE:
            return node_id in self.graph.new
        if role == Qt.ItemDataRole.AccessibleTextRole and index.column() == 0 and node_id in self.graph.new:
            return tr("{node}, new this step", node=node_label(self.graph, node_id))  # a screen reader says no "★"
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return self.cell(node_id, index.column())
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0 and node_id in self.graph.new:
            return tr("Made by the step in view")
        return None

    def cell(self, node_id: int, column: int) -> str:
        """The text of one cell (also what a screen reader says of it)."""
        node = self.graph.nodes.get(node_id, {})
        if column == 0:
            label = node_label(self.graph, node_id)
            return f"★ {label}" if node_id in self.graph.new else label
        if column == 1:
            return made_by(node.get("origin"))
        if column == 2:
            return "True" if requires_grad(node) else "False"
        if column == 3:
            return tr("leaf") if node.get("kind") == "leaf" else ""
        if column == 4:
            saved = [entry.get("name", "?") for entry in node.get("saved") or ()]
            return join_words(saved) if saved else ""
        inputs = [node_label(self.graph, child) for child in self.graph.inputs(node_id)]
        return join_words(inputs) if inputs else ""


class _NodeFilter(QSortFilterProxyModel):
    """Rows whose node matches the text filter and, when asked, only the step's new nodes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.new_only = False
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)

    def set_new_only(self, on: bool) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt 6.10+; invalidateFilter() is deprecated there
            self.beginFilterChange()
            self.new_only = on
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.new_only = on
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent: QModelIndex | QPersistentModelIndex) -> bool:  # noqa: N802
        if self.new_only and not self.sourceModel().index(row, 0, parent).data(NEW_ROLE):
            return False
        return super().filterAcceptsRow(row, parent)


class _Table(QTableView):
    """The table, with Alt+arrows walking along the graph's edges and Enter opening a node's details."""

    walked = Signal(str)
    """Alt + an arrow: ``"input"``, ``"consumer"``, ``"next"`` or ``"previous"``."""
    opened = Signal()
    """Enter on a row."""

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        if event.modifiers() & Qt.KeyboardModifier.AltModifier and event.key() in WALKS:
            self.walked.emit(WALKS[Qt.Key(event.key())])
        elif event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.opened.emit()
        else:
            super().keyPressEvent(event)


class NodeList(QWidget):
    """A table of the graph's nodes, in step with the graph's selection.

    Parameters
    ----------
    graph
        The graph model the drawing shows too.
    """

    details_requested = Signal(int)
    """Enter on a node's row: show its details (the graph's details pane)."""

    def __init__(self, graph: GraphModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.graph = graph
        self._texts = TranslatedTexts()
        self.rows = NodeRows(graph, self)
        self.proxy = _NodeFilter(self)
        self.proxy.setSourceModel(self.rows)
        self.filter_edit = QLineEdit(self)
        self.filter_edit.setObjectName("node_filter")
        self.filter_edit.setClearButtonEnabled(True)
        self.new_check = QCheckBox(self)
        self.new_check.setObjectName("node_new_only")
        self.table = _Table(self)
        self.table.setObjectName("node_table")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # creation order until a header is clicked
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setTabKeyNavigation(False)  # arrows move between rows; Tab leaves the table
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        for text, setter in ((N_("Filter nodes by name or variable"), self.filter_edit.setPlaceholderText),
                             (N_("Filter nodes"), self.filter_edit.setAccessibleName),
                             (N_("New this step"), self.new_check.setText),
                             (N_("Show only the nodes the step in view made"), self.new_check.setToolTip),
                             (N_("Autograd graph nodes"), self.table.setAccessibleName),
                             (N_("One row per node of the autograd graph, in the order the lesson made them. "
                                 "Alt+Down goes to an input, Alt+Up to its consumer, Alt+Left and Alt+Right to a "
                                 "sibling; Enter shows the node's details."), self.table.setAccessibleDescription)):
            self._texts.set(setter, text)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.filter_edit, 1)
        bar.addWidget(self.new_check)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.table)
        self.setFocusProxy(self.table)  # View > Go To Panel lands on the rows, not the filter
        self._selecting = False
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.new_check.toggled.connect(self._on_new_check_toggled)
        self.table.selectionModel().currentRowChanged.connect(self._on_table_current_row_changed)
        self.table.walked.connect(self._on_table_walked)
        self.table.opened.connect(self._on_table_opened)
        graph.replaced.connect(self._on_graph_changed)
        graph.changed.connect(self._on_graph_changed)
        graph.selected_changed.connect(self._on_graph_selected_changed)
        self._on_graph_changed()

    def row_count(self) -> int:
        """Rows shown (after the filters)."""
        return self.proxy.rowCount()

    def retranslate(self) -> None:
        self._texts.apply()
        self.rows.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        self.rows.refresh()
        self._show_selected()

    def _on_graph_changed(self, _diff: Any = None) -> None:
        self.rows.refresh()
        self._show_selected()

    def _on_graph_selected_changed(self, _node_id: int | None) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        """Select the graph's selected node's row (the table's own selection signal stays quiet)."""
        selected = self.graph.selected
        self._selecting = True
        try:
            if selected in self.rows.ids:
                index = self.proxy.mapFromSource(self.rows.index(self.rows.ids.index(selected), 0))
                if index.isValid():
                    self.table.setCurrentIndex(index)
                    self.table.scrollTo(index)
                    return
            self.table.clearSelection()
        finally:
            self._selecting = False

    def _on_table_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._selecting and current.isValid():
            self.graph.select(current.data(ID_ROLE))

    def _on_table_walked(self, way: str) -> None:
        target = self.graph.step_from(self.graph.selected, way)
        if target is not None:
            if self.new_check.isChecked() and target not in self.graph.new:
                self.new_check.setChecked(False)  # the way leads out of the filter: show every node
            self.graph.select(target)

    def _on_table_opened(self) -> None:
        if self.graph.selected is not None:
            self.details_requested.emit(self.graph.selected)

    def _on_new_check_toggled(self, on: bool) -> None:
        self.proxy.set_new_only(on)
        self._show_selected()
