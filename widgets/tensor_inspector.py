"""One tensor shown in full: its header of flags and statistics, a lazy table, a plot, and its ``.grad``.

Features
--------
- A header line: the expression, shape, dtype, device, the autograd flags, min/max/mean/std
  and the NaN and Inf counts (in red when there are any).
- A table through :class:`ArrayTableModel`, which indexes the numpy array in ``data()`` and
  copies nothing: a 0-D tensor is one cell, 1-D one column, 2-D the matrix, and N-D a 2-D
  slice chosen with two axis boxes and one index box per remaining axis. Fixed row and column
  sizes keep a 10-million-element tensor scrolling smoothly; the columns are as wide as the
  widest number shown (measured on a sample of a big slice), so no number is cut.
- A pyqtgraph plot of the same slice: a heatmap with a colour bar for 2-D, a bar chart for up
  to 50 values and a line plot beyond, downsampled (min/max per bucket) for big arrays.
- ``.grad`` beside the value with the same slice, or a sentence saying why there is none.
- Cells that differ from the previous :meth:`TensorInspector.show_tensor` of the same
  expression are tinted.
- A large tensor arrives as a sample: the sample is shown at once, labelled with the index
  of each value, and :attr:`TensorInspector.values_requested` asks for the full values, which
  :meth:`TensorInspector.set_values` fills in. Statistics computed from a sample are marked ``≈``.
- A sparse tensor shows its stored entries as rows of index → value, never a dense copy; a
  tensor whose values cannot be read (nested, meta, fake, a wrapper subclass) says why.
"""

from __future__ import annotations

import html
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QFontMetrics, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.i18n import N_, tr
from app.value_text import grad_text, grad_words
from widgets.colours import tint
from widgets.theme import follow_palette
from widgets.variables_view import CHANGE_AMBER, alarm_red

#: Arrays up to this many values are bar charts; longer ones are line plots.
BAR_LIMIT = 50
#: Points per line plot and pixels per heatmap side, after downsampling.
PLOT_POINTS = 4000
IMAGE_SIDE = 600
#: Bytes of earlier arrays kept to highlight what changed.
HISTORY_BYTES = 256 * 1024 * 1024
PLACEHOLDER = N_("Select a tensor in Variables to inspect it")
#: The statistics the header spells out, by summary key, with their names in words.
STAT_LABELS = (("min", N_("min")), ("max", N_("max")), ("mean", N_("mean")), ("std", N_("std")))
#: Pixels around a cell's text, and values measured to size a column.
CELL_PADDING = 14
WIDTH_SAMPLE = 2000
MEASURED_TEXTS = 16
#: Pixels a 1-D tensor's plot keeps beside its column of values.
MIN_PLOT_WIDTH = 120
ROOT = QModelIndex()


def format_value(value: Any) -> str:
    """A number as the table shows it: 4 significant digits for floats, exact for the rest."""
    if isinstance(value, (np.floating, float, np.complexfloating, complex)):
        return f"{value:.4g}"
    if isinstance(value, (np.bool_, bool)):
        return str(bool(value))
    return str(value)


def cell_width(metrics: QFontMetrics, plane: np.ndarray, header_width: int = 0) -> int:
    """Pixels a table column needs for the widest text of ``plane``: all of a small one, a sample of a big one."""
    flat = plane.reshape(-1)
    if flat.size > WIDTH_SAMPLE:
        sample = flat[np.linspace(0, flat.size - 1, WIDTH_SAMPLE, dtype=np.int64)]
        # The extremes are often the longest texts (a big exact integer, a large negative float).
        extremes = [flat.min(), flat.max()] if flat.dtype.kind in "biuf" else []
        flat = np.concatenate([sample, np.asarray(extremes, dtype=flat.dtype)])
    # Only the longest texts can be the widest: measuring a few of them is as good as measuring all.
    longest = sorted({format_value(value) for value in flat}, key=len)[-MEASURED_TEXTS:]
    widest = max((metrics.horizontalAdvance(text) for text in longest), default=0)
    return max(widest, header_width, metrics.horizontalAdvance("0.00")) + CELL_PADDING


