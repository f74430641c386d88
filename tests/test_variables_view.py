"""The variables view on summaries of real PyTorch values: what the learner sees in the tree and can do with it."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QStyle  # noqa: E402
from torch import nn  # noqa: E402

from app import messages as m  # noqa: E402
from app.lesson.summaries import Summarizer  # noqa: E402
from widgets.variables_view import (  # noqa: E402
    ALARM_RED,
    DEVICE,
    DTYPE,
    GRAD,
    GRAD_FN,
    HEADERS,
    IS_LEAF,
    NAME,
    REQUIRES_GRAD,
    SHAPE,
    SUMMARY_ROLE,
    VALUE,
    VERSION,
    VariablesView,
)


class Frame:
    """Summarises values as the lesson process does, and sends them across the process boundary's encoding."""

    def __init__(self) -> None:
        self.summarizer = Summarizer()

    def __call__(self, **values: Any) -> dict[str, Any]:
        return m.decode(m.encode({k: self.summarizer.summarize(v) for k, v in values.items()})[m.HEADER_SIZE:])


@pytest.fixture
def frame() -> Frame:
    return Frame()


@pytest.fixture
def view(qtbot):
    widget = VariablesView()
    qtbot.addWidget(widget)
    widget.resize(1100, 500)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def cell(view: VariablesView, path: str, column: int, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
    index = view.model.index_for_path(path)
    assert index.isValid(), f"no row {path!r}; rows: {view.model.paths()}"
    return index.siblingAtColumn(column).data(role)


def row_names(view: VariablesView) -> list[str]:
    model = view.model
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def click_row(qtbot, view: VariablesView, path: str) -> None:
    index = view.model.index_for_path(path)
    view.tree.scrollTo(index)
    qtbot.mouseClick(view.tree.viewport(), Qt.MouseButton.LeftButton, pos=view.tree.visualRect(index).center())


def test_a_tensor_is_one_dense_row_with_every_flag(view, frame):
    x = torch.tensor([[0.5, -1.25, 3.0], [1.0, 2.0, 4.0]], requires_grad=True)
    y = x * 2
    view.set_snapshot(frame(x=x, y=y, n=3, name="adam"), {})

    value = cell(view, ":x", VALUE)
    assert value == "tensor[2, 3] f32 μ=1.54 σ=1.87 [0.5, -1.25, 3, 1, …]"
    assert [cell(view, ":x", c) for c in (SHAPE, DTYPE, DEVICE, REQUIRES_GRAD, IS_LEAF, GRAD_FN, GRAD, VERSION)] == \
        ["[2, 3]", "float32", "cpu", "True", "True", "None", "none", "0"]
    assert [cell(view, ":y", c) for c in (IS_LEAF, GRAD_FN, GRAD)] == ["False", "MulBackward0", "non-leaf"]
    assert cell(view, ":n", VALUE) == "3" and cell(view, ":name", VALUE) == "'adam'"
    assert cell(view, ":n", SHAPE) == ""


def test_every_flag_is_explained_in_one_sentence(view, frame):
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    view.set_snapshot(frame(x=x, y=y), {})
    tip = Qt.ItemDataRole.ToolTipRole
    assert cell(view, ":x", REQUIRES_GRAD, tip) == \
        "autograd records operations on this tensor so gradients can flow back to it"
    assert cell(view, ":x", IS_LEAF, tip) == \
        "created by you, not by an operation: backward() stores its gradient in .grad"
    assert cell(view, ":y", GRAD_FN, tip) == "the autograd node that made this tensor; backward() starts here"
    assert "retain_grad()" in cell(view, ":y", GRAD, tip)
    assert "in-place" in cell(view, ":x", VERSION, tip)
    assert all(view.model.headerData(c, Qt.Orientation.Horizontal, tip) for c in range(len(HEADERS)))


def test_the_grad_column_shows_the_gradient_a_backward_left(qtbot, view, frame):
    """Lesson 07 says "compare it with w.grad": the column said "has grad", and the value was nowhere in Variables."""
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w ** 3 - 4 * w ** 2 + 0 * w).sum().backward()  # d/dw = 3w² - 8w: [-5, -4, 3]
    big = torch.ones(8, 16, requires_grad=True)
    (big * torch.arange(128.0).reshape(8, 16)).sum().backward()
    view.set_snapshot(frame(w=w, big=big, fresh=torch.ones(2, requires_grad=True)), {})
    assert cell(view, ":w", GRAD) == "[-5, -4, 3]"
    assert cell(view, ":big", GRAD) == "[8, 16] μ=63.5 σ=37.09"
    assert cell(view, ":fresh", GRAD) == "none"
    tip = cell(view, ":big", GRAD, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(".grad holds the gradient") and "127" in tip  # every value, up to a few hundred
    click_row(qtbot, view, ":w")
    assert "grad\u00a0[-5, -4, 3]" in view.details.text()


def test_a_variable_the_step_made_below_the_rows_in_view_is_brought_into_sight(qtbot, view, frame):
    """Lesson 01 past line 184: leaf and safe_root appeared under the rows in view, and the table kept showing
    a to result, so the learner did not see what the line made."""
    view.resize(700, 220)
    values = {f"v{i:02d}": torch.full((2,), float(i)) for i in range(30)}
    first = frame(**values)
    view.set_snapshot(first, {})
    tree = view.tree

    def in_sight(path: str) -> bool:
        return tree.viewport().rect().intersects(tree.visualRect(view.model.index_for_path(path)))

    assert in_sight(":v00") and not in_sight(":v29")
    second = {**first, "leaf": frame(leaf=torch.ones(3, requires_grad=True))["leaf"]}
    view.set_snapshot(second, {}, {"vars": first, "globals": {}})
    qtbot.waitUntil(lambda: in_sight(":leaf"))
    tree.scrollToTop()  # the learner looks at the top again: a step that makes nothing new leaves the view alone
    third = {**second, "v05": frame(v05=torch.zeros(2))["v05"]}
    view.set_snapshot(third, {}, {"vars": second, "globals": {}})
    assert in_sight(":v00") and not in_sight(":leaf")


def test_nan_and_inf_turn_the_value_red_with_a_badge(view, frame):
    bad = torch.tensor([1.0, float("nan"), float("inf"), float("nan")])
    view.set_snapshot(frame(bad=bad, good=torch.ones(2)), {})
    assert "NaN×2 Inf×1" in cell(view, ":bad", VALUE)
    assert cell(view, ":bad", VALUE, Qt.ItemDataRole.ForegroundRole) == ALARM_RED
    assert "NaN (not a number)" in cell(view, ":bad", VALUE, Qt.ItemDataRole.ToolTipRole)
    assert cell(view, ":good", VALUE, Qt.ItemDataRole.ForegroundRole) is None


def test_modules_lists_dicts_and_packed_sequences_expand_to_what_evaluates_to_each_item(view, frame):
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    net = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    xs = [torch.zeros(2), torch.ones(3)]
    d = {"k": torch.ones(1), "lr": 0.1}
    packed = nn.utils.rnn.pack_sequence([torch.ones(3), torch.ones(2)])
    view.set_snapshot(frame(model=model, net=net, xs=xs, d=d, packed=packed), {})
    paths = view.model.paths()
    for expected in (":model.weight", ":model.bias", ":net[0].weight", ":xs[0]", ":xs[1]", ":d['k']", ":d['lr']",
                     ":packed.data", ":packed.batch_sizes"):
        assert expected in paths
    assert cell(view, ":model.weight", VALUE).startswith("Parameter[2, 3] f32")
    assert cell(view, ":model", VALUE).startswith("Linear(in_features=3, out_features=2, bias=True) · 2 tensors")
    assert cell(view, ":xs", VALUE) == "list · 2 items"
    assert cell(view, ":d['lr']", VALUE) == "0.1"


def test_choosing_a_tensor_row_emits_its_expression_and_summary(qtbot, view, frame):
    model = nn.Linear(3, 2)
    xs = [torch.zeros(2), torch.arange(3.0)]
    view.set_snapshot(frame(model=model, xs=xs, n=1), {})

    click_row(qtbot, view, ":xs")
    qtbot.keyClick(view.tree, Qt.Key.Key_Right)  # expand
    with qtbot.waitSignal(view.tensor_selected) as blocker:
        qtbot.keyClick(view.tree, Qt.Key.Key_Down)
    assert blocker.args[0] == "xs[0]" and blocker.args[1]["shape"] == [2]
    with qtbot.waitSignal(view.tensor_selected) as blocker:
        qtbot.keyClick(view.tree, Qt.Key.Key_Down)
    assert blocker.args[0] == "xs[1]" and blocker.args[1]["values"].tolist() == [0.0, 1.0, 2.0]

    view.tree.expandAll()
    with qtbot.waitSignal(view.tensor_selected) as blocker:
        click_row(qtbot, view, ":model.weight")
    assert blocker.args[0] == "model.weight" and blocker.args[1]["type"] == "Parameter"
    with qtbot.assertNotEmitted(view.tensor_selected):
        click_row(qtbot, view, ":n")


def test_what_changed_since_the_last_pause_is_tinted_and_says_what(view, frame):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.zeros(3)
    h = x * 2
    xs = [torch.zeros(1), torch.ones(1)]
    first = frame(x=x, w=w, h=h, n=1, same=5, xs=xs)
    view.set_snapshot(first, {})
    assert all(cell(view, p, NAME, Qt.ItemDataRole.BackgroundRole) is None for p in view.model.paths())

    h = x + 1
    h.sum().backward()
    w.add_(1)
    xs[1] = torch.full((1,), 7.0)
    view.set_snapshot(frame(x=x, w=w, h=h, n=2, same=5, xs=xs, loss=h.sum()), {}, before={"vars": first, "globals": {}})

    def change(path: str) -> str:
        assert cell(view, path, VALUE, Qt.ItemDataRole.BackgroundRole) is not None, path
        assert cell(view, path, NAME, Qt.ItemDataRole.FontRole).bold()
        return cell(view, path, NAME, Qt.ItemDataRole.ToolTipRole).split("Changed by the step that led here: ")[1]

    assert change(":x") == ".grad appeared"
    assert change(":w") == "changed in place (_version 1)"
    assert change(":h") == "new value; new grad_fn: AddBackward0"
    assert change(":n") == "new value"
    assert change(":loss") == "new name"
    assert change(":xs[1]") == "new value"
    assert change(":xs") == "changed inside: xs[1]"
    assert cell(view, ":same", NAME, Qt.ItemDataRole.BackgroundRole) is None
    assert cell(view, ":xs[0]", NAME, Qt.ItemDataRole.BackgroundRole) is None


def test_another_frame_or_run_marks_nothing_changed(view, frame):
    view.set_snapshot(frame(n=1), {})
    view.set_snapshot(frame(n=2, m=3), {})  # no step before it in this frame
    assert cell(view, ":n", NAME, Qt.ItemDataRole.BackgroundRole) is None
    assert cell(view, ":m", NAME, Qt.ItemDataRole.BackgroundRole) is None


def test_locals_and_globals_are_grouped_apart_except_in_the_module_frame(view, frame):
    view.set_snapshot(frame(a=1, t=torch.ones(1)), frame(g=2))
    assert row_names(view) == ["Locals", "Globals"]
    assert ["Locals:a", "Locals:t", "Globals:g"] == [p for p in view.model.paths() if ":" in p]
    assert (cell(view, "Locals", VALUE), cell(view, "Globals", VALUE)) == ("2 variables", "1 variable")
    view.set_snapshot(frame(a=1, g=2), {})
    assert row_names(view) == ["a", "g"]
    view.clear()
    assert view.model.rowCount() == 0


def test_group_rows_and_grad_states_are_words_of_the_interface_language(qtbot, view, frame):
    """In 中文 the Locals/Globals rows, their counts and the grad column's states were English."""
    from app import i18n

    w = torch.ones(2, requires_grad=True)
    view.set_snapshot(frame(w=w, h=w * 2), frame(g=2))
    i18n.set_language("zh")
    with qtbot.waitSignal(view.model.layoutChanged):
        view.retranslate()
    assert (cell(view, "Locals", NAME), cell(view, "Globals", NAME)) == ("局部变量", "全局变量")
    assert (cell(view, "Locals", VALUE), cell(view, "Globals", VALUE)) == ("2 个变量", "1 个变量")
    assert (cell(view, "Locals:w", GRAD), cell(view, "Locals:h", GRAD)) == ("无", "非叶子")
    i18n.set_language("en")
    assert cell(view, "Locals:w", GRAD) == "none" and "Locals:w" in view.model.paths()


def test_the_counts_of_containers_and_modules_are_worded_per_language_and_per_plural(qtbot, view, frame):
    """Variables said "list · 6 items" in 中文 and "list · 1 items" in English."""
    from app import i18n

    one, six = [torch.ones(2)], [torch.ones(2)] * 6
    view.set_snapshot(frame(one=one, six=six, lin=nn.Linear(1, 1, bias=False).eval()), {})
    assert (cell(view, ":one", VALUE), cell(view, ":six", VALUE)) == ("list · 1 item", "list · 6 items")
    assert cell(view, ":lin", VALUE).endswith(" · 1 tensor, 1 value, eval mode")
    i18n.set_language("zh")
    try:
        view.retranslate()  # the rows already shown are worded again, not only the next pause's
        assert (cell(view, ":one", VALUE), cell(view, ":six", VALUE)) == ("list · 1 项", "list · 6 项")
        assert cell(view, ":lin", VALUE).endswith(" · 1 个张量，1 个值，eval 模式")
        view.set_snapshot(frame(one=one, six=six * 2, lin=nn.Linear(2, 2)), {})
        assert cell(view, ":six", VALUE) == "list · 12 项"
        assert cell(view, ":lin", VALUE).endswith(" · 2 个张量，6 个值")
    finally:
        i18n.set_language("en")


def test_an_optimizer_row_says_its_settings_and_how_many_tensors_it_updates(view, frame):
    """The row of opt = torch.optim.SGD(model.parameters(), lr=0.1) read "SGD (": its repr's first line."""
    model = nn.Linear(3, 1)
    adam = torch.optim.Adam([{"params": [model.weight]}, {"params": [model.bias], "lr": 1.0}])
    view.set_snapshot(frame(opt=torch.optim.SGD(model.parameters(), lr=0.1), adam=adam), {})
    assert cell(view, ":opt", VALUE) == "SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, …) · 2 tensors"
    assert cell(view, ":adam", VALUE).startswith("Adam(lr=0.001, betas=(0.9, 0.999), eps=1e-08, ")
    assert cell(view, ":adam", VALUE).endswith(") · 2 parameter groups, 2 tensors")
    tip = cell(view, ":opt", VALUE, Qt.ItemDataRole.ToolTipRole)
    assert "Parameter Group 0" in tip and "nesterov: False" in tip  # the whole repr


def test_the_filter_box_matches_names_ignoring_case(qtbot, view, frame):
    model = nn.Linear(2, 1)
    view.set_snapshot(frame(x=torch.ones(1), xs=[1, 2], loss=torch.zeros(()), model=model), {})
    box = view.findChild(QLineEdit, "variables_filter")
    qtbot.keyClicks(box, "LOS")
    assert row_names(view) == ["loss"]
    box.clear()
    qtbot.keyClicks(box, "x")
    assert row_names(view) == ["x", "xs"]
    box.clear()
    qtbot.keyClicks(box, "Bias")  # a parameter's name keeps its module
    assert row_names(view) == ["model"]
    box.clear()
    assert row_names(view) == ["x", "xs", "loss", "model"]


def test_expanded_rows_the_current_row_and_the_scroll_position_survive_a_pause(qtbot, view, frame):
    values = {f"v{i:03d}": i for i in range(200)}
    xs = [torch.zeros(2), torch.ones(2)]
    view.set_snapshot(frame(xs=xs, model=nn.Linear(2, 2), **values), {})
    view.tree.expand(view.model.index_for_path(":xs"))
    view.tree.expand(view.model.index_for_path(":model"))
    click_row(qtbot, view, ":xs[1]")
    view.tree.verticalScrollBar().setValue(40)

    xs[1] = torch.full((2,), 3.0)
    with qtbot.assertNotEmitted(view.tensor_selected):
        view.set_snapshot(frame(xs=xs, model=nn.Linear(2, 2), **values), {})

    assert view.tree.isExpanded(view.model.index_for_path(":xs"))
    assert view.tree.isExpanded(view.model.index_for_path(":model"))
    assert view.current_expression() == "xs[1]"
    assert view.tree.currentIndex().data(SUMMARY_ROLE)["values"].tolist() == [3.0, 3.0]
    assert view.tree.verticalScrollBar().value() == 40

    view.tree.collapse(view.model.index_for_path(":model"))
    view.set_snapshot(frame(xs=xs, model=nn.Linear(2, 2), **values), {})
    assert not view.tree.isExpanded(view.model.index_for_path(":model"))


def test_a_pause_with_the_same_variables_updates_the_rows_in_place(qtbot, view, frame):
    a, b = torch.zeros(2), torch.ones(2)
    first = frame(a=a, b=b, t=0)
    view.set_snapshot(first, {})
    row_a = view.model.index_for_path(":a")
    a.add_(5)
    with qtbot.assertNotEmitted(view.model.modelReset), qtbot.waitSignal(view.model.dataChanged):
        view.set_snapshot(frame(a=a, b=b, t=1), {}, before={"vars": first, "globals": {}})
    assert view.model.index_for_path(":a") == row_a  # the very row, not a new one
    assert view.model.index_for_path(":a").data(SUMMARY_ROLE)["values"].tolist() == [5.0, 5.0]
    assert cell(view, ":a", VERSION) == "1"
    assert cell(view, ":a", VALUE, Qt.ItemDataRole.BackgroundRole) is not None  # tinted: it changed
    assert cell(view, ":b", VALUE, Qt.ItemDataRole.BackgroundRole) is None
    with qtbot.waitSignal(view.model.modelReset):  # a new name: laid out anew
        view.set_snapshot(frame(a=a, b=b, t=2, c=a), {})
    assert row_names(view) == ["a", "b", "t", "c"]


def test_columns_hide_from_the_header_menu_and_the_header_state_restores_them(qtbot, view, frame):
    view.set_snapshot(frame(x=torch.ones(1)), {})
    header = view.tree.header()
    header.customContextMenuRequested.emit(QPoint(20, 5))
    menu = view.findChild(QMenu, "column_menu")
    qtbot.waitUntil(menu.isVisible)
    device = next(a for a in menu.actions() if a.text() == "device")
    device.trigger()
    menu.close()
    assert header.isSectionHidden(DEVICE) and not device.isChecked()
    view.set_snapshot(frame(x=torch.zeros(1)), {})  # a new model keeps the choice
    assert header.isSectionHidden(DEVICE)

    other = VariablesView()
    qtbot.addWidget(other)
    assert other.restore_header_state(view.header_state())
    assert other.tree.header().isSectionHidden(DEVICE)
    assert not next(a for a in other.column_menu.actions() if a.text() == "device").isChecked()
    assert not other.tree.header().isSectionHidden(GRAD)


def test_hovering_a_row_names_its_variable_for_the_graph(qtbot, view, frame):
    view.set_snapshot(frame(model=nn.Linear(2, 2), x=torch.ones(1)), {})
    view.tree.expandAll()
    hovered: list[str] = []
    view.variable_hovered.connect(hovered.append)
    viewport = view.tree.viewport()
    weight = view.tree.visualRect(view.model.index_for_path(":model.weight")).center()
    qtbot.mouseMove(viewport, weight)
    qtbot.waitUntil(lambda: hovered[-1:] == ["model"])
    qtbot.mouseMove(viewport, view.tree.visualRect(view.model.index_for_path(":x")).center())
    qtbot.waitUntil(lambda: hovered[-1:] == ["x"])
    qtbot.mouseMove(view.tree.header(), QPoint(5, 5))
    QApplication.processEvents()
    qtbot.waitUntil(lambda: hovered[-1:] == [""])


def test_a_tensor_without_readable_values_says_why_in_its_row(view, frame):
    meta = torch.empty(1000, 1000, device="meta")
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged)
    view.set_snapshot(frame(meta=meta, nested=nested), {})
    assert cell(view, ":meta", VALUE) == "tensor[1000, 1000] f32 · a meta tensor has a shape and a dtype but no data"
    assert cell(view, ":nested", VALUE).startswith("tensor[2, j")
    assert "jagged · a nested tensor holds tensors of different shapes" in cell(view, ":nested", VALUE)
    assert "no data" in cell(view, ":meta", VALUE, Qt.ItemDataRole.ToolTipRole)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_a_sparse_tensor_row_shows_its_layout_and_stored_count(view, frame):
    s = torch.sparse_coo_tensor([[0, 19999], [0, 19999]], [1.0, 2.0], (20000, 20000), check_invariants=True)
    view.set_snapshot(frame(s=s, csr=s.coalesce().to_sparse_csr()), {})
    assert cell(view, ":s", VALUE).startswith("tensor[20000, 20000] f32 sparse_coo nnz=2")
    assert cell(view, ":csr", VALUE).startswith("tensor[20000, 20000] f32 sparse_csr nnz=2")
    assert "(index, value) entries" in cell(view, ":s", VALUE, Qt.ItemDataRole.ToolTipRole)


