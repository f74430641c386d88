"""The tensor inspector on summaries of real tensors: the table, its slices, the .grad, what changed, big tensors."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QComboBox, QSpinBox  # noqa: E402

from app import messages as m  # noqa: E402
from app.lesson.summaries import Summarizer  # noqa: E402
from widgets.tensor_inspector import (  # noqa: E402
    IMAGE_SIDE,
    PLACEHOLDER,
    PLOT_POINTS,
    ArrayTableModel,
    TensorInspector,
    format_value,
)
from widgets.variables_view import ALARM_RED  # noqa: E402


def summary(tensor: torch.Tensor, value_limit: int = 10_000) -> dict[str, Any]:
    """The summary as it arrives from the lesson (through the channel: it shares no memory with the tensor)."""
    return m.decode(m.encode(Summarizer(value_limit).summarize(tensor))[m.HEADER_SIZE:])


def table(model: ArrayTableModel) -> list[list[str]]:
    return [[model.index(r, c).data() for c in range(model.columnCount())] for r in range(model.rowCount())]


def shown(array: np.ndarray) -> list[list[str]]:
    """What the table should show for a 2-D array."""
    return [[format_value(v) for v in row] for row in array]


@pytest.fixture
def inspector(qtbot):
    widget = TensorInspector()
    qtbot.addWidget(widget)
    widget.resize(700, 450)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def choose(qtbot, combo: QComboBox, axis: int) -> None:
    """Pick an axis in a combo box with the keyboard, as a learner would."""
    qtbot.keyClick(combo, Qt.Key.Key_Home)
    for _ in range(axis):
        qtbot.keyClick(combo, Qt.Key.Key_Down)


def test_a_placeholder_says_how_to_pick_a_tensor(inspector):
    assert inspector.placeholder.isVisible() and inspector.placeholder.text() == PLACEHOLDER
    inspector.show_tensor("x", summary(torch.ones(2)))
    assert not inspector.placeholder.isVisible() and inspector.value_panel.isVisible()
    inspector.clear()
    assert inspector.placeholder.isVisible() and inspector.expression is None


def test_the_header_has_the_flags_and_statistics(inspector):
    x = torch.tensor([[1.0, -2.0], [3.0, float("nan")]], requires_grad=True)
    inspector.show_tensor("x", summary(x))
    text = inspector.header.text()
    for part in ("<b>x</b>", "tensor[2, 2]", "float32", "cpu", "requires_grad True", "is_leaf True",
                 "grad_fn None", "_version 0", "min -2", "max 3", "mean 0.6667", "NaN 1", "Inf 0"):
        assert part in text, part
    assert ALARM_RED.name() in text  # the NaN count is red


def test_zero_and_one_dimensional_tensors_are_one_cell_and_one_column(inspector):
    inspector.show_tensor("s", summary(torch.tensor(2.5)))
    assert table(inspector.value_panel.model) == [["2.5"]]
    assert not inspector.value_panel.plot.isVisible() and not inspector.slices.isVisible()

    v = torch.linspace(-1, 1, 7)
    inspector.show_tensor("v", summary(v))
    assert table(inspector.value_panel.model) == shown(v.numpy()[:, None])
    bars = [i for i in inspector.value_panel.plot.getPlotItem().items if isinstance(i, pg.BarGraphItem)]
    assert len(bars) == 1


def test_a_matrix_is_shown_as_it_is_and_its_heatmap_is_drawn(inspector):
    m = torch.arange(12.0).reshape(3, 4) / 7
    inspector.show_tensor("m", summary(m))
    assert table(inspector.value_panel.model) == shown(m.numpy())
    image = inspector.value_panel.plot._image
    assert image.image.shape == (3, 4) and image in inspector.value_panel.plot.getPlotItem().items


def test_the_axis_and_index_controls_choose_the_slice_of_an_nd_tensor(qtbot, inspector):
    a = torch.arange(60.0).reshape(3, 4, 5)
    inspector.show_tensor("a", summary(a))
    model, values = inspector.value_panel.model, a.numpy()
    slices = inspector.slices
    assert slices.isVisible() and slices.axes() == (1, 2)
    assert table(model) == shown(values[0])

    spin = inspector.findChild(QSpinBox, "index_axis_0")
    qtbot.keyClick(spin, Qt.Key.Key_Up)
    qtbot.keyClick(spin, Qt.Key.Key_Up)
    assert table(model) == shown(values[2])
    assert "[2, :, :]" in inspector.value_panel.title.text()

    choose(qtbot, inspector.findChild(QComboBox, "row_axis"), 2)  # rows along axis 2: the columns axis swaps to 1
    assert slices.axes() == (2, 1)
    assert table(model) == shown(values[2].T)

    choose(qtbot, inspector.findChild(QComboBox, "column_axis"), 0)
    assert slices.axes() == (2, 0)
    spin = inspector.findChild(QSpinBox, "index_axis_1")
    qtbot.waitUntil(spin.isVisible)
    qtbot.keyClick(spin, Qt.Key.Key_Up)
    assert table(model) == shown(values[:, 1, :].T)
    assert model.rowCount() == 5 and model.columnCount() == 3


def test_the_grad_sits_beside_the_value_with_the_same_slice(qtbot, inspector):
    w = torch.randn(2, 3, 4, requires_grad=True)
    (w * torch.arange(4.0)).sum().backward()
    inspector.show_tensor("w", summary(w))
    grad = w.grad.numpy()
    assert inspector.grad_panel.isVisible() and not inspector.grad_panel.is_showing_message()
    assert table(inspector.grad_panel.model) == shown(grad[0])
    qtbot.keyClick(inspector.findChild(QSpinBox, "index_axis_0"), Qt.Key.Key_Up)
    assert table(inspector.grad_panel.model) == shown(grad[1])
    assert table(inspector.value_panel.model) == shown(w.detach().numpy()[1])


@pytest.mark.parametrize(("make", "message"), [
    (lambda: torch.ones(2, requires_grad=True), "no .grad yet"),
    (lambda: torch.ones(2, requires_grad=True) * 2, "non-leaf: .grad is not kept unless retain_grad() was called"),
    (lambda: torch.ones(2), "does not require grad"),
])
def test_without_a_grad_the_grad_panel_says_why(inspector, make, message):
    inspector.show_tensor("t", summary(make()))
    assert inspector.grad_panel.is_showing_message()
    assert message in inspector.grad_panel.message.text()
    assert inspector.grad_panel.model.rowCount() == 0


def test_a_sampled_tensor_shows_its_sample_asks_for_the_values_and_fills_in(qtbot, inspector):
    big = torch.arange(20_000.0).reshape(200, 100)
    sampled = summary(big, value_limit=1000)
    with qtbot.waitSignal(inspector.values_requested) as blocker:
        inspector.show_tensor("big", sampled)
    assert blocker.args == ["big"]
    assert inspector.note.isVisible()
    assert inspector.note.text() == "showing 1,000 of 20,000 values — full values requested"
    model = inspector.value_panel.model
    assert (model.rowCount(), model.columnCount()) == (1000, 1)
    assert model.headerData(1, Qt.Orientation.Vertical) == "[0, 20]"  # the sample's second value is big[0, 20]
    assert model.index(1, 0).data() == "20"

    inspector.set_values("other", np.zeros((200, 100)))  # an answer for a tensor no longer shown
    assert model.rowCount() == 1000
    inspector.set_values("big", big.numpy())
    assert not inspector.note.isVisible()
    assert (model.rowCount(), model.columnCount()) == (200, 100)
    assert model.index(150, 42).data() == format_value(big.numpy()[150, 42])


def test_values_changed_since_the_last_show_are_tinted(inspector):
    x = torch.zeros(3, 3)
    inspector.show_tensor("x", summary(x))
    model = inspector.value_panel.model
    assert all(model.index(r, c).data(Qt.ItemDataRole.BackgroundRole) is None for r in range(3) for c in range(3))

    x[1, 2] = 5.0
    second = summary(x)
    inspector.show_tensor("x", second)
    tinted = {(r, c) for r in range(3) for c in range(3) if model.index(r, c).data(Qt.ItemDataRole.BackgroundRole)}
    assert tinted == {(1, 2)}
    assert "was 0.0" in model.index(1, 2).data(Qt.ItemDataRole.ToolTipRole)

    inspector.show_tensor("x", second)  # the same data shown again keeps what it changed from
    assert model.index(1, 2).data(Qt.ItemDataRole.BackgroundRole) is not None
    inspector.show_tensor("y", summary(torch.ones(3, 3)))  # another expression compares with nothing
    assert model.index(1, 2).data(Qt.ItemDataRole.BackgroundRole) is None
    inspector.show_tensor("x", summary(x))
    assert model.index(1, 2).data(Qt.ItemDataRole.BackgroundRole) is None  # unchanged since its last show


def test_nan_and_inf_cells_are_red(inspector):
    t = torch.tensor([1.0, float("nan"), float("-inf")])
    inspector.show_tensor("t", summary(t))
    model = inspector.value_panel.model
    assert table(model) == [["1"], ["nan"], ["-inf"]]
    assert model.index(1, 0).data(Qt.ItemDataRole.ForegroundRole) == ALARM_RED
    assert model.index(2, 0).data(Qt.ItemDataRole.ForegroundRole) == ALARM_RED
    assert model.index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is None


def test_a_ten_million_element_tensor_is_shown_lazily(qtbot, inspector):
    values = np.random.default_rng(0).standard_normal((3162, 3162), dtype=np.float32)
    big = torch.from_numpy(values)
    with qtbot.waitSignal(inspector.values_requested):
        inspector.show_tensor("big", summary(big))
    inspector.set_values("big", values)
    model = inspector.value_panel.model
    assert (model.rowCount(), model.columnCount()) == (3162, 3162)
    assert model.index(3161, 3000).data() == format_value(values[3161, 3000])
    view = inspector.value_panel.table
    view.scrollTo(model.index(3161, 3161))
    inspector.grab()
    assert view.rowAt(view.viewport().height() - 1) >= 3150
    image = inspector.value_panel.plot._image.image
    assert max(image.shape) <= IMAGE_SIDE  # the heatmap is downsampled


def test_long_vectors_are_plotted_as_a_downsampled_line(inspector):
    v = torch.sin(torch.linspace(0, 100, 50_000))
    inspector.show_tensor("v", summary(v, value_limit=100_000))
    curves = inspector.value_panel.plot.getPlotItem().listDataItems()
    assert len(curves) == 1
    x, y = curves[0].getOriginalDataset()
    assert len(y) <= PLOT_POINTS and np.nanmax(y) == pytest.approx(1.0, abs=1e-3)


def assert_no_cell_clipped(panel) -> None:
    """Every shown number fits its column: the text's width is under the column's width."""
    table, model = panel.table, panel.model
    metrics, header = table.fontMetrics(), table.horizontalHeader()
    for row in range(model.rowCount()):
        for column in range(model.columnCount()):
            text = model.index(row, column).data()
            assert metrics.horizontalAdvance(text) + 4 < header.sectionSize(column), (text, header.sectionSize(column))


@pytest.mark.parametrize("tensor", [
    torch.tensor([1.0, -0.2345678, 3.5e-7, -12345.678]),
    torch.tensor([[1.0, -0.25], [0.125, -1e-9]]),
    torch.tensor([[123456789012, -5], [7, 0]]),
], ids=["vector", "matrix", "big-ints"])
def test_cells_show_whole_numbers_even_in_a_narrow_inspector(qtbot, inspector, tensor):
    inspector.resize(280, 260)  # narrower than the window's bottom strip makes it
    inspector.show_tensor("t", summary(tensor.requires_grad_(tensor.is_floating_point())))
    qtbot.waitUntil(lambda: inspector.value_panel.table.isVisible())
    assert_no_cell_clipped(inspector.value_panel)
    assert inspector.value_panel.model.index(0, 0).data() in ("1", "123456789012")


@pytest.mark.parametrize("make, why", [
    (lambda: torch.empty(3, 4, device="meta"), "a meta tensor has a shape and a dtype but no data"),
    (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged),
     "a nested tensor holds tensors"),
])
def test_a_tensor_without_readable_values_says_why_instead_of_a_table(inspector, make, why):
    inspector.show_tensor("t", summary(make()))
    assert inspector.value_panel.is_showing_message()
    assert why in inspector.value_panel.message.text()
    assert inspector.value_panel.model.rowCount() == 0


def test_a_sparse_tensor_shows_its_stored_entries_as_index_value_rows(inspector):
    s = torch.sparse_coo_tensor([[0, 19999], [0, 19999]], [1.5, -2.0], (20000, 20000), check_invariants=True)
    inspector.show_tensor("s", summary(s))
    panel = inspector.value_panel
    assert not panel.is_showing_message()
    assert table(panel.model) == [["1.5"], ["-2"]]
    header = [panel.model.headerData(r, Qt.Orientation.Vertical) for r in range(panel.model.rowCount())]
    assert header == ["[0, 0]", "[19999, 19999]"]
    assert "2 stored entries" in panel.title.text()
    assert "sparse_coo · nnz 2" in inspector.header.text()


def test_statistics_from_a_sample_are_marked_in_the_header(inspector):
    torch.manual_seed(0)
    inspector.show_tensor("v", summary(torch.randn(4000, 3000)[:, ::3]))
    text = inspector.header.text()
    assert "mean ≈" in text and "(from a sample)" in text
    inspector.show_tensor("w", summary(torch.randn(4, 3)))
    assert "≈" not in inspector.header.text()


def test_the_header_counts_one_value_and_speaks_chinese_in_chinese(inspector):
    """A scalar's header said "1 values"; in 中文 the grad state, the statistics and the chart's axes stayed
    English, and the header said the tensor "has grad" without saying what it is."""
    from app import i18n

    inspector.show_tensor("s", summary(torch.tensor(2.5)))
    assert "· 1 value ·" in inspector.header.text()
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    i18n.set_language("zh")
    inspector.show_tensor("w", summary(w))
    text = inspector.header.text()
    assert "2 个值" in text and "grad: [2, 4]" in text
    assert "最小值 1 · 最大值 2 · 均值 1.5 · 标准差 0.7071" in text
    axes = inspector.value_panel.plot.getPlotItem()
    assert (axes.getAxis("left").labelText, axes.getAxis("bottom").labelText) == ("值", "索引")


def test_the_value_axis_counts_in_the_values_own_units(inspector):
    """w = 0.8352 was drawn as a bar to 800 on an axis labelled "value (x0.001)"."""
    inspector.show_tensor("w", summary(torch.tensor([0.8352])))
    axis = inspector.value_panel.plot.getPlotItem().getAxis("left")
    assert ">value </span>" in axis.labelString() and "x0.001" not in axis.labelString()
    assert axis.autoSIPrefixScale == 1.0


def test_the_plots_right_click_menu_is_ours_and_in_the_interfaces_language(qtbot, inspector):
    """In 中文 a right-click on the plot showed pyqtgraph's English menus (Plot Options, Transforms, Mouse Mode…)."""
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    from app import i18n

    inspector.show_tensor("m", summary(torch.arange(6.0).reshape(2, 3)))
    plot = inspector.value_panel.plot
    assert not plot.getPlotItem().menuEnabled() and not plot.getPlotItem().getViewBox().menuEnabled()
    assert plot.scene().contextMenu == []
    i18n.set_language("zh")
    try:
        inspector.retranslate()
        centre = plot.rect().center()
        event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, centre, plot.mapToGlobal(centre))
        QApplication.sendEvent(plot.viewport(), event)  # where a right-click lands
        qtbot.waitUntil(lambda: any(menu.isVisible() for menu in plot.findChildren(QMenu)))
        menu = next(menu for menu in plot.findChildren(QMenu) if menu.isVisible())
        texts = [action.text() for action in menu.actions()]
        assert texts == ["显示全部数值", "网格"] and plot.accessibleName() == "张量数值的图"
        menu.close()
    finally:
        i18n.set_language("en")
        inspector.retranslate()
    grid = plot.context_menu().actions()[1]
    grid.trigger()
    assert plot.context_menu().actions()[1].isChecked()