def _not_finite(value: Any) -> bool:
    return isinstance(value, (np.floating, np.complexfloating)) and not np.isfinite(value)


def _differs(a: Any, b: Any) -> bool:
    return bool(a != b) and not (a != a and b != b)  # two NaNs are the same value


class ArrayTableModel(QAbstractTableModel):
    """A 2-D numpy array as a table; cells are read from the array when Qt asks for them.

    Parameters
    ----------
    parent
        The Qt parent.
    """

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._array = np.zeros((0, 0))
        self._previous: np.ndarray | None = None
        self._row_name: Callable[[int], str] = str
        self._set_colours()

    def set_array(self, array: np.ndarray, previous: np.ndarray | None = None,
                  row_name: Callable[[int], str] = str) -> None:
        """Show ``array`` (2-D); cells that differ from ``previous`` (same shape) are tinted."""
        self.beginResetModel()
        self._array = array
        self._previous = previous if previous is not None and previous.shape == array.shape else None
        self._row_name = row_name
        self._set_colours()
        self.endResetModel()

    def _set_colours(self) -> None:
        self._tint = tint(CHANGE_AMBER, 0.55)

    def rowCount(self, parent: QModelIndex = ROOT) -> int:
        return 0 if parent.isValid() else self._array.shape[0]

    def columnCount(self, parent: QModelIndex = ROOT) -> int:
        return 0 if parent.isValid() else self._array.shape[1]

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            return format_value(self._array[index.row(), index.column()])
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        if role == Qt.ItemDataRole.BackgroundRole:
            return self._tint if self._changed(index.row(), index.column()) else None
        if role == Qt.ItemDataRole.ForegroundRole:
            return alarm_red() if _not_finite(self._array[index.row(), index.column()]) else None
        if role == Qt.ItemDataRole.ToolTipRole:
            value = self._array[index.row(), index.column()]
            tip = f"[{self._row_name(index.row())}, {index.column()}] = {value}"
            if self._changed(index.row(), index.column()):
                tip += f"\nwas {self._previous[index.row(), index.column()]}"
            return tip
        return None

    def shape(self) -> tuple[int, ...]:
        """The shape of the array shown."""
        return self._array.shape

    def _changed(self, row: int, column: int) -> bool:
        return self._previous is not None and _differs(self._array[row, column], self._previous[row, column])

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return self._row_name(section) if orientation == Qt.Orientation.Vertical else str(section)


