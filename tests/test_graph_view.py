"""The graph view on graphs the engine builds from real PyTorch programs: what the learner sees and can do."""

from __future__ import annotations

import os
from unittest.mock import Mock

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QFontDatabase, QImage, QMouseEvent, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QGraphicsPathItem,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QPlainTextEdit,
    QWidget,
)
from test_graph_layout import rnn_graph, small_graph  # noqa: E402

from app.graph_model import GraphModel  # noqa: E402
from app.lesson.autograd_graph import GraphTracker  # noqa: E402
from app.lesson.summaries import TensorSummarizer  # noqa: E402
from widgets.graph_items import PALETTE  # noqa: E402
from widgets.graph_view import GraphView  # noqa: E402


def shown(qtbot, widget: QWidget, width: int, height: int) -> QWidget:
    """``widget`` at ``width`` × ``height``, once it is on screen."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def make_view(qtbot, width: int = 900, height: int = 700) -> GraphView:
    """A graph view of its own model, shown at ``width`` × ``height``."""
    return shown(qtbot, GraphView(GraphModel()), width, height)


@pytest.fixture
def view(qtbot):
    return make_view(qtbot)


def canvas(view: GraphView) -> QGraphicsView:
    return view.findChild(QGraphicsView, "graph_canvas")


def boxes(view: GraphView) -> dict[int, object]:
    """Node id -> the item drawing the node's box."""
    return {item.data(0): item for item in canvas(view).scene().items()
            if item.parentItem() is None and item.data(0) is not None}


def texts_items(view: GraphView) -> list[QGraphicsSimpleTextItem]:
    return [item for item in canvas(view).scene().items() if isinstance(item, QGraphicsSimpleTextItem)]


def texts(view: GraphView) -> list[str]:
    return [item.text() for item in texts_items(view)]


def outline(item) -> str:
    return item.pen().color().name()


def click(qtbot, view: GraphView, node_id: int) -> None:
    box = boxes(view)[node_id]
    point = canvas(view).mapFromScene(box.sceneBoundingRect().center())
    qtbot.mouseClick(canvas(view).viewport(), Qt.LeftButton, pos=point)


def ids_by_name(graph: dict) -> dict[str, int]:
    return {node["variable"] or node["name"]: node["id"] for node in graph["nodes"]}


def test_small_graph_shows_ops_leaves_shapes_and_variable_tags(view):
    graph = small_graph()
    view.model.set_graph(graph)
    assert set(boxes(view)) == {node["id"] for node in graph["nodes"]}
    shown = texts(view)
    for text in ("MulBackward0", "AddBackward0", "x", "w", "b", "[2]", "scalar", "y →"):
        assert text in shown
    leaf_fill, _ = PALETTE["leaf"]
    assert boxes(view)[ids_by_name(graph)["x"]].brush().color().name() == leaf_fill
    assert all(item.isVisible() for item in canvas(view).scene().items() if isinstance(item, QGraphicsSimpleTextItem))


def test_custom_function_nodes_look_different(view):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = torch.ones(3, requires_grad=True)
    y = Square.apply(x).sum()
    tracker = GraphTracker(TensorSummarizer())
    tracker.update({"x": x, "y": y})
    graph = tracker.full()
    view.model.set_graph(graph)
    custom = next(node["id"] for node in graph["nodes"] if node["kind"] == "custom")
    box = boxes(view)[custom]
    assert box.pen().style() == Qt.DashLine
    assert box.brush().color().name() == PALETTE["custom"][0]
    assert "SquareBackward" in texts(view)


def test_each_step_adds_its_piece_highlighted_and_nothing_moves(view, qtbot):
    _, diffs = rnn_graph(4)
    view.model.set_graph({"nodes": [], "edges": [], "roots": {}})
    view.set_follow_new(False)
    centre = canvas(view).viewport().rect().center()
    placed: dict[int, QPointF] = {}
    for step, diff in enumerate(diffs):
        view.model.apply_diff(diff)
        if step == 0:  # the first nodes of an empty graph are framed; then, not following, the view stays
            where = canvas(view).mapToScene(centre)
        drawn = boxes(view)
        new = {node["id"] for node in diff["added"]}
        assert new <= drawn.keys()
        for node_id, item in drawn.items():
            assert (outline(item) == PALETTE["new"]) == (node_id in new)
            if node_id in placed:
                assert item.pos() == placed[node_id]
        placed.update((i, drawn[i].pos()) for i in new)
        assert canvas(view).mapToScene(centre) == where
    assert len(boxes(view)) == 24
    assert "h →" in texts(view) and "loss →" in texts(view)


