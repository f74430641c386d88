"""The watch list: adding, editing and removing expressions; results, changes and stop-on-change."""

from __future__ import annotations

import pytest
import torch
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QStyle, QStyleOptionViewItem

from app.lesson.summaries import Summarizer
from widgets.watch_view import WatchModel, WatchView


@pytest.fixture
def watch(qtbot) -> WatchView:
    view = WatchView()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def ok(value) -> dict:
    return {"ok": True, "value": Summarizer().summarize(value)}


def cell(view: WatchView, row: int, column: int, role=Qt.ItemDataRole.DisplayRole):
    return view.model.data(view.model.index(row, column), role)


def check_box_centre(view: WatchView, row: int) -> QPoint:
    """Where the "Stop on change" box of ``row`` is drawn, in viewport coordinates."""
    index = view.model.index(row, WatchModel.STOP)
    option = QStyleOptionViewItem()
    option.rect = view.tree.visualRect(index)
    view.tree.itemDelegate().initStyleOption(option, index)
    style = view.tree.style()
    return style.subElementRect(QStyle.SubElement.SE_ItemViewItemCheckIndicator, option, view.tree).center()


def add(qtbot, view: WatchView, expression: str) -> None:
    qtbot.keyClicks(view.entry, expression)
    with qtbot.waitSignal(view.expressions_changed):
        qtbot.keyClick(view.entry, Qt.Key.Key_Return)


def test_add_with_enter_or_the_button_and_no_duplicates(qtbot, watch):
    add(qtbot, watch, "loss")
    qtbot.keyClicks(watch.entry, "w.grad")
    with qtbot.waitSignal(watch.expressions_changed) as changed:
        qtbot.mouseClick(watch.add_button, Qt.MouseButton.LeftButton)
    assert changed.args == [["loss", "w.grad"]]
    assert watch.entry.text() == ""
    with qtbot.assertNotEmitted(watch.expressions_changed):
        qtbot.keyClicks(watch.entry, "loss")
        qtbot.keyClick(watch.entry, Qt.Key.Key_Return)
        qtbot.keyClick(watch.entry, Qt.Key.Key_Return)  # empty: nothing
    assert watch.expressions() == ["loss", "w.grad"]
    assert cell(watch, 1, WatchModel.VALUE) == "…"  # evaluated at the next pause


def test_delete_key_and_context_menu_remove(qtbot, watch):
    for expression in ["a", "b", "c"]:
        add(qtbot, watch, expression)
    watch.tree.setCurrentIndex(watch.model.index(1, 0))
    watch.tree.setFocus()
    qtbot.waitUntil(watch.tree.hasFocus)
    with qtbot.waitSignal(watch.expressions_changed) as changed:
        qtbot.keyClick(watch.tree, Qt.Key.Key_Delete)
    assert changed.args == [["a", "c"]]
    assert watch.remove_action in watch.tree.actions()  # the context menu shows the tree's actions
    assert watch.tree.contextMenuPolicy() == Qt.ContextMenuPolicy.ActionsContextMenu
    watch.tree.setCurrentIndex(watch.model.index(0, 1))
    watch.remove_action.trigger()
    assert watch.expressions() == ["c"]