def test_statistics_of_a_sampled_view_are_marked_approximate(view, frame):
    torch.manual_seed(0)
    view.set_snapshot(frame(strided=torch.randn(4000, 3000)[:, ::3], whole=torch.randn(20_000)), {})
    assert "μ≈" in cell(view, ":strided", VALUE) and "σ≈" in cell(view, ":strided", VALUE)
    assert "sample" in cell(view, ":strided", VALUE, Qt.ItemDataRole.ToolTipRole)
    assert "μ=" in cell(view, ":whole", VALUE)


def test_a_module_with_more_parameters_than_listed_says_how_many_it_has(view, frame):
    net = nn.Sequential(*[nn.Linear(2, 2) for _ in range(500)])
    view.set_snapshot(frame(net=net), {})
    assert "· 1,000 tensors, the first 200 listed" in cell(view, ":net", VALUE)


def test_a_non_leaf_that_retained_its_grad_shows_it_after_backward(window_on, qtbot):
    """Lessons 03 and 07 call retain_grad() and point at the .grad the app never showed."""
    from test_main_window import wait_paused

    window = window_on("import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\nh = x * 3\n"
                       "h.retain_grad()\nh.sum().backward()\ndone = True\n")
    window.code_view.go_to_line(6)
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 6)
    view = window.variables_view
    assert cell(view, ":h", GRAD) == "[1, 1]"
    assert window.run.live["vars"]["h"]["grad"]["values"].tolist() == [1.0, 1.0]