class SliceControls(QWidget):
    """Which 2-D slice of an N-D array is shown: the row axis, the column axis, an index for every other axis."""

    changed = Signal()
    """The learner picked another slice."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._shape: tuple[int, ...] = ()
        self.row_axis = QComboBox(self, objectName="row_axis")
        self.column_axis = QComboBox(self, objectName="column_axis")
        self._rows_label, self._columns_label = QLabel(self), QLabel(self)
        for combo in (self.row_axis, self.column_axis):
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._spins: dict[int, QSpinBox] = {}
        self._indices: dict[int, int] = {}
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self._rows_label)
        self._layout.addWidget(self.row_axis)
        self._layout.addWidget(self._columns_label)
        self._layout.addWidget(self.column_axis)
        self._index_box = QHBoxLayout()
        self._layout.addLayout(self._index_box)
        self._layout.addStretch(1)
        self.row_axis.activated.connect(self._on_row_axis_activated)
        self.column_axis.activated.connect(self._on_column_axis_activated)
        self.retranslate()

    def retranslate(self) -> None:
        """Set the labels and tooltips again, in the current language."""
        self.row_axis.setToolTip(tr("the axis that runs down the table"))
        self.column_axis.setToolTip(tr("the axis that runs across the table"))
        self._rows_label.setText(tr("rows:"))
        self._columns_label.setText(tr("columns:"))
        for combo in (self.row_axis, self.column_axis):
            for axis, size in enumerate(self._shape):
                combo.setItemText(axis, tr("axis {axis} ({size})", axis=axis, size=size))
        if self._spins:
            self._rebuild_spins()

    def configure(self, shape: tuple[int, ...]) -> None:
        """Offer the axes of ``shape``; the choice is kept when the shape is the same as before."""
        if tuple(shape) == self._shape:
            return
        self._shape = tuple(shape)
        self._indices = {}
        ndim = len(shape)
        for combo in (self.row_axis, self.column_axis):
            combo.clear()
            combo.addItems([tr("axis {axis} ({size})", axis=axis, size=size) for axis, size in enumerate(shape)])
        if ndim >= 2:
            self.row_axis.setCurrentIndex(ndim - 2)
            self.column_axis.setCurrentIndex(ndim - 1)
        self._rebuild_spins()

    def take(self, array: np.ndarray) -> np.ndarray:
        """The chosen slice of ``array`` as a 2-D view (0-D: one cell, 1-D: one column)."""
        if array.ndim == 0:
            return array.reshape(1, 1)
        if array.ndim == 1:
            return array[:, None]
        rows, columns = self.axes()
        key = tuple(slice(None) if axis in (rows, columns) else self._spins[axis].value()
                    for axis in range(array.ndim))
        plane = array[key]
        return plane.T if rows > columns else plane

    def axes(self) -> tuple[int, int]:
        """The row axis and the column axis."""
        return self.row_axis.currentIndex(), self.column_axis.currentIndex()

    def describe(self) -> str:
        """The slice as an index expression, e.g. ``[1, :, :]``; '' for 0-D and 1-D."""
        if len(self._shape) < 2:
            return ""
        rows, columns = self.axes()
        parts = [":" if axis in (rows, columns) else str(self._spins[axis].value()) for axis in range(len(self._shape))]
        text = f"[{', '.join(parts)}]"
        return tr("{slice} transposed", slice=text) if rows > columns else text

    def _rebuild_spins(self) -> None:
        while self._index_box.count():
            widget = self._index_box.takeAt(0).widget()
            widget.setParent(None)  # gone at once, not only after the event loop deletes it
            widget.deleteLater()
        self._spins = {}
        shown = self.axes()
        for axis, size in enumerate(self._shape):
            if axis in shown:
                continue
            label = QLabel(tr("axis {axis}:", axis=axis), self)
            spin = QSpinBox(self, objectName=f"index_axis_{axis}",
                            toolTip=tr("which index along axis {axis} to show", axis=axis))
            spin.setRange(0, max(size - 1, 0))
            spin.setValue(self._indices.get(axis, 0))
            spin.valueChanged.connect(lambda value, a=axis: self._on_index_value_changed(a, value))
            self._index_box.addWidget(label)
            self._index_box.addWidget(spin)
            self._spins[axis] = spin

    def _on_row_axis_activated(self, _index: int) -> None:
        self._on_axis_chosen(self.row_axis, self.column_axis)

    def _on_column_axis_activated(self, _index: int) -> None:
        self._on_axis_chosen(self.column_axis, self.row_axis)

    def _on_axis_chosen(self, moved: QComboBox, other: QComboBox) -> None:
        if moved.currentIndex() == other.currentIndex():
            free = [a for a in range(len(self._shape)) if a != moved.currentIndex()]
            previous = [a for a in free if a not in self._spins] or free
            other.setCurrentIndex(previous[0])
        self._rebuild_spins()
        self.changed.emit()

    def _on_index_value_changed(self, axis: int, value: int) -> None:
        self._indices[axis] = value
        self.changed.emit()


class ArrayPlot(pg.PlotWidget):
    """A heatmap with a colour bar for a 2-D slice, a bar or line plot for 1-D; downsampled when big.

    Its right-click menu is GradStep's own few entries, in the interface's language: pyqtgraph's
    menus (Plot Options, Transforms, Downsample, Mouse Mode…) are built once, in English, and
    offer settings a learner looking at a tensor does not need.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._restyle()
        follow_palette(self, self._restyle)
        item = self.getPlotItem()
        item.setMenuEnabled(False)  # the ViewBox's and the PlotItem's menus
        item.hideButtons()
        self.scene().contextMenu = []  # the scene's "Export..."
        for name in ("left", "bottom"):  # ticks in the values' own units: 0.8, not 800 under "value (x0.001)"
            item.getAxis(name).enableAutoSIPrefix(False)
        self._image = pg.ImageItem(axisOrder="row-major")
        self._bar: pg.ColorBarItem | None = None
        self._grid = False
        self.setMinimumHeight(120)
        self.retranslate()

    def retranslate(self) -> None:
        self.setAccessibleName(tr("Plot of the tensor's values"))

    def _restyle(self) -> None:
        """The theme's base behind the plot, its text colour on the axes (View > High Contrast)."""
        palette = QGuiApplication.palette()
        self.setBackground(palette.color(QPalette.ColorRole.Base))
        self._text = palette.color(QPalette.ColorRole.Text)
        item = self.getPlotItem()
        for name in ("left", "bottom"):
            item.getAxis(name).setPen(self._text)
            item.getAxis(name).setTextPen(self._text)

    def context_menu(self) -> QMenu:
        """The plot's right-click menu: show all of it, and a grid on or off."""
        menu = QMenu(self)
        menu.addAction(tr("Show all values"), self.getPlotItem().autoRange)
        grid = menu.addAction(tr("Grid"), self._on_grid_triggered)
        grid.setCheckable(True)
        grid.setChecked(self._grid)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt override
        menu = self.context_menu()
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())
        event.accept()

    def _on_grid_triggered(self) -> None:
        self._grid = not self._grid
        self.getPlotItem().showGrid(x=self._grid, y=self._grid, alpha=0.3)

    def show_image(self, plane: np.ndarray) -> None:
        """A heatmap of a 2-D array, row 0 at the top."""
        item = self.getPlotItem()
        item.clear()
        step_r = max(1, math.ceil(plane.shape[0] / IMAGE_SIDE))
        step_c = max(1, math.ceil(plane.shape[1] / IMAGE_SIDE))
        image = _plottable(plane[::step_r, ::step_c])
        finite = image[np.isfinite(image)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if low == high:
            low, high = low - 0.5, high + 0.5
        self._image.setImage(image, levels=(low, high))
        self._image.setRect(QRectF(-0.5, -0.5, plane.shape[1], plane.shape[0]))  # cell centres on the indices
        item.showGrid(x=self._grid, y=self._grid, alpha=0.3)
        item.addItem(self._image)
        if self._bar is None:
            self._bar = pg.ColorBarItem(values=(low, high), colorMap="viridis", interactive=False, pen=self._text,
                                        width=14)
            self._bar.setImageItem(self._image, insert_in=item)
            self._bar.getAxis("right").setTextPen(self._text)
        self._bar.setLevels((low, high))
        self._bar.show()
        item.invertY(True)
        item.setLabel("left", tr("row"))
        item.setLabel("bottom", tr("column"))
        item.autoRange()

    def show_curve(self, values: np.ndarray, x: np.ndarray | None = None) -> None:
        """A bar chart of up to :data:`BAR_LIMIT` values, otherwise a line, over their indices ``x``."""
        item = self.getPlotItem()
        item.clear()
        if self._bar is not None:
            self._bar.hide()
        item.invertY(False)
        item.showGrid(x=True, y=True, alpha=0.3 if self._grid else 0.15)
        item.setLabel("left", tr("value"))
        item.setLabel("bottom", tr("index"))
        y = _plottable(values)
        x = np.arange(y.size) if x is None else x
        colour = self.palette().color(QPalette.ColorRole.Highlight)
        if y.size <= BAR_LIMIT:
            heights = np.where(np.isfinite(y), y, 0.0)
            width = 0.8 * (float(np.min(np.diff(x))) if x.size > 1 else 1.0)
            item.addItem(pg.BarGraphItem(x=x, height=heights, width=width, brush=colour, pen=colour))
        else:
            x, y = _peaks(x, y)
            item.plot(x, y, pen=pg.mkPen(colour, width=1), connect="finite")
        item.autoRange()


def _plottable(values: np.ndarray) -> np.ndarray:
    """Values as float for plotting: magnitudes of complex numbers, 0/1 for booleans."""
    if values.dtype.kind == "c":
        return np.abs(values).astype(np.float32)
    return np.asarray(values, dtype=np.float32 if values.dtype.itemsize <= 4 else np.float64)


def _peaks(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At most :data:`PLOT_POINTS` points: the min and max of each bucket, so spikes survive."""
    if y.size <= PLOT_POINTS:
        return x, y
    size = math.ceil(y.size / (PLOT_POINTS // 2))
    count = y.size // size
    buckets = y[: count * size].reshape(count, size)
    with np.errstate(invalid="ignore"):
        lows, highs = np.nanmin(buckets, axis=1), np.nanmax(buckets, axis=1)
    xs = x[: count * size : size]
    return np.repeat(xs, 2), np.column_stack([lows, highs]).reshape(-1)


class ArrayPanel(QWidget):
    """A titled table above a plot, or a sentence in their place."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._name = title
        self.title = QLabel(f"<b>{tr(title)}</b>", self)
        self.model = ArrayTableModel(self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setWordWrap(False)
        metrics = self.table.fontMetrics()
        for header, size in ((self.table.verticalHeader(), metrics.height() + 6),
                             (self.table.horizontalHeader(), metrics.horizontalAdvance("-0.0001234") + CELL_PADDING)):
            header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
            header.setDefaultSectionSize(size)
            header.setMinimumSectionSize(min(size, 20))
        self.plot = ArrayPlot(self)
        self.message = QLabel(self, alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.message.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self._split = QSplitter(Qt.Orientation.Vertical, self)
        self._split.addWidget(self.table)
        self._split.addWidget(self.plot)
        self._split.setChildrenCollapsible(False)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self._split)
        self._stack.addWidget(self.message)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self._stack, 1)

    def show_array(self, plane: np.ndarray, previous: np.ndarray | None, ndim: int,
                   row_name: Callable[[int], str] = str, x: np.ndarray | None = None) -> None:
        """Show a 2-D view in the table and plot it as an ``ndim``-dimensional slice (0: no plot)."""
        self._stack.setCurrentWidget(self._split)
        ndim = ndim if plane.size else 0  # an empty tensor has nothing to plot
        resized = plane.shape != self.model.shape()
        self.model.set_array(plane, previous, row_name)
        self._fit_columns(plane)
        self.plot.setVisible(ndim > 0)
        if ndim >= 2:
            self.plot.show_image(plane)
        elif ndim == 1:
            self.plot.show_curve(plane[:, 0], x)
        if resized and ndim > 0:
            self._share_space(plane.shape[0], ndim)

    def _fit_columns(self, plane: np.ndarray) -> None:
        """Make every column as wide as the widest number it shows (of a bounded sample), so none is cut.

        The width is also the columns' minimum, so a stretched last column never shrinks below it.
        """
        header = self.table.horizontalHeader()
        width = cell_width(self.table.fontMetrics(), plane, header.fontMetrics().horizontalAdvance(str(plane.shape[1])))
        header.setMinimumSectionSize(width)
        header.setDefaultSectionSize(width)

    def _share_space(self, rows: int, ndim: int) -> None:
        """A column of values sits left of its plot; a matrix sits above its heatmap with the room its rows need."""
        table = self.table
        frame = 2 * table.frameWidth()
        table.horizontalHeader().setStretchLastSection(ndim == 1)
        if ndim == 1:
            self._split.setOrientation(Qt.Orientation.Horizontal)
            wanted = (table.verticalHeader().sizeHint().width() + table.horizontalHeader().defaultSectionSize()
                      + table.verticalScrollBar().sizeHint().width() + frame)
            total = max(self._split.width(), 300)
        else:
            self._split.setOrientation(Qt.Orientation.Vertical)
            wanted = (table.horizontalHeader().sizeHint().height()
                      + min(rows, 12) * table.verticalHeader().defaultSectionSize()
                      + table.horizontalScrollBar().sizeHint().height() + frame)
            total = max(self._split.height(), 300)
        # A column of values keeps the width its numbers need; the plot gets the rest.
        share = min(wanted, total - MIN_PLOT_WIDTH) if ndim == 1 else min(wanted, total // 2)
        self._split.setSizes([share, total - share])

    def set_caption(self, detail: str) -> None:
        """The panel's title followed by ``detail`` (which slice, or that it is a sample)."""
        self.title.setText(f"<b>{tr(self._name)}</b> {html.escape(detail)}")

    def show_message(self, text: str) -> None:
        """Replace the table and plot by a sentence."""
        self.model.set_array(np.zeros((0, 0)))
        self.message.setText(text)
        self._stack.setCurrentWidget(self.message)

    def is_showing_message(self) -> bool:
        """Whether the panel shows a sentence instead of values."""
        return self._stack.currentWidget() is self.message


def _size_text(nbytes: int) -> str:
    for unit in ("B", "KB", "MB"):
        if nbytes < 1024:
            return f"{nbytes:g} {unit}"
        nbytes = round(nbytes / 1024, 1)
    return f"{nbytes:g} GB"


def _no_grad_reason(summary: dict[str, Any]) -> str:
    if not summary["requires_grad"]:
        return tr("no .grad: this tensor does not require grad, so backward() never reaches it")
    if not summary["is_leaf"]:
        if summary.get("retains_grad"):
            return tr("retain_grad() was called: the .grad of this non-leaf appears after backward()")
        return tr("non-leaf: .grad is not kept unless retain_grad() was called")
    return tr("no .grad yet: backward() has not reached this tensor")


class TensorInspector(QWidget):
    """Shows one tensor fully: header, table, plot and ``.grad``.

    Parameters
    ----------
    parent
        The Qt parent.
    """

    values_requested = Signal(str)
    """The tensor arrived as a sample; carries its expression. Answer with :meth:`set_values`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._expression: str | None = None
        self._summary: dict[str, Any] = {}
        self._arrays: dict[str, np.ndarray | None] = {"value": None, "grad": None}
        self._previous: dict[str, np.ndarray | None] = {"value": None, "grad": None}
        self._history: OrderedDict[tuple[str, str], tuple[np.ndarray, np.ndarray | None]] = OrderedDict()

        self.placeholder = QLabel(tr(PLACEHOLDER), self, alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.header = QLabel(self, wordWrap=True, objectName="inspector_header")
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = QLabel(self, wordWrap=True, objectName="inspector_note")
        self.note.setAutoFillBackground(True)
        self._colour_note()
        follow_palette(self.note, self._colour_note)
        self.note.setContentsMargins(6, 2, 6, 2)
        self.slices = SliceControls(self)
        self.value_panel = ArrayPanel(N_("value"), self)
        self.grad_panel = ArrayPanel(".grad", self)
        self._panels = panels = QSplitter(Qt.Orientation.Horizontal, self)
        panels.addWidget(self.value_panel)
        panels.addWidget(self.grad_panel)
        panels.setChildrenCollapsible(False)
        self._grad_shown: bool | None = None

        content = QWidget(self)
        column = QVBoxLayout(content)
        column.setContentsMargins(4, 4, 4, 4)
        column.setSpacing(4)
        column.addWidget(self.header)
        column.addWidget(self.note)
        column.addWidget(self.slices)
        column.addWidget(panels, 1)
        # A short dock scrolls the inspector instead of making the window's bottom strip taller.
        scroll = QScrollArea(self)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setWidget(content)
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self.placeholder)
        self._stack.addWidget(scroll)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._stack)
        self.slices.changed.connect(self._on_slices_changed)

    def _colour_note(self) -> None:
        """The note on an amber tint of the theme's base (the only colour set: the others follow the theme)."""
        palette = QPalette()
        palette.setColor(QPalette.ColorRole.Window, tint(CHANGE_AMBER, 0.35))
        self.note.setPalette(palette)

    # ---- public API -------------------------------------------------------------------------

    @property
    def expression(self) -> str | None:
        """The expression of the tensor shown, or None."""
        return self._expression

    def show_tensor(self, expression: str, summary: dict[str, Any], values: np.ndarray | None = None,
                    grad_values: np.ndarray | None = None) -> None:
        """Show a tensor from its summary, with its full values when given.

        Parameters
        ----------
        expression
            What evaluates to the tensor in the paused frame (``x``, ``model.fc.weight``).
        summary
            Its summary (see :mod:`app.lesson.summaries`).
        values, grad_values
            All the values of the tensor and of its ``.grad``, when the summary holds only a sample.
            Without them a sampled tensor shows its sample and emits :attr:`values_requested`.
        """
        self._expression = expression
        self._summary = summary
        grad = summary.get("grad")
        self._arrays = {
            "value": np.asarray(values) if values is not None else self._full(summary),
            "grad": np.asarray(grad_values) if grad_values is not None else self._full(grad),
        }
        self._previous = {key: self._remember(key, array) for key, array in self._arrays.items()}
        self._stack.setCurrentIndex(1)
        self.header.setText(self._header_html())
        self._render()
        if (summary.get("sampled") and values is None) or (grad is not None and grad.get("sampled")
                                                           and grad_values is None):
            self.values_requested.emit(expression)

    def set_values(self, expression: str, values: np.ndarray | None, grad_values: np.ndarray | None = None) -> None:
        """The full values asked for by :attr:`values_requested`; ignored when another tensor is shown by then."""
        if expression != self._expression:
            return
        for key, array in (("value", values), ("grad", grad_values)):
            if array is not None:
                self._arrays[key] = np.asarray(array)
                self._previous[key] = self._remember(key, self._arrays[key])
        self._render()

    def retranslate(self) -> None:
        """Show the placeholder, the header and the panels' texts again in the current language."""
        self.placeholder.setText(tr(PLACEHOLDER))
        self.slices.retranslate()
        for panel in (self.value_panel, self.grad_panel):
            panel.set_caption("")
            panel.plot.retranslate()
        if self._expression is not None and self._summary:
            self.header.setText(self._header_html())
            self._render()

    def clear(self) -> None:
        """Show the placeholder that says how to pick a tensor."""
        self._expression = None
        self._summary = {}
        self._arrays = {"value": None, "grad": None}
        self.value_panel.show_message("")
        self.grad_panel.show_message("")
        self._stack.setCurrentIndex(0)

    # ---- rendering --------------------------------------------------------------------------

    @staticmethod
    def _full(summary: dict[str, Any] | None) -> np.ndarray | None:
        if summary is None or summary.get("sampled") or summary.get("values") is None:
            return None
        return np.asarray(summary["values"])

    def _remember(self, key: str, array: np.ndarray | None) -> np.ndarray | None:
        """The array shown last time for this expression (kept while it is the same object), and record this one."""
        if array is None:
            return None
        slot = (self._expression or "", key)
        last = self._history.pop(slot, None)
        if last is None:
            previous = None
        else:
            previous = last[1] if last[0] is array else last[0]
        self._history[slot] = (array, previous)
        kept = sum(a.nbytes + (p.nbytes if p is not None else 0) for a, p in self._history.values())
        while kept > HISTORY_BYTES and len(self._history) > 1:
            old, old_previous = self._history.popitem(last=False)[1]
            kept -= old.nbytes + (old_previous.nbytes if old_previous is not None else 0)
        return previous if previous is not None and previous.shape == array.shape else None

    def _header_html(self) -> str:
        s = self._summary
        kind = "Parameter" if s.get("is_parameter") else "tensor"  # the type, as PyTorch names it
        shape = ", ".join(map(str, s["shape"]))
        layout = s.get("layout", "strided")
        layout = "" if layout == "strided" else f"{layout} · " + (f"nnz {s['nnz']:,} · " if "nnz" in s else "")
        count = tr("1 value") if s["numel"] == 1 else tr("{n} values", n=format(s["numel"], ","))
        line1 = (f"<b>{html.escape(self._expression or '')}</b> &nbsp; {kind}[{shape}] · {s['dtype']} · "
                 f"{layout}{s['device']} · {count} · {_size_text(s['nbytes'])}")
        line2 = (f"requires_grad {s['requires_grad']} · is_leaf {s['is_leaf']} · grad_fn {s['grad_fn']} · "
                 f"_version {s['version']} · grad: {html.escape(grad_words(grad_text(s)))}")
        stats = []
        if s.get("min") is not None:
            eq = "≈" if s.get("stats_sampled") else ""  # statistics of a sample of the values
            stats = [f"{tr(label)} {eq}{s[name]:.4g}" for name, label in STAT_LABELS]
            if eq:
                stats.append(tr("(from a sample)"))
        red = alarm_red().name()
        for name, label in (("nan", "NaN"), ("inf", "Inf")):
            count = s.get(name, 0)
            stats.append(f"<span style='color:{red}; font-weight:bold'>{label} {count:,}</span>" if count
                         else f"{label} 0")
        return "<br>".join([line1, line2, " · ".join(stats)])

    def _render(self) -> None:
        s = self._summary
        value = self._arrays["value"]
        sample = value is None and s.get("sampled") and s.get("values") is not None
        if sample:
            self.note.setText(tr("showing {shown} of {total} values — full values requested",
                                 shown=f"{np.size(s['values']):,}", total=f"{s['numel']:,}"))
            self.note.show()
        else:
            self.note.hide()
        if value is not None:
            self.slices.configure(tuple(value.shape))
        self.slices.setVisible(value is not None and value.ndim >= 2)
        self._fill(self.value_panel, "value", s)
        grad = s.get("grad")
        has_grad = grad is not None or self._arrays["grad"] is not None
        if has_grad:
            self._fill(self.grad_panel, "grad", grad or {})
        else:
            self.grad_panel.show_message(_no_grad_reason(s))
            self.grad_panel.set_caption("")
        if has_grad != self._grad_shown:
            # A sentence needs less room than a table: the value gets most of the width until a .grad appears.
            self._grad_shown = has_grad
            width = max(self._panels.width(), 600)
            self._panels.setSizes([width // 2] * 2 if has_grad else [width * 7 // 10, width * 3 // 10])

    def _fill(self, panel: ArrayPanel, key: str, summary: dict[str, Any]) -> None:
        array = self._arrays[key]
        if array is not None:
            previous = self._previous[key]
            panel.show_array(self.slices.take(array), self.slices.take(previous) if previous is not None else None,
                             min(array.ndim, 2))
            panel.set_caption(self.slices.describe())
        elif summary.get("entries"):
            self._fill_entries(panel, summary)
        elif summary.get("sampled") and summary.get("values") is not None:
            self._fill_sample(panel, summary)
        else:
            panel.show_message(summary.get("why_no_values") or tr("no values: this tensor has no data (meta device)"))

    @staticmethod
    def _fill_entries(panel: ArrayPanel, summary: dict[str, Any]) -> None:
        """A sparse tensor's stored entries: one row per (index, value), never a dense copy."""
        entries = summary["entries"]
        values = [value for _, value in entries]
        if all(isinstance(value, (int, float, complex, bool)) for value in values):
            column = np.asarray(values)
        else:  # a hybrid tensor stores a dense part per index: its first values as text
            column = np.asarray([str(value) for value in values], dtype=object)
        indices = [index for index, _ in entries]

        def row_name(row: int) -> str:
            return "[" + ", ".join(map(str, indices[row])) + "]"

        panel.show_array(column[:, None], None, 0, row_name)
        nnz = f"{summary['nnz']:,}"
        panel.set_caption(tr("({nnz} stored entries, the first {n} shown: index → value)", nnz=nnz,
                             n=f"{len(entries):,}") if len(entries) < summary["nnz"]
                          else tr("({nnz} stored entries: index → value)", nnz=nnz))

    def _fill_sample(self, panel: ArrayPanel, summary: dict[str, Any]) -> None:
        sample = np.asarray(summary["values"]).reshape(-1)
        # The same evenly spaced flat indices as app.lesson.summaries takes its sample at.
        flat = np.linspace(0, summary["numel"] - 1, num=sample.size).astype(np.int64)
        shape = tuple(summary["shape"])

        def row_name(row: int) -> str:
            return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat[row], shape)) + "]"

        panel.show_array(sample[:, None], None, 1, row_name, flat)
        panel.set_caption(tr("(evenly spaced sample)"))

    def _on_slices_changed(self) -> None:
        self._render()
