"""The variables of the paused frame as a tree, one dense lovely-tensors row per tensor.

The rows, their texts and what changed are :class:`app.variable_rows.VariableRows`, Qt-free;
:class:`VariablesModel` shows them to Qt and :class:`VariablesView` is the filter box, the tree
and the details line.

Features
--------
- Locals and Globals apart (a module frame shows its variables alone); a filter box matches
  names case-insensitively, and a variable also shows when one of its items or parameters matches.
- A tensor is one row: its grad state first (requires_grad, is_leaf, grad_fn, what ``.grad``
  holds, ``_version``, in columns at least wide enough to be seen together in a narrow pane), then
  ``tensor[2, 3] f32 μ=0.12 σ=1.03 [0.5, -1.2, …]``, its shape, dtype and device; a tooltip
  explains each flag in one sentence. NaN and Inf turn the value red with a ``NaN×3`` badge; parameters say
  ``Parameter``.
- Modules expand to their parameters, lists, tuples and dicts to their items, a PackedSequence to
  its tensors; each row knows the expression that evaluates to it (``xs[0]``, ``model.fc.weight``,
  ``d['k']``), which :attr:`VariablesView.tensor_selected` carries.
- What the step that led to the shown one changed (compared with the step before it in the
  run's history, in the same frame, however the learner arrived) is tinted and bold; its tooltip
  says what: a new name, a new value, a new ``grad_fn``, ``.grad`` appeared. A collapsed parent
  says which of its children changed.
- Expanded rows, the current row and the scroll position survive every pause.
- A details line under the tree spells out the current row whole: its value line, shape, dtype,
  device and grad state, whatever the pane's width cuts from the columns.
- Columns widen to their longest text, left to right, as far as the pane has room, so a wide pane
  cuts nothing that fits; a column the learner dragged keeps its width.
- Columns are shown and hidden from the header's context menu; :meth:`VariablesView.header_state`
  and :meth:`VariablesView.restore_header_state` let the window remember them.
- Cheap: the tree is a few Python objects per variable with their cell texts; value arrays never
  enter it, so a frame of 200 variables rebuilds in a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QByteArray, QEvent, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QFontMetrics, QGuiApplication, QPalette
from PySide6.QtWidgets import QAbstractItemView, QLabel, QLineEdit, QMenu, QStyle, QTreeView, QVBoxLayout, QWidget

from app.i18n import N_, tr
from app.value_text import is_tensor
from app.variable_rows import (
    DEVICE,
    DTYPE,
    GRAD,
    GRAD_FN,
    HEADER_TIPS,
    HEADERS,
    IS_LEAF,
    NAME,
    REQUIRES_GRAD,
    SHAPE,
    VALUE,
    VERSION,
    Row,
    VariableRows,
)
from widgets.colours import ensure_contrast, tint
from widgets.theme import follow_palette, high_contrast

INITIAL_WIDTHS = {NAME: 104, VALUE: 300, SHAPE: 70, DTYPE: 70, DEVICE: 50}
#: The grad-state columns come right after the name, before the value, so a pane as narrow as
#: the default one at 1280 px shows them all (lesson 11 asks the learner to watch ``_version``).
GRAD_COLUMNS = (REQUIRES_GRAD, IS_LEAF, GRAD_FN, GRAD, VERSION)
SHOWN_ORDER = (NAME, *GRAD_COLUMNS, VALUE, SHAPE, DTYPE, DEVICE)
#: The text each grad-state column is at least wide enough for, in bold, besides its header: with
#: room to spare, a column grows to its longest text (see :meth:`VariablesView._fit_columns`).
GRAD_COLUMN_TEXT = {REQUIRES_GRAD: "False", IS_LEAF: "False", GRAD_FN: "SelectBackward0", GRAD: "retains grad",
                    VERSION: "100"}
#: What the details line under the tree spells out after the current row's name and value, in this order.
DETAIL_COLUMNS = (SHAPE, DTYPE, DEVICE, REQUIRES_GRAD, IS_LEAF, GRAD_FN, GRAD, VERSION)
NO_ROW_DETAILS = N_("Select a row: its value, shape, dtype and grad state show here")
#: The Name column grows to fit nested names up to this many pixels.
MAX_NAME_WIDTH = 280
#: Pixels a cell needs beside its text so that the text is not elided (the item's margins).
CELL_PADDING = 14

#: Roles for what a row stands for: its stable path, its expression, its summary dict.
PATH_ROLE = Qt.ItemDataRole.UserRole + 1
EXPRESSION_ROLE = Qt.ItemDataRole.UserRole + 2
SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 3

#: The invalid index that stands for the root, as a default argument.
ROOT = QModelIndex()
#: The tint of the rows the step that led here changed.
CHANGE_AMBER = QColor("#ffc94d")
#: The graph view's highlight: rows of the variables behind the node under the mouse.
MARK_VIOLET = QColor("#7c3aed")
#: The value of a tensor holding NaN or Inf.
ALARM_RED = QColor("#c62828")


def alarm_red() -> QColor:
    """:data:`ALARM_RED`, made to read at 7:1 on the base in high contrast."""
    return ensure_contrast(ALARM_RED, QGuiApplication.palette().color(QPalette.ColorRole.Base)) \
        if high_contrast() else ALARM_RED


class VariablesModel(QAbstractItemModel):
    """The Qt tree model over :class:`~app.variable_rows.VariableRows`: its rows, tinted, coloured and in bold.

    Parameters
    ----------
    rows
        The rows it shows; it follows their events.
    parent
        The Qt parent.

    Notes
    -----
    Each row's path (``Locals:xs[0]``) is stable across pauses, so a view can restore its
    expanded rows and current row after the rows are replaced (a model reset).
    """

    def __init__(self, rows: VariableRows, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows = rows
        self._marked: set[str] = set()
        self._bold = QFont()
        self._bold.setBold(True)
        self._set_colours()
        rows.about_to_be_replaced.connect(self._on_rows_about_to_be_replaced)
        rows.replaced.connect(self._on_rows_replaced)
        rows.refilled.connect(self._on_rows_refilled)

    # ---- public API -------------------------------------------------------------------------

    def mark_variables(self, names: list[str]) -> None:
        """Tint the rows of ``names`` (the variables behind a graph node under the mouse); [] clears."""
        marked = {re.split(r"[.\[]", name, maxsplit=1)[0] for name in names}  # model.linear.weight → model
        if marked != self._marked:
            self._marked = marked
            if self.rowCount():
                last = self.index(self.rowCount() - 1, self.columnCount() - 1)
                self.dataChanged.emit(self.index(0, 0), last, [Qt.ItemDataRole.BackgroundRole])
                for row in range(self.rowCount()):  # grouped rows: their children too
                    parent = self.index(row, 0)
                    if self.rowCount(parent):
                        self.dataChanged.emit(self.index(0, 0, parent),
                                              self.index(self.rowCount(parent) - 1, self.columnCount() - 1, parent),
                                              [Qt.ItemDataRole.BackgroundRole])

    def index_for_path(self, path: str) -> QModelIndex:
        """The index of the row with ``path`` (column 0), or an invalid index."""
        row = self.rows.row(path)
        return self.createIndex(row.row, 0, row) if row is not None else QModelIndex()

    def paths(self) -> list[str]:
        """Every row's path, in tree order."""
        return self.rows.paths()

    def words_changed(self) -> None:
        """The interface language changed: group rows, grad states and containers' counts are drawn again in it."""
        self.rows.retranslate()
        self.layoutAboutToBeChanged.emit()
        self.layoutChanged.emit()

    # ---- handlers ---------------------------------------------------------------------------

    def _on_rows_about_to_be_replaced(self) -> None:
        self.beginResetModel()

    def _on_rows_replaced(self) -> None:
        self._set_colours()
        self.endResetModel()

    def _on_rows_refilled(self) -> None:
        self._set_colours()
        self._rows_changed(self.rows.root)

    def _rows_changed(self, parent: Row) -> None:
        """Say every row under ``parent`` changed, all columns and roles."""
        if not parent.children:
            return
        index = QModelIndex() if parent is self.rows.root else self.createIndex(parent.row, 0, parent)
        self.dataChanged.emit(self.index(0, 0, index), self.index(len(parent.children) - 1, len(HEADERS) - 1, index))
        for child in parent.children:
            self._rows_changed(child)

    # ---- Qt model interface -----------------------------------------------------------------

    def _row(self, index: QModelIndex) -> Row:
        return index.internalPointer() if index.isValid() else self.rows.root

    def index(self, row: int, column: int, parent: QModelIndex = ROOT) -> QModelIndex:
        children = self._row(parent).children
        if 0 <= row < len(children) and 0 <= column < len(HEADERS):
            return self.createIndex(row, column, children[row])
        return QModelIndex()

    def parent(self, index: QModelIndex | None = None) -> Any:
        if index is None:
            return super().parent()
        if not index.isValid():
            return QModelIndex()
        up = index.internalPointer().parent
        if up is None or up is self.rows.root:
            return QModelIndex()
        return self.createIndex(up.row, 0, up)

    def rowCount(self, parent: QModelIndex = ROOT) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._row(parent).children)

    def columnCount(self, parent: QModelIndex = ROOT) -> int:
        return len(HEADERS)

    def hasChildren(self, parent: QModelIndex = ROOT) -> bool:
        return self.rowCount(parent) > 0

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return tr(HEADERS[section]) if section in (NAME, VALUE) else HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return tr(HEADER_TIPS[section])
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row: Row = index.internalPointer()
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.rows.text(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.rows.tooltip(row, column)
        if role == Qt.ItemDataRole.BackgroundRole:
            if row.top in self._marked:
                return self._mark_tint
            return self._tint if row.change else None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if row.change or row.summary is None else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._foreground(row, column)
        if role == PATH_ROLE:
            return row.path
        if role == EXPRESSION_ROLE:
            return row.expression
        if role == SUMMARY_ROLE:
            return row.summary
        return None

    def restyle(self) -> None:
        """The colours of the theme in use, on every row (View > High Contrast)."""
        self._set_colours()
        self._rows_changed(self.rows.root)

    def _set_colours(self) -> None:
        palette = QGuiApplication.palette()
        self._tint = tint(CHANGE_AMBER, 0.45)
        self._mark_tint = tint(MARK_VIOLET, 0.3)
        self._dim = palette.color(QPalette.ColorRole.PlaceholderText)
        self._alarm = alarm_red()

    def _foreground(self, row: Row, column: int) -> QColor | None:
        summary = row.summary
        if summary is None or not is_tensor(summary):
            return None
        if column in (NAME, VALUE) and (summary.get("nan") or summary.get("inf")):
            return self._alarm
        if row.cells[column] in ("False", "None", "none"):
            return self._dim
        return None


class VariablesView(QWidget):
    """A filter box above the tree of the paused frame's variables.

    Parameters
    ----------
    parent
        The Qt parent.
    rows
        The rows to show (a new :class:`~app.variable_rows.VariableRows` when None).
    """

    tensor_selected = Signal(str, dict)
    """The learner made a tensor row current; carries the expression that evaluates to it and its summary."""
    variable_hovered = Signal(str)
    """The mouse moved onto a variable's rows (its top-level name) or off them ('')."""

    def __init__(self, parent: QWidget | None = None, rows: VariableRows | None = None) -> None:
        super().__init__(parent)
        self.rows = rows if rows is not None else VariableRows()
        self.model = VariablesModel(self.rows, self)
        follow_palette(self, self.model.restyle)
        self._filter = QLineEdit(self)
        self._filter.setObjectName("variables_filter")
        self._filter.setPlaceholderText(tr("Filter by name"))
        self._filter.setAccessibleName(tr("Filter variables by name"))
        self._filter.setClearButtonEnabled(True)
        self._tree = QTreeView(self)
        self._tree.setObjectName("variables_tree")
        self._tree.setAccessibleName(tr("Variables"))
        self.setFocusProxy(self._tree)  # View > Go To Panel lands on the rows, not the filter
        self._tree.setModel(self.model)
        self._tree.setUniformRowHeights(True)
        self._tree.setAlternatingRowColors(True)
        self._tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self._tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self._tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        self._tree.setMouseTracking(True)
        self._set_up_columns()

        # The strip beside the code is too narrow for ten columns: the current row is spelled out under them.
        self.details = QLabel(self)
        self.details.setObjectName("variables_details")
        self.details.setWordWrap(True)
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setContentsMargins(4, 0, 4, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self._filter)
        layout.addWidget(self._tree, 1)
        layout.addWidget(self.details)

        self._expanded: set[str] = set()
        self._restoring = False
        self._hovered = ""
        self._auto_name_width: int | None = None  # the Name width this view chose (the learner's own is kept)
        self._filter.textChanged.connect(self._on_filter_text_changed)
        self._tree.expanded.connect(self._on_tree_expanded)
        self._tree.collapsed.connect(self._on_tree_collapsed)
        self._tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
        header = self._tree.header()
        header.sectionResized.connect(self._on_header_section_resized)
        header.customContextMenuRequested.connect(self._on_header_context_menu_requested)
        self._tree.viewport().installEventFilter(self)
        self._show_details()

    def _set_up_columns(self) -> None:
        """Order and size the columns, and make the header's menu that shows and hides them."""
        header = self._tree.header()
        header.setStretchLastSection(False)
        header.setSectionsMovable(True)
        for column, width in INITIAL_WIDTHS.items():
            header.resizeSection(column, width)
        for place, column in enumerate(SHOWN_ORDER):
            header.moveSection(header.visualIndex(column), place)
        # At least as wide as their header or their usual content in bold, whichever is wider, so that
        # they all fit in a narrow pane; wider when their content is and the pane has room.
        bold = QFont(self._tree.font())
        bold.setBold(True)
        self._least = dict(INITIAL_WIDTHS)
        for column, text in GRAD_COLUMN_TEXT.items():
            self._least[column] = max(header.fontMetrics().horizontalAdvance(HEADERS[column]),
                                      QFontMetrics(bold).horizontalAdvance(text)) + CELL_PADDING
            header.resizeSection(column, self._least[column])
        self._fitting = False  # the view sizes columns itself: not a width the learner chose
        self._learner_sized: set[int] = set()
        self._metrics = (self._tree.fontMetrics(), QFontMetrics(bold))
        self._text_width: dict[tuple[str, bool], int] = {}  # most cells read True, None, cpu… at every pause
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.column_menu = QMenu(self)
        self.column_menu.setObjectName("column_menu")
        for column, title in enumerate(HEADERS[1:], start=1):
            action = QAction(tr(title) if column == VALUE else title, self.column_menu, checkable=True, checked=True)
            action.setData(column)
            action.toggled.connect(lambda on, c=column: self._on_column_action_toggled(c, on))
            self.column_menu.addAction(action)

    # ---- public API -------------------------------------------------------------------------

    @property
    def tree(self) -> QTreeView:
        """The tree view (for the window's focus handling and for tests)."""
        return self._tree

    def set_snapshot(self, variables: dict[str, Any], globals_: dict[str, Any],
                     before: dict[str, Any] | None = None) -> None:
        """Show a pause's variables, keeping expanded rows, the current row and the scroll position.

        Parameters
        ----------
        variables
            The frame's local variables: name → summary.
        globals_
            The module's globals, shown apart; empty in the module frame.
        before
            The step before the shown one in the run's history, in the same frame (its ``vars``
            and ``globals``), as :meth:`app.run.Run.before` gives it: what differs from it is
            what the step that led here changed, tinted. None marks nothing changed (the first
            step, another frame, another run).
        """
        self._keep_place(lambda: self.rows.set_snapshot(variables, globals_, before))
        self._show_new_names()

    def _show_new_names(self) -> None:
        """Bring the variables the step made into sight when none of them is: a line that made ``leaf`` below the
        rows in view showed the rows above and nothing of what it did."""
        new = [self.model.index_for_path(row.path) for row in self.rows.new_names()]
        viewport = self._tree.viewport().rect()
        if new and not any(viewport.intersects(self._tree.visualRect(index)) for index in new):
            self._tree.scrollTo(new[-1], QAbstractItemView.ScrollHint.EnsureVisible)

    def retranslate(self) -> None:
        """Show the headers, the filter's placeholder and the tooltips in the current language."""
        self._tree.setAccessibleName(tr("Variables"))
        self._filter.setPlaceholderText(tr("Filter by name"))
        self._filter.setAccessibleName(tr("Filter variables by name"))
        for action in self.column_menu.actions():
            if action.data() == VALUE:
                action.setText(tr(HEADERS[VALUE]))
        self.model.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(HEADERS) - 1)
        self.model.words_changed()
        self._fit_columns()
        self._show_details()

    def clear(self) -> None:
        """Show no variables (the run ended or restarted)."""
        self._keep_place(self.rows.clear)

    def current_expression(self) -> str | None:
        """The expression of the current row, or None."""
        index = self._tree.currentIndex()
        return index.data(EXPRESSION_ROLE) if index.isValid() else None

    def header_state(self) -> bytes:
        """The column order, widths and visibility, for the window's settings."""
        return bytes(self._tree.header().saveState().data())

    def restore_header_state(self, state: bytes) -> bool:
        """Restore what :meth:`header_state` returned; False when the state is unusable.

        The columns shown, their order and the Name width come back; the other columns are fitted
        to the content again, so a width saved in a narrower window cuts nothing in a wider one.
        """
        self._fitting = True
        try:
            restored = self._tree.header().restoreState(QByteArray(bytes(state)))
            for action in self.column_menu.actions():
                action.setChecked(not self._tree.header().isSectionHidden(action.data()))
        finally:
            self._fitting = False
        self._fit_columns()
        return restored

    # ---- keeping the learner's place across resets ------------------------------------------

    def _keep_place(self, reset: Callable[[], bool]) -> None:
        """Run ``reset`` (a model change that returns whether it reset the model), keeping the learner's place."""
        current = self._tree.currentIndex()
        current_path = current.data(PATH_ROLE) if current.isValid() else None
        scroll = self._tree.verticalScrollBar().value()
        self._restoring = True
        self._tree.setUpdatesEnabled(False)
        try:
            if not reset():  # the same rows with new values: the view kept its place itself
                self._fit_columns()
                self._show_details()
                return
            for path in self.rows.paths():
                if path in self._expanded:
                    self._tree.expand(self.model.index_for_path(path))
            if current_path is not None:
                index = self.model.index_for_path(current_path)
                if index.isValid():
                    self._tree.selectionModel().setCurrentIndex(
                        index, self._tree.selectionModel().SelectionFlag.ClearAndSelect
                        | self._tree.selectionModel().SelectionFlag.Rows)
            self._widen_name_column()
            self._fit_columns()
            self._tree.doItemsLayout()
            self._tree.verticalScrollBar().setValue(scroll)
            self._show_details()
        finally:
            self._tree.setUpdatesEnabled(True)
            self._restoring = False

    def _widen_name_column(self) -> None:
        """Grow the Name column to fit nested names, as far as the grad-state columns stay in sight.

        A width the learner chose is never narrowed; one this view chose is, when the view narrows.
        """
        bold = QFont(self._tree.font())
        bold.setBold(True)
        needed = self.rows.name_width(QFontMetrics(bold).horizontalAdvance, self._tree.indentation()) + 12
        header = self._tree.header()
        # Only as far as the grad-state columns after it stay in sight; a longer name elides (its tooltip has it all).
        room = self._tree.viewport().width() - sum(header.sectionSize(c) for c in GRAD_COLUMNS
                                                    if not header.isSectionHidden(c))
        if not self._tree.verticalScrollBar().isVisible():  # room for the scroll bar more rows will bring
            room -= self._tree.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self._tree)
        limit = max(min(MAX_NAME_WIDTH, room), INITIAL_WIDTHS[NAME])
        size = header.sectionSize(NAME)
        if size < min(needed, limit) or (size > limit and size == self._auto_name_width):
            # wider for a longer name; narrower again when the view narrowed (a scroll bar came) under our width
            self._auto_name_width = min(needed, limit)
            header.resizeSection(NAME, self._auto_name_width)

    def _fit_columns(self) -> None:
        """Widen the columns after Name to their longest text, left to right, as far as the viewport has room.

        A column is never narrower than its least width (its header, or for a grad-state column
        its usual content), so the grad-state columns stay in sight in a narrow pane while the
        value is cut there (the details line spells it whole); in a wide pane nothing is cut
        that fits. A width the learner dragged is kept.
        """
        header = self._tree.header()
        columns = sorted((c for c in range(1, len(HEADERS)) if not header.isSectionHidden(c)
                          and c not in self._learner_sized), key=header.visualIndex)
        if not columns:
            return
        texts = self.rows.text_widths(self._measure, columns)
        room = self._tree.viewport().width() - sum(header.sectionSize(c) for c in range(len(HEADERS))
                                                    if not header.isSectionHidden(c) and c not in columns)
        if not self._tree.verticalScrollBar().isVisible():  # room for the scroll bar more rows will bring
            room -= self._tree.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self._tree)
        widths = {c: max(self._least.get(c, 0), header.fontMetrics().horizontalAdvance(tr(HEADERS[c])) + CELL_PADDING)
                  for c in columns}
        spare = room - sum(widths.values())
        for column in columns:
            grow = max(0, min(texts[column] + CELL_PADDING - widths[column], spare))
            widths[column] += grow
            spare -= grow
        self._fitting = True
        try:
            for column, width in widths.items():
                if header.sectionSize(column) != width:
                    header.resizeSection(column, width)
        finally:
            self._fitting = False

    def _measure(self, text: str, bold: bool) -> int:
        key = (text, bold)
        width = self._text_width.get(key)
        if width is None:
            if len(self._text_width) > 20_000:
                self._text_width.clear()
            width = self._text_width[key] = self._metrics[bold].horizontalAdvance(text)
        return width

    # ---- handlers ---------------------------------------------------------------------------

    def _on_header_section_resized(self, column: int, _old: int, _new: int) -> None:
        if not self._fitting and column != NAME and not self._tree.header().isSectionHidden(column):
            self._learner_sized.add(column)  # dragged by the learner: the view leaves it as it is

    def _on_filter_text_changed(self, text: str) -> None:
        self._keep_place(lambda: self.rows.set_filter(text))

    def _on_tree_expanded(self, index: QModelIndex) -> None:
        self._expanded.add(index.data(PATH_ROLE))

    def _on_tree_collapsed(self, index: QModelIndex) -> None:
        if not self._restoring:
            self._expanded.discard(index.data(PATH_ROLE))

    def _show_details(self) -> None:
        """Spell out the current row under the tree: ``name = value``, then shape, dtype and grad state."""
        index = self._tree.currentIndex()
        if not index.isValid() or index.data(SUMMARY_ROLE) is None:
            self.details.setEnabled(False)  # greyed: a hint, not a value
            self.details.setText(tr(NO_ROW_DETAILS))
            return

        def cell(column: int) -> str:
            return index.siblingAtColumn(column).data() or ""

        # a no-break space: a line may wrap between two facts, never inside one (_version / 0)
        facts = [f"{HEADERS[column]}\u00a0{cell(column)}" for column in DETAIL_COLUMNS if cell(column)]
        name = index.data(EXPRESSION_ROLE) or cell(NAME)
        self.details.setEnabled(True)
        self.details.setText(f"{name} = {cell(VALUE)}" + ("\n" + " · ".join(facts) if facts else ""))

    def _on_tree_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._show_details()
        if self._restoring or not current.isValid():
            return
        summary = current.data(SUMMARY_ROLE)
        expression = current.data(EXPRESSION_ROLE)
        if summary is not None and expression and is_tensor(summary):
            self.tensor_selected.emit(expression, summary)

    def _on_column_action_toggled(self, column: int, shown: bool) -> None:
        self._fitting = True
        try:
            self._tree.header().setSectionHidden(column, not shown)
        finally:
            self._fitting = False
        self._fit_columns()

    def _on_header_context_menu_requested(self, pos: QPoint) -> None:
        self.column_menu.popup(self._tree.header().mapToGlobal(pos))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._tree.viewport():
            if event.type() == QEvent.Type.MouseMove:
                index = self._tree.indexAt(event.position().toPoint())
                self._set_hovered(index.internalPointer().top if index.isValid() else "")
            elif event.type() == QEvent.Type.Leave:
                self._set_hovered("")
            elif event.type() == QEvent.Type.Resize:
                self._widen_name_column()
                self._fit_columns()
        return super().eventFilter(watched, event)

    def _set_hovered(self, name: str) -> None:
        if name != self._hovered:
            self._hovered = name
            self.variable_hovered.emit(name)