def test_following_keeps_the_view_while_it_shows_the_new_nodes(view):
    _, diffs = rnn_graph(12)
    view.model.set_graph({"nodes": [], "edges": [], "roots": {}})
    viewport = canvas(view).viewport()
    for diff in diffs:
        before = canvas(view).mapToScene(viewport.rect()).boundingRect()
        view.model.apply_diff(diff)
        visible = canvas(view).mapToScene(viewport.rect()).boundingRect()
        new = [boxes(view)[node["id"]].sceneBoundingRect() for node in diff["added"]]
        assert all(visible.contains(rect) for rect in new)
        if all(before.adjusted(20, 20, -20, -20).contains(rect) for rect in new):
            assert visible == before


def test_a_rebound_variable_fades_its_old_node_out(view, qtbot):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    tracker = GraphTracker(TensorSummarizer())
    y = x * w
    tracker.update({"x": x, "w": w, "y": y})
    view.model.set_graph(tracker.full())
    mul = tracker.full()["roots"]["y"]
    old_box = boxes(view)[mul]
    y = x + w
    diff = tracker.update({"x": x, "w": w, "y": y})
    assert diff["removed"] == [mul]
    view.model.apply_diff(diff)
    assert old_box.scene() is not None  # still on screen, fading
    qtbot.waitUntil(lambda: old_box.scene() is None, timeout=3000)
    assert "MulBackward0" not in texts(view) and "AddBackward0" in texts(view)


def test_highlight_variable_outlines_its_subgraph_only(view):
    graph, _ = rnn_graph(3)
    view.model.set_graph(graph)
    h = graph["roots"]["h"]
    view.model.highlight_variable("h")
    highlighted = {i for i, item in boxes(view).items() if outline(item) == PALETTE["highlight"]}
    assert h in highlighted and graph["roots"]["loss"] not in highlighted
    assert len(highlighted) == len(graph["nodes"]) - 1  # everything but the loss
    view.model.highlight_variable("W_xh")
    highlighted = {i for i, item in boxes(view).items() if outline(item) == PALETTE["highlight"]}
    assert highlighted == {ids_by_name(graph)["W_xh"]}
    view.model.highlight_variable(None)
    assert not any(outline(item) == PALETTE["highlight"] for item in boxes(view).values())
    view.model.highlight([h])
    assert [i for i, item in boxes(view).items() if outline(item) == PALETTE["highlight"]] == [h]


def test_active_node_is_marked_for_backward_replay(view):
    graph = small_graph()
    view.model.set_graph(graph)
    add = ids_by_name(graph)["AddBackward0"]
    view.model.set_active(add)
    assert boxes(view)[add].brush().color().name() == PALETTE["active"][0]
    view.model.set_active(None)
    assert boxes(view)[add].brush().color().name() != PALETTE["active"][0]


def test_clicking_a_node_selects_it_and_shows_its_details(view, qtbot):
    graph = small_graph()
    view.model.set_graph(graph)
    mul = ids_by_name(graph)["MulBackward0"]
    selected = Mock()
    view.model.selected_changed.connect(selected)
    click(qtbot, view, mul)
    selected.assert_called_once_with(mul)
    details = view.findChild(QPlainTextEdit, "graph_details").toPlainText()
    assert details.startswith("MulBackward0")
    assert "_saved_other" in details and "_saved_self" in details
    assert "input 0 → AccumulateGrad (x)" in details and "input 1 → AccumulateGrad (w)" in details
    assert outline(boxes(view)[mul]) == PALETTE["selected"]


def test_a_leaf_shows_its_tensor_and_its_grad_after_backward(view, qtbot):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    loss = (x * w).sum()
    tracker = GraphTracker(TensorSummarizer())
    tracker.update({"x": x, "w": w, "loss": loss})
    view.model.set_graph(tracker.full())
    leaf = ids_by_name(tracker.full())["x"]
    click(qtbot, view, leaf)
    assert view.model.selected == leaf
    details = view.findChild(QPlainTextEdit, "graph_details")
    assert "leaf tensor x:" in details.toPlainText() and "None (no backward" in details.toPlainText()
    loss.backward()
    view.model.apply_diff(tracker.update({"x": x, "w": w, "loss": loss}))
    text = details.toPlainText()
    assert ".grad:" in text and "[3. 4.]" in text.split(".grad:")[1]
    view.model.select(ids_by_name(tracker.full())["MulBackward0"])
    assert "_saved_self: freed by backward()" in details.toPlainText()