def test_double_click_edits_an_expression(qtbot, watch):
    add(qtbot, watch, "x")
    add(qtbot, watch, "y")
    watch.set_result("x", ok(1))
    rect = watch.tree.visualRect(watch.model.index(0, WatchModel.VALUE))
    qtbot.mouseClick(watch.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(watch.tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: isinstance(QApplication.focusWidget(), QLineEdit)
                    and QApplication.focusWidget() is not watch.entry)
    editor = QApplication.focusWidget()
    assert editor.text() == "x"
    editor.selectAll()
    qtbot.keyClicks(editor, "x.grad")
    with qtbot.waitSignal(watch.expressions_changed) as changed:
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert changed.args == [["x.grad", "y"]]
    assert cell(watch, 0, WatchModel.VALUE) == "…"  # the old result belonged to the old expression

    watch.tree.setCurrentIndex(watch.model.index(0, 0))
    with qtbot.assertNotEmitted(watch.expressions_changed):  # renaming onto another watch is refused
        assert not watch.model.setData(watch.model.index(0, 0), "y")


def test_results_are_shown_compactly(qtbot, watch):
    watch.set_expressions(["h", "n", "oops", "w"])
    x = torch.ones(2, 3, requires_grad=True)
    watch.set_result("h", ok(x * 2))
    watch.set_result("n", ok(3))
    watch.set_result("oops", {"ok": False, "error": {"type": "NameError", "message": "name 'oops' is not defined"}})
    w = torch.nn.Parameter(torch.tensor([0.5, -1.0]))
    w.grad = torch.tensor([1.0, 1.0])
    watch.set_result("w", ok(w))
    assert cell(watch, 0, WatchModel.VALUE) == "tensor[2,3] f32 μ=2 σ=0 grad_fn=MulBackward0"
    assert cell(watch, 1, WatchModel.VALUE) == "3"
    assert cell(watch, 2, WatchModel.VALUE) == "NameError: name 'oops' is not defined"
    assert cell(watch, 3, WatchModel.VALUE) == "param[2] f32 [0.5, -1] requires_grad has .grad"
    error_colour = cell(watch, 2, WatchModel.VALUE, Qt.ItemDataRole.ForegroundRole)
    assert error_colour.red() > 150 and error_colour.green() < 100
    assert cell(watch, 0, WatchModel.VALUE, Qt.ItemDataRole.ForegroundRole) is None


def test_a_changed_value_is_highlighted(qtbot, watch):
    watch.set_expressions(["loss", "step"])
    watch.set_result("loss", ok(torch.tensor([1.0, 2.0])))
    watch.set_result("step", ok(1))
    background = Qt.ItemDataRole.BackgroundRole
    assert cell(watch, 0, WatchModel.VALUE, background) is None  # a first value is not a change
    watch.set_result("loss", ok(torch.tensor([2.0, 1.0])))  # same statistics, other values
    watch.set_result("step", ok(1))
    assert cell(watch, 0, WatchModel.VALUE, background) is not None
    assert cell(watch, 1, WatchModel.VALUE, background) is None
    watch.set_result("loss", ok(torch.tensor([2.0, 1.0])))  # an equal new tensor is no change
    assert cell(watch, 0, WatchModel.VALUE, background) is None


def test_a_module_whose_weights_changed_is_highlighted_as_stop_on_change_would_stop_there(qtbot, watch):
    """The lesson stops a run where a watched module's weights change; the list showed it unchanged (same repr)."""
    summarizer = Summarizer()
    model = torch.nn.Linear(2, 1)
    watch.set_expressions(["model"])
    watch.set_result("model", {"ok": True, "value": summarizer.summarize(model)})
    with torch.no_grad():
        model.weight.add_(1)
    watch.set_result("model", {"ok": True, "value": summarizer.summarize(model)})
    assert cell(watch, 0, WatchModel.VALUE, Qt.ItemDataRole.BackgroundRole) is not None
    assert "Changed since the previous pause." in cell(watch, 0, WatchModel.VALUE, Qt.ItemDataRole.ToolTipRole)


def test_stop_on_change_is_ticked_per_expression(qtbot, watch):
    for expression in ["a", "b", "c"]:
        add(qtbot, watch, expression)
    with qtbot.waitSignal(watch.stop_on_change_changed) as toggled:
        qtbot.mouseClick(watch.tree.viewport(), Qt.MouseButton.LeftButton, pos=check_box_centre(watch, 0))
    assert toggled.args == [["a"]]
    watch.model.setData(watch.model.index(1, WatchModel.STOP), Qt.CheckState.Checked.value,
                        Qt.ItemDataRole.CheckStateRole)
    assert watch.stop_on_change() == ["a", "b"]

    for expression in ["a", "b", "c"]:
        watch.set_result(expression, ok(1))
    watch.set_result("a", ok(2))
    watch.set_result("b", {"ok": False, "error": {"type": "ZeroDivisionError", "message": "division by zero"}})
    watch.set_result("c", ok(1))
    changed = [cell(watch, row, WatchModel.VALUE, Qt.ItemDataRole.BackgroundRole) is not None for row in range(3)]
    assert changed == [True, True, False]  # a new value and a new error change; the same value does not


def test_set_expressions_restores_a_saved_list(qtbot, watch):
    watch.set_expressions(["x", " ", "y", "x"], stop_on_change=["y"])
    assert watch.expressions() == ["x", "y"]
    assert watch.stop_on_change() == ["y"]
    assert cell(watch, 1, WatchModel.STOP, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
