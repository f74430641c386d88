"""Every node tied to the code that made it: origin boxes, collapsing them, and the links to the code view."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from origin_graphs import FILE, LOSS_LINE, STEP_LINE, origin, rnn_with_origins  # noqa: E402
from PySide6.QtCore import QPoint, QRectF, Qt  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtWidgets import QGraphicsView, QPlainTextEdit  # noqa: E402
from test_graph_layout import rnn_graph  # noqa: E402
from test_graph_view import boxes, canvas, make_view, shown  # noqa: E402

from widgets.code_view import CodeView  # noqa: E402
from widgets.graph_items import PALETTE, EdgeChunk, OriginBox  # noqa: E402
from widgets.graph_view import GraphView  # noqa: E402

EMPTY = {"nodes": [], "edges": [], "roots": {}}


@pytest.fixture
def view(qtbot):
    return make_view(qtbot, 900, 800)


def origin_boxes(view: GraphView) -> dict[str, OriginBox]:
    return {item.label: item for item in canvas(view).scene().items() if isinstance(item, OriginBox)}


def step(diffs: list[dict], number: int) -> set[int]:
    """The ids of the operation nodes step ``number`` (1-based) made."""
    return {node["id"] for node in diffs[number - 1]["added"] if node["kind"] != "leaf"}


def click_at(qtbot, view: GraphView, scene_point) -> None:
    canvas(view).centerOn(scene_point)
    qtbot.mouseClick(canvas(view).viewport(), Qt.LeftButton, pos=canvas(view).mapFromScene(scene_point))


def test_each_line_execution_gets_a_labelled_box_around_the_nodes_it_made(view):
    graph, diffs = rnn_with_origins(3)
    view.model.set_graph(graph)
    shown = origin_boxes(view)
    assert {f"line {STEP_LINE} · pass {k}" for k in (1, 2, 3)} | {f"line {LOSS_LINE} · pass 1"} <= shown.keys()
    items = boxes(view)
    for k in (1, 2, 3):
        box = shown[f"line {STEP_LINE} · pass {k}"]
        assert box.members == step(diffs, k)
        assert all(box.rect().contains(items[i].sceneBoundingRect()) for i in box.members)


def test_module_boxes_nest_by_dotted_name_inside_the_line_execution_that_called_them(view):
    graph, diffs = rnn_with_origins(3, module="model.rnn")
    view.model.set_graph(graph)
    shown = [item for item in canvas(view).scene().items() if isinstance(item, OriginBox)]
    for k in (1, 2, 3):
        line = next(box for box in shown if box.label == f"line {STEP_LINE} · pass {k}")
        outer = next(box for box in shown if box.label == "model" and box.members == step(diffs, k))
        inner = next(box for box in shown if box.label == "model.rnn" and box.members == step(diffs, k))
        assert line.rect().contains(outer.rect()) and outer.rect().contains(inner.rect())
        assert line.rect() != outer.rect() != inner.rect()


def test_an_unknown_line_is_said_honestly_and_nodes_without_origin_still_draw(view):
    """A node made while continuing: its box named the lines that ran, its details only "several lines"."""
    graph, diffs = rnn_graph(2)
    view.model.set_graph(graph)
    assert not origin_boxes(view) and len(boxes(view)) == len(graph["nodes"])
    for node in graph["nodes"]:
        node["origin"] = origin(None, None)
    view.model.set_graph(graph)
    assert list(origin_boxes(view)) == ["ran while continuing"]
    # The node's details say what its box says (they said "several lines ran", the box "between lines 3 and 9");
    # from a pause at a line in a loop to the next pause there, both said "between lines 74 and 74".
    for lines, between in (([3, 9], "between lines 3 and 9"), ([74, 74], "between two pauses at line 74")):
        for node in graph["nodes"]:
            node["origin"] = {**origin(None, None), "lines": lines}
        view.model.set_graph(graph)
        assert list(origin_boxes(view)) == [f"ran {between}"]
        view.model.select(graph["nodes"][0]["id"])
        assert f"made while continuing, {between}" in view.findChild(QPlainTextEdit).toPlainText()
    for node in graph["nodes"]:
        node["origin"] = {**origin(None, None), "by": "console", "at": 12}
    view.model.set_graph(graph)
    assert list(origin_boxes(view)) == ["made by the console at line 12"]
    view.model.select(graph["nodes"][0]["id"])
    assert "made by the console at line 12" in view.findChild(QPlainTextEdit).toPlainText()


def test_collapsing_a_box_hides_its_members_and_counts_them(view, qtbot):
    graph, diffs = rnn_with_origins(3)
    view.model.set_graph(graph)
    box = origin_boxes(view)[f"line {STEP_LINE} · pass 2"]
    members = step(diffs, 2)
    click_at(qtbot, view, box.toggle_rect().center())
    assert box.collapsed and box.title() == f"line {STEP_LINE} · pass 2 · {len(members)} nodes"
    items = boxes(view)
    assert not any(items[i].isVisible() for i in members)
    assert all(items[i].isVisible() for i in set(items) - members)
    click_at(qtbot, view, box.toggle_rect().center())
    assert not box.collapsed and all(items[i].isVisible() for i in members)


def edge_points(view: GraphView) -> list:
    """Every point the drawn edges pass through or end at."""
    paths = [item.path() for item in canvas(view).scene().items() if isinstance(item, EdgeChunk)]
    return [path.elementAt(i) for path in paths for i in range(path.elementCount())]


def test_edges_of_collapsed_members_end_at_the_box(view):
    graph, diffs = rnn_with_origins(3)
    view.model.set_graph(graph)
    members = step(diffs, 2)
    rects = [boxes(view)[i].sceneBoundingRect() for i in members]

    def ends_inside_members() -> bool:
        return any(rect.contains(point.x, point.y) for point in edge_points(view) for rect in rects)

    assert ends_inside_members()
    view.set_box_collapsed(f"line {STEP_LINE} · pass 2", True)
    box = origin_boxes(view)[f"line {STEP_LINE} · pass 2"]
    assert not ends_inside_members()
    assert any(abs(point.y - box.rect().bottom()) < 1e-6 or abs(point.y - box.rect().top()) < 1e-6
               for point in edge_points(view))


def test_a_step_into_a_collapsed_module_joins_it_hidden(view):
    _, diffs = rnn_with_origins(4, module="model.rnn")
    view.model.set_graph(EMPTY)
    view.model.apply_diff(diffs[0])
    view.set_box_collapsed("model.rnn", True)
    view.model.apply_diff(diffs[1])
    box = next(item for item in canvas(view).scene().items()
               if isinstance(item, OriginBox) and item.label == "model.rnn" and item.members == step(diffs, 2))
    assert box.collapsed and box.title() == f"model.rnn · {len(step(diffs, 2))} nodes"
    assert not any(boxes(view)[i].isVisible() for i in step(diffs, 2))


def test_nothing_moves_when_a_step_adds_nodes_boxes_included(view):
    _, diffs = rnn_with_origins(6, module="model.rnn")
    view.model.set_graph(EMPTY)
    nodes, rects = {}, {}
    for diff in diffs:
        grown = {(node.get("origin") or {}).get("pass") for node in diff["added"]}
        view.model.apply_diff(diff)
        for node_id, item in boxes(view).items():
            assert nodes.setdefault(node_id, item.pos()) == item.pos()
        for label, box in origin_boxes(view).items():
            if label.startswith("line") and label in rects and int(label.split()[-1]) not in grown:
                assert box.rect() == rects[label]
            rects[label] = box.rect()


def test_clicking_a_node_or_a_box_header_emits_its_origin_line(view, qtbot):
    graph, diffs = rnn_with_origins(3)
    view.model.set_graph(graph)
    node_id = min(step(diffs, 2))
    item = boxes(view)[node_id]
    with qtbot.waitSignal(view.origin_selected) as signal:
        click_at(qtbot, view, item.sceneBoundingRect().center())
    assert signal.args == [FILE, STEP_LINE]
    details = view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    assert f"made by line {STEP_LINE}, pass 2" in details
    loss_box = origin_boxes(view)[f"line {LOSS_LINE} · pass 1"]
    with qtbot.waitSignal(view.origin_selected) as signal:
        click_at(qtbot, view, loss_box.header().center())
    assert signal.args == [FILE, LOSS_LINE]


def test_the_details_name_the_module_and_hold_the_saved_tensors_without_shrinking_the_drawing(view):
    graph, diffs = rnn_with_origins(2, module="model.rnn")
    view.model.set_graph(graph)
    port = view.findChild(QGraphicsView, "graph_canvas").viewport()
    before = port.size()
    mm = next(node["id"] for node in diffs[1]["added"] if node["name"] == "MmBackward0")
    view.model.select(mm)
    details = view.findChild(QPlainTextEdit, "graph_details")
    assert f"made by line {STEP_LINE}, pass 2, in model.rnn" in details.toPlainText()
    assert "saved for backward:" in details.toPlainText()  # scrolled to, not grown into the drawing's room
    assert port.size() == before


def test_highlight_origin_line_outlines_the_nodes_its_executions_made(view):
    graph, diffs = rnn_with_origins(3)
    view.model.set_graph(graph)
    view.highlight_origin_line(STEP_LINE, FILE)
    items = boxes(view)
    marked = {i for i, item in items.items() if item.pen().color().name() == PALETTE["origin"]}
    assert marked == step(diffs, 1) | step(diffs, 2) | step(diffs, 3) == view.origin_nodes()
    assert all(box.marked == box.label.startswith(f"line {STEP_LINE}") for box in origin_boxes(view).values())
    view.highlight_origin_line(STEP_LINE, "other_file.py")
    assert not view.origin_nodes()
    view.highlight_origin_line(0)
    assert not any(item.pen().color().name() == PALETTE["origin"] for item in items.values())


def test_code_view_says_which_line_the_mouse_is_over(qtbot):
    code = shown(qtbot, CodeView(), 500, 300)
    code.set_source("a = 1\nb = 2\nc = 3\n")
    block = code.document().findBlockByNumber(1)
    y = int(code.blockBoundingGeometry(block).translated(code.contentOffset()).center().y())
    with qtbot.waitSignal(code.position_hovered) as signal:
        qtbot.mouseMove(code.viewport(), QPoint(60, y))
    assert signal.args[0] == 2
    code.select_line(3)
    assert code.textCursor().selectedText() == "c = 3" and code.cursor_line() == 3


def test_edge_labels_stay_clear_of_the_box_labels(view):
    graph, _ = rnn_with_origins(3)
    view.model.set_graph(graph)
    captions = [box.caption.sceneBoundingRect() for box in origin_boxes(view).values()]
    chunks = [item for item in canvas(view).scene().items() if isinstance(item, EdgeChunk) and item.labels]
    assert chunks
    for chunk in chunks:
        metrics = QFontMetricsF(chunk.font)
        for point, text in chunk.labels:
            label = QRectF(point.x(), point.y() - metrics.ascent(), metrics.horizontalAdvance(text), metrics.height())
            assert not any(label.intersects(caption) for caption in captions), (text, label)



def test_a_collapsed_box_of_one_node_says_one_node(view, qtbot):
    """A box hiding one node said "· 1 nodes"."""
    graph, _ = rnn_with_origins(3)
    lone = graph["nodes"][0]
    lone["origin"] = {**lone["origin"], "line": 99, "pass": 1}
    view.model.set_graph(graph)
    box = origin_boxes(view)["line 99 · pass 1"]
    assert box.members == {lone["id"]}
    click_at(qtbot, view, box.toggle_rect().center())
    assert box.collapsed and box.title() == "line 99 · pass 1 · 1 node"


def test_a_leaf_says_which_line_first_used_it_not_which_made_it(view):
    """Lesson 01: the leaves a and w, created on lines 60 and 61, said "made by line 62" (the line of a * w): autograd
    makes a leaf's node when an operation first uses the tensor, and the details now say so."""
    from app import i18n

    graph, diffs = rnn_with_origins(2, module="model.rnn")
    view.model.set_graph(graph)
    leaf = next(node for node in diffs[0]["added"] if node["kind"] == "leaf")
    view.model.select(leaf["id"])
    details = view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    line = leaf["origin"]["line"]
    assert (f"first used by line {line}, pass 1: autograd makes a leaf's node when an operation first uses the "
            "tensor") in details
    assert f"made by line {line}" not in details
    i18n.set_language("zh")
    view.retranslate()
    details = view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    assert f"第 {line} 行" in details and "首次用到" in details