def test_dragging_pans_without_selecting(view, qtbot):
    view.model.set_graph(small_graph())
    viewport = canvas(view).viewport()
    before = canvas(view).mapToScene(viewport.rect().center())
    start, end = QPointF(450, 300), QPointF(350, 200)
    selected = []
    view.model.selected_changed.connect(selected.append)
    for kind, point, buttons in ((QEvent.MouseButtonPress, start, Qt.LeftButton),
                                 (QEvent.MouseMove, end, Qt.LeftButton),
                                 (QEvent.MouseButtonRelease, end, Qt.NoButton)):
        event = QMouseEvent(kind, point, canvas(view).mapToGlobal(point), Qt.LeftButton, buttons, Qt.NoModifier)
        QApplication.sendEvent(viewport, event)
    after = canvas(view).mapToScene(viewport.rect().center())
    assert after != before and not selected


def test_wheel_zooms_and_text_hides_when_too_small_to_read(view):
    graph, _ = rnn_graph(3)
    view.model.set_graph(graph)
    viewport = canvas(view).viewport()
    label = next(item for item in canvas(view).scene().items() if isinstance(item, QGraphicsSimpleTextItem))

    def wheel(steps: int) -> None:
        point = QPointF(viewport.rect().center())
        event = QWheelEvent(point, canvas(view).mapToGlobal(point), QPoint(), QPoint(0, 120 * steps),
                            Qt.NoButton, Qt.NoModifier, Qt.NoScrollPhase, False)
        QApplication.sendEvent(viewport, event)

    scale = canvas(view).transform().m11()
    wheel(2)
    assert canvas(view).transform().m11() > scale and label.isVisible()
    wheel(-12)
    assert canvas(view).transform().m11() < 0.4 and not label.isVisible()
    view.fit_to_view()
    visible = canvas(view).mapToScene(viewport.rect()).boundingRect()
    assert visible.contains(boxes(view)[graph["roots"]["loss"]].sceneBoundingRect())


def test_export_writes_a_png_and_an_svg(view, tmp_path):
    view.model.set_graph(small_graph())
    png, svg = tmp_path / "graph.png", tmp_path / "graph.svg"
    assert view.export_png(png) and view.export_svg(svg)
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 300
    pixels = (image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7))
    assert any(QColor(pixel) != QColor(Qt.white) for pixel in pixels)
    content = svg.read_text(encoding="utf-8")
    assert content.lstrip().startswith("<?xml") and "<svg" in content and "MulBackward0" in content


def test_a_leaf_renamed_between_pauses_is_relabelled_in_place(view):
    graph = small_graph()
    view.model.set_graph(graph)
    x = ids_by_name(graph)["x"]
    box = boxes(view)[x]
    centre, width = box.sceneBoundingRect().center(), box.rect().width()
    diff = {"changed": True, "added": [], "removed": [], "edges_added": [], "roots": graph["roots"],
            "leaves": {x: "embedding_weights"}}
    view.model.apply_diff(diff)
    assert "embedding_weights" in texts(view) and "x" not in texts(view)
    assert box.rect().width() > width and box.sceneBoundingRect().center() == centre


def test_a_growing_graph_rebuilds_the_scene_index_a_few_times_and_every_node_stays_findable(view):
    """The scene's index rectangle grows by doubling: one index rebuild per step made a repaint
    at 1,000 RNN steps cost four times what it costs now (tests/benchmarks/bench_graph_view.py)."""
    _, diffs = rnn_graph(300)
    scene = canvas(view).scene()
    view.model.set_graph({"nodes": [], "edges": [], "roots": {}})
    rects = []
    for diff in diffs:
        view.model.apply_diff(diff)
        canvas(view).viewport().repaint()  # each step is seen
        if not rects or scene.sceneRect() != rects[-1]:
            rects.append(scene.sceneRect())
    assert len(rects) <= 12, f"the index rectangle changed {len(rects)} times in {len(diffs)} steps"
    drawn = boxes(view)
    assert len(drawn) == sum(len(diff["added"]) for diff in diffs)
    for node_id, item in drawn.items():  # found by the index wherever the graph grew to
        centre = item.sceneBoundingRect().center()
        assert scene.sceneRect().contains(item.sceneBoundingRect())
        assert node_id in [found.data(0) for found in scene.items(centre)]