TRAIN = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3)
y = torch.randn(8, 1)
pred = model(x)
pred.retain_grad()
loss = ((pred - y) ** 2).mean()
loss.backward()
done = 1
"""


def elided(view: VariablesView) -> list[tuple[str, str]]:
    """(path, header) of the cells drawn cut with "…": their text is wider than the column leaves it."""
    tree, model = view.tree, view.model
    header = tree.header()
    margin = 2 * (tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree) + 1)
    cut = []
    for path in model.paths():
        index = model.index_for_path(path)
        for column in range(1, len(HEADERS)):
            text = index.siblingAtColumn(column).data()
            font = index.siblingAtColumn(column).data(Qt.ItemDataRole.FontRole) or tree.font()
            if text and not header.isSectionHidden(column) \
                    and QFontMetrics(font).horizontalAdvance(text) > header.sectionSize(column) - margin:
                cut.append((path, HEADERS[column]))
    return cut


def room_left(view: VariablesView) -> int:
    """Pixels of the viewport right of the last column, beyond those kept for a vertical scroll bar."""
    tree = view.tree
    bar = 0 if tree.verticalScrollBar().isVisible() else \
        tree.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, tree)
    return tree.viewport().width() - bar - tree.header().length()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_columns_fit_their_content_when_the_pane_has_room(qtbot, window_on, language):
    """At 1920 the grad column read "retains gr…" and grad_fn "AddmmBackwa…", with empty space to
    their right; also after a restart that restored widths saved in a narrower window."""
    from test_main_window import wait_paused

    window = window_on(TRAIN, "train.py")
    window.set_language(language)
    window.resize(1280, 800)
    window.code_view.go_to_line(11)  # before backward(): pred retains grad
    window.commands.run_to_cursor()
    wait_paused(qtbot, window, 11)
    view = window.variables_view
    assert cell(view, ":pred", GRAD) in ("retains grad", "保留梯度")
    assert cell(view, ":pred", GRAD_FN) == "AddmmBackward0"
    narrow, narrow_width = view.header_state(), view.tree.viewport().width()
    assert view.details.isVisible()
    window.resize(1920, 1080)  # most of the extra width goes to the graph; the strip under the code widens too
    qtbot.waitUntil(lambda: view.tree.viewport().width() > narrow_width + 80)
    qtbot.waitUntil(lambda: not [c for c in elided(view) if c[1] != "Value"])
    assert not elided(view) or room_left(view) <= 0  # a value is cut only when the columns fill the pane
    view.restore_header_state(narrow)  # a restart in a wider window
    assert not [c for c in elided(view) if c[1] != "Value"]
    assert not elided(view) or room_left(view) <= 0
