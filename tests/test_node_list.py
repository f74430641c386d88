"""The node list: the autograd graph as a table beside the drawing, in step with it, walkable by keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPlainTextEdit

from app import i18n
from app.graph_model import GraphModel
from widgets.node_list import NodeList


def node(node_id: int, name: str, *inputs: int, kind: str = "op", **extra) -> dict:
    return {"id": node_id, "name": name, "kind": kind, "next": [[i, 0] for i in inputs], "variables": [],
            "variable": None, "origin": None, "saved": [], **extra}


def graph() -> dict:
    """``z = x * y + x``: AddBackward0 (4) takes MulBackward0 (3) and x (1); Mul takes x and y (2)."""
    return {"nodes": [node(1, "AccumulateGrad", kind="leaf", variable="x", leaf={"requires_grad": True}),
                      node(2, "AccumulateGrad", kind="leaf", variable="y", leaf={"requires_grad": True}),
                      node(3, "MulBackward0", 1, 2, saved=[{"name": "self"}, {"name": "other"}],
                           origin={"file": "l.py", "line": 7, "pass": 2}),
                      node(4, "AddBackward0", 3, 1)],
            "edges": [], "roots": {"z": 4}, "leaves": {1: "x", 2: "y"}}


@pytest.fixture
def listed(qtbot):
    model = GraphModel()
    view = NodeList(model)
    qtbot.addWidget(view)
    view.resize(700, 300)
    view.show()
    model.set_graph(graph(), new=[4])
    return model, view


def cells(view: NodeList, row: int) -> list[str]:
    return [view.proxy.index(row, column).data() for column in range(view.proxy.columnCount())]


def test_one_row_per_node_in_creation_order_saying_what_made_it_what_it_saves_and_its_inputs(listed):
    model, view = listed
    assert view.row_count() == len(model.nodes) == 4
    assert cells(view, 2) == ["MulBackward0", "line 7 · pass 2", "True", "", "self and other",
                              "AccumulateGrad (x) and AccumulateGrad (y)"]
    assert cells(view, 0)[:4] == ["AccumulateGrad (x)", "", "True", "leaf"]
    assert cells(view, 3)[0] == "★ AddBackward0 (z)"  # new this step
    model.apply_diff({"changed": True, "added": [node(5, "SumBackward0", 4)], "removed": [], "updated": [],
                      "roots": {"z": 4, "loss": 5}, "leaves": {1: "x", 2: "y"}})
    assert view.row_count() == 5 and cells(view, 4)[0] == "★ SumBackward0 (loss)" and cells(view, 3)[0] == \
        "AddBackward0 (z)"


def test_selecting_a_row_selects_the_node_and_back(qtbot, listed):
    model, view = listed
    view.table.setCurrentIndex(view.proxy.index(2, 0))
    assert model.selected == 3
    model.select(1)
    assert view.table.currentIndex().row() == 0


def test_the_keyboard_walks_the_edges_from_the_table_and_enter_asks_for_details(qtbot, listed):
    model, view = listed
    view.table.setFocus()
    model.select(4)
    qtbot.keyClick(view.table, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert model.selected == 3  # AddBackward0's first input
    qtbot.keyClick(view.table, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert model.selected == 1
    qtbot.keyClick(view.table, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    assert model.selected == 2  # the sibling input of MulBackward0
    qtbot.keyClick(view.table, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert model.selected == 3 and view.table.currentIndex().row() == 2
    with qtbot.waitSignal(view.details_requested) as asked:
        qtbot.keyClick(view.table, Qt.Key.Key_Return)
    assert asked.args == [3]


def test_filters_by_text_and_by_new_this_step_and_sorts(qtbot, listed):
    model, view = listed
    view.filter_edit.setText("accumulate")
    assert view.row_count() == 2
    view.filter_edit.clear()
    view.new_check.setChecked(True)
    assert view.row_count() == 1 and cells(view, 0)[0] == "★ AddBackward0 (z)"
    model.select(4)
    qtbot.keyClick(view.table, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert model.selected == 3 and not view.new_check.isChecked()  # the walk left the filter: all rows again
    view.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
    assert cells(view, 0)[0] == "★ AddBackward0 (z)" and cells(view, 3)[0] == "AccumulateGrad (x)"


def test_the_headers_and_names_follow_the_language(listed):
    model, view = listed
    try:
        i18n.set_language("zh")
        view.retranslate()
        headers = [view.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(view.proxy.columnCount())]
        assert headers[0] == i18n.tr("Node") != "Node" and view.table.accessibleName() != "Autograd graph nodes"
        assert cells(view, 0)[3] == i18n.tr("leaf") != "leaf"
    finally:
        i18n.set_language("en")
        view.retranslate()
    assert view.table.accessibleName() == "Autograd graph nodes"


def test_in_the_window_the_list_has_a_row_per_drawn_node_and_follows_the_graphs_selection(qtbot, open_window):
    """Lesson 03 stepped into its loop: the list beside the graph holds every node, in English and in 中文."""
    import re
    from pathlib import Path

    from test_main_window import wait_paused

    lesson = Path(__file__).resolve().parent.parent / "lessons" / "03_loops.py"
    window = open_window(lesson)
    window.act_ask_predictions.setChecked(False)
    window.toggle_predictions()
    lines = lesson.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if re.match(r"\s+h_t = torch.tanh", text))
    window.code_view.toggle_breakpoint(line)
    window.act_run_to_end.trigger()
    wait_paused(qtbot, window)
    for _ in range(4):
        window.act_start.trigger()  # to the breakpoint again: one more pass of the loop
        wait_paused(qtbot, window)
    nodes = window.node_list
    qtbot.waitUntil(lambda: nodes.row_count() == len(window.graph_view._scene.drawn) > 10)
    window.docks["nodes"].raise_()
    nodes.table.setCurrentIndex(nodes.proxy.index(3, 0))
    selected = nodes.proxy.index(3, 0).data(Qt.ItemDataRole.UserRole)
    details = window.graph_view.findChild(QPlainTextEdit, "graph_details")
    assert window.graph_model.selected == selected  # the drawing shows it: its details
    assert details.toPlainText().startswith(window.graph_model.nodes[selected]["name"])
    window.set_language("zh")
    assert window.docks["nodes"].windowTitle() == "图节点"
    assert nodes.row_count() == len(window.graph_view._scene.drawn)
    window.set_language("en")