@pytest.mark.parametrize("size", [(900, 700), (1000, 900), (1300, 500), (1500, 400), (500, 800)])
def test_the_details_pane_never_takes_room_from_the_drawing_and_is_not_mostly_empty(qtbot, size):
    """A wide panel put the details beside the graph at full height, mostly empty; a click grew the pane below."""
    view = GraphView(GraphModel())
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    graph = small_graph()
    view.model.set_graph(graph)
    port = canvas(view).viewport()
    before = port.size()
    click(qtbot, view, ids_by_name(graph)["MulBackward0"])
    assert port.width() >= before.width() and port.height() >= before.height()
    details = view.findChild(QPlainTextEdit, "graph_details")
    assert details.document().blockCount() * details.fontMetrics().lineSpacing() >= details.viewport().height() / 2
    assert port.width() * port.height() >= 2 * details.width() * details.height()


def test_the_legend_says_what_node_and_edge_colours_mean_in_english_and_chinese(view):
    from app import i18n
    from widgets.graph_legend import GraphLegend

    legend = view.findChild(GraphLegend, "graph_legend")
    assert legend.isVisible() and legend.height() >= legend.heightForWidth(legend.width())
    assert legend.texts() == ["leaf", "operation", "a variable's grad_fn", "custom Function", "new this step",
                              "saved tensors freed", "left the graph", "to an input", "a shared lane to an input"]
    i18n.set_language("zh")
    try:
        view.retranslate()
        texts = legend.texts()
        assert texts[:2] == ["叶子节点", "操作"] and "这一步新建" in texts and "保存的张量已释放" in texts
    finally:
        i18n.set_language("en")


def test_a_long_node_name_is_shown_whole_on_its_box(view):
    """``BackwardHookFunctionBackward`` was cut to ``BackwardHookFunctionB…``."""
    graph = small_graph()
    mul = ids_by_name(graph)["MulBackward0"]
    for node in graph["nodes"]:
        if node["id"] == mul:
            node["name"] = "BackwardHookFunctionBackward"
    view.model.set_graph(graph)
    box = boxes(view)[mul]
    lines = sorted((item for item in texts_items(view) if item.data(0) == mul), key=lambda item: item.pos().y())
    assert "".join(item.text() for item in lines) == "BackwardHookFunctionBackward"
    assert all(box.sceneBoundingRect().contains(item.sceneBoundingRect()) for item in lines)


def test_code_in_a_nodes_details_is_set_as_code_without_its_backticks(view, qtbot):
    graph = small_graph()
    mul = ids_by_name(graph)["MulBackward0"]
    for node in graph["nodes"]:
        if node["id"] == mul:
            node["origin"] = {"file": None, "line": 4, "pass": None, "text": "x * w", "op": "Tensor.mul"}
    view.model.set_graph(graph)
    click(qtbot, view, mul)
    details = view.findChild(QPlainTextEdit, "graph_details")
    text = details.toPlainText()
    assert "made by x * w (Tensor.mul) on line 4" in text and "`" not in text
    cursor = details.document().find("x * w")
    assert cursor.charFormat().fontFamilies() == [QFontDatabase.systemFont(QFontDatabase.FixedFont).family()]


def test_a_view_draws_what_its_model_holds_and_shows_the_models_selection(qtbot):
    """A view made on a model that already holds a graph draws it; a node selected in the model (a click in
    another view of it, or another panel) is outlined with its details, also after the graph is replaced."""
    model = GraphModel()
    graph = small_graph()
    model.set_graph(graph)
    model.set_waiting_leaves(["x"])
    view, other = shown(qtbot, GraphView(model), 900, 700), shown(qtbot, GraphView(model), 600, 500)
    assert set(boxes(view)) == set(boxes(other)) == {node["id"] for node in graph["nodes"]}
    mul = ids_by_name(graph)["MulBackward0"]
    details = view.findChild(QPlainTextEdit, "graph_details")
    click(qtbot, other, mul)
    assert model.selected == mul
    assert outline(boxes(view)[mul]) == PALETTE["selected"] and details.toPlainText().startswith("MulBackward0")
    model.set_graph(graph)  # another step in view with the same node: still selected
    assert outline(boxes(view)[mul]) == PALETTE["selected"] and details.toPlainText().startswith("MulBackward0")
    model.select(None)
    assert outline(boxes(view)[mul]) != PALETTE["selected"] and details.toPlainText() == ""


def highlight_overlay(view: GraphView):
    """The path item that outlines the edges between highlighted nodes."""
    return next(item for item in canvas(view).scene().items()
                if isinstance(item, QGraphicsPathItem) and item.pen().color().name() == PALETTE["highlight"])


def test_the_highlighted_edges_leave_with_the_nodes_a_pause_removes(view):
    """Highlighted nodes that a pause removes take their purple edges with them (they stayed drawn over the fading
    ghost until the next highlight)."""
    _, diffs = rnn_graph(6)
    view.model.set_graph({"nodes": [], "edges": [], "roots": {}})
    for diff in diffs:
        view.model.apply_diff(diff)
    view.model.highlight(view.model.nodes)
    late = [node["id"] for diff in diffs[4:] for node in diff["added"] if node["kind"] != "leaf"]
    top = min(boxes(view)[node_id].sceneBoundingRect().top() for node_id in late)
    assert highlight_overlay(view).path().boundingRect().bottom() > top
    view.model.apply_diff({"changed": True, "added": [], "removed": late, "edges_added": [], "roots": {}})
    assert highlight_overlay(view).path().boundingRect().bottom() < top


@pytest.mark.parametrize("label", ["ran between lines 1 and 47", "在第 64 行和第 88 行之间运行"])
def test_a_box_label_wider_than_its_box_ends_inside_it_and_its_tooltip_has_it_whole(qtbot, label):
    """Labels such as "ran between lines 1 and 47" ran out past the box's edge, over the box beside it."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

    from widgets.graph_items import OriginBox

    scene = QGraphicsScene()
    layer = QGraphicsRectItem()
    scene.addItem(layer)
    box = OriginBox(("line", 0, None, None, ("between", 1, 47)), "line", label, QFont(), layer)
    scene.addItem(box)
    for width, cut in ((90, True), (600, False)):
        box.setRect(QRectF(10, 10, width, 80))
        box.place_caption()
        text = box.caption.childItems()[0]
        right = text.mapToScene(text.boundingRect().topRight()).x()
        assert right <= box.rect().right()
        assert text.text().endswith("…") is cut and box.caption.toolTip() == (label if cut else "")


def test_the_details_of_a_selected_node_go_with_the_node(qtbot):
    """Paused in a hook that backward() called, the graph said the frame has none of its own while the details
    pane still described MulBackward0, a node no longer on screen."""
    model = GraphModel()
    graph = small_graph()
    model.set_graph(graph)
    view = shown(qtbot, GraphView(model), 900, 700)
    details = view.findChild(QPlainTextEdit, "graph_details")
    mul = ids_by_name(graph)["MulBackward0"]
    click(qtbot, view, mul)
    assert details.toPlainText().startswith("MulBackward0")
    model.apply_diff({"changed": True, "added": [], "updated": [], "edges_added": [], "roots": {}, "leaves": {},
                      "removed": [node["id"] for node in graph["nodes"]]})
    assert model.selected is None and details.toPlainText() == ""
    scene = canvas(view).scene()
    qtbot.waitUntil(lambda: not scene._fades)  # the removed nodes have faded out: none is left to the next test
    assert not boxes(view)


def test_shapes_on_boxes_and_edges_follow_the_language(qtbot):
    """Lesson 16, 中文 then English: the edge under ProdBackward0 still read "标量"."""
    from PySide6.QtWidgets import QGraphicsSimpleTextItem

    from app import i18n

    model = GraphModel()
    graph = small_graph()
    model.set_graph(graph)
    view = shown(qtbot, GraphView(model), 900, 700)
    assert any(node.get("shape") == [] for node in graph["nodes"])  # a scalar output: its edge says so

    def texts() -> list[str]:
        return [item.text() for item in canvas(view).scene().items() if isinstance(item, QGraphicsSimpleTextItem)]

    assert "scalar" in texts()
    i18n.set_language("zh")
    try:
        view.retranslate()
        assert "标量" in texts() and "scalar" not in texts()
    finally:
        i18n.set_language("en")
    view.retranslate()
    assert "scalar" in texts() and "标量" not in texts()
