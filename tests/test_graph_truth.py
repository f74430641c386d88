"""The graph tells the truth: every drawn edge is a ``next_functions`` edge, every box holds its own nodes only,
and the amber "new" outline is on the nodes the step shown made, on every lesson's final graph and after
Step Back and Go to Live.

Everything is read back from the drawing, not from what the view was fed: an edge is a line of an edge item
whose start lies on its source's box and whose end lies on its target's box, or on a lane that ends there;
a box holds the nodes whose boxes it touches.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import pytest
import torch
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsView
from test_layout import make_window  # noqa: F401 - a fixture
from test_main_window import press, wait_ended, wait_paused

from app.graph_model import GraphModel
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import TensorSummarizer
from app.workspace import LESSONS_DIR
from widgets.graph_groups import origin_keys
from widgets.graph_items import PALETTE, EdgeChunk, OriginBox
from widgets.graph_view import GraphView

LESSONS = sorted(path.name for path in LESSONS_DIR.glob("[0-9]*.py"))

TRAINING = '''import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
loss_fn = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 2)
for epoch in range(2):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
print("done", float(loss))
'''

# -- reading the drawing ------------------------------------------------------------------------------------


def scene_of(view: GraphView):
    return view.findChild(QGraphicsView, "graph_canvas").scene()


def node_boxes(view: GraphView, graph: dict[str, Any]) -> dict[int, QRectF]:
    """Node id -> the scene rectangle of the box drawing it (the items that are nodes: top-level, with an id), for
    the nodes of ``graph``: a node a step removed fades out for a moment; every node of the graph is drawn."""
    ids = {int(node["id"]) for node in graph["nodes"]}
    boxes = {int(item.data(0)): item.sceneBoundingRect() for item in scene_of(view).items()
             if item.parentItem() is None and item.data(0) in ids and not isinstance(item, OriginBox)}
    assert boxes.keys() == ids
    return boxes


def polylines(path: QPainterPath) -> list[list[QPointF]]:
    """The lines of a path, one per move; arrowhead wings (shorter than 10) and junction dots (curves) left out."""
    lines: list[list[QPointF]] = []
    curved = False
    for i in range(path.elementCount()):
        element = path.elementAt(i)
        if element.isMoveTo():
            lines.append([QPointF(element.x, element.y)])
            curved = False
        elif element.isLineTo() and not curved:
            lines[-1].append(QPointF(element.x, element.y))
        else:
            curved = True
            lines[-1] = []
    return [line for line in lines if len(line) > 1 and length(line) >= 10]


def length(line: list[QPointF]) -> float:
    return sum(math.hypot(b.x() - a.x(), b.y() - a.y()) for a, b in itertools.pairwise(line))


def box_at(boxes: dict[int, QRectF], point: QPointF) -> int | None:
    """The node whose box the point lies on (its outline included); fails when two are."""
    on = [node_id for node_id, rect in boxes.items() if rect.adjusted(-0.6, -0.6, 0.6, 0.6).contains(point)]
    assert len(on) <= 1, f"{point} lies on nodes {on}"
    return on[0] if on else None


def on_segment(point: QPointF, a: QPointF, b: QPointF) -> bool:
    """Whether ``point`` lies on the axis-parallel segment ``a``-``b``."""
    if abs(a.x() - b.x()) < 0.01:
        return abs(point.x() - a.x()) < 0.6 and min(a.y(), b.y()) - 0.6 <= point.y() <= max(a.y(), b.y()) + 0.6
    if abs(a.y() - b.y()) < 0.01:
        return abs(point.y() - a.y()) < 0.6 and min(a.x(), b.x()) - 0.6 <= point.x() <= max(a.x(), b.x()) + 0.6
    return False


def drawn_edges(view: GraphView, graph: dict[str, Any]) -> list[tuple[int, int, list[QPointF]]]:
    """Every edge drawn, as ``(source, target, its points)``: a line from one node's box to another's, or from a
    node's box to a lane (a line that starts on no box and ends on a box), which takes it to the lane's node."""
    boxes = node_boxes(view, graph)
    lines = [line for item in scene_of(view).items() if isinstance(item, EdgeChunk) and item.isVisible()
             for line in polylines(item.path())]
    ends = [(box_at(boxes, line[0]), box_at(boxes, line[-1]), line) for line in lines]
    lanes = [(target, line) for start, target, line in ends if start is None and target is not None]
    edges = []
    for source, target, line in ends:
        if source is None:
            continue
        if target is None:  # a connector: it ends where it joins a lane
            joined = {lane_target for lane_target, lane in lanes
                      if any(on_segment(line[-1], a, b) for a, b in itertools.pairwise(lane))}
            assert len(joined) == 1, f"the line from node {source} ends on lanes {joined}"
            target = joined.pop()
            line = line + [lane for lane_target, lane in lanes if lane_target == target][0]
        edges.append((source, target, line))
    return edges


def crosses(a: QPointF, b: QPointF, rect: QRectF) -> bool:
    """Whether the segment ``a``-``b`` passes through the inside of ``rect`` (Liang-Barsky clipping)."""
    low, high = 0.0, 1.0
    dx, dy = b.x() - a.x(), b.y() - a.y()
    for p, q in ((-dx, a.x() - rect.left()), (dx, rect.right() - a.x()),
                 (-dy, a.y() - rect.top()), (dy, rect.bottom() - a.y())):
        if abs(p) < 1e-9:
            if q < 0:
                return False
        else:
            t = q / p
            if p < 0:
                low = max(low, t)
            else:
                high = min(high, t)
    return high - low > 1e-6


# -- what the engine says -----------------------------------------------------------------------------------


def engine_edges(graph: dict[str, Any]) -> Counter:
    """The graph's edges as ``next_functions`` has them: (node, next function) once per input."""
    return Counter((int(node["id"]), int(target)) for node in graph["nodes"] for target, _ in node.get("next") or [])


# -- the checks ---------------------------------------------------------------------------------------------


def assert_edges_true(view: GraphView, graph: dict[str, Any]) -> None:
    """Each drawn edge is an edge of the engine's graph, node for node, and each is drawn; none passes over a
    node that is not its end, and no two lines into different nodes run on top of each other."""
    edges = drawn_edges(view, graph)
    assert Counter((source, target) for source, target, _ in edges) == engine_edges(graph)
    boxes = node_boxes(view, graph)
    for source, target, line in edges:
        for node_id, rect in boxes.items():
            if node_id not in (source, target):
                inside = rect.adjusted(1, 1, -1, -1)
                assert not any(crosses(a, b, inside) for a, b in itertools.pairwise(line)), \
                    f"the edge {source} → {target} passes over node {node_id}"
    straight = [(target, a, b) for _, target, line in edges for a, b in itertools.pairwise(line)
                if abs(a.x() - b.x()) < 0.01 or abs(a.y() - b.y()) < 0.01]
    by_line: dict[tuple[str, float], list[tuple[int, float, float]]] = {}
    for target, a, b in straight:
        if abs(a.x() - b.x()) < 0.01:
            by_line.setdefault(("x", round(a.x(), 1)), []).append((target, *sorted((a.y(), b.y()))))
        else:
            by_line.setdefault(("y", round(a.y(), 1)), []).append((target, *sorted((a.x(), b.x()))))
    for where, runs in by_line.items():
        for (t1, low1, high1), (t2, low2, high2) in itertools.combinations(runs, 2):
            assert t1 == t2 or min(high1, high2) - max(low1, low2) <= 1, \
                f"lines into nodes {t1} and {t2} run on top of each other along {where}"


def origin_boxes(view: GraphView) -> list[OriginBox]:
    return [item for item in scene_of(view).items() if isinstance(item, OriginBox) and item.isVisible()]


def assert_boxes_true(view: GraphView, graph: dict[str, Any]) -> None:
    """A box touches exactly nodes that its line execution (or module in it) made, all of them inside it;
    every node is in a box of each of its groups; two boxes meet only when one is nested in the other; a
    variable's tag covers no other node."""
    paths = {int(node["id"]): origin_keys(node.get("origin")) for node in graph["nodes"]}
    boxes = node_boxes(view, graph)
    held: dict[int, set] = {node_id: set() for node_id in boxes}
    shown = origin_boxes(view)
    for box in shown:
        touched = {node_id for node_id, rect in boxes.items() if rect.intersects(box.rect())}
        strangers = {node_id for node_id in touched if box.key not in paths[node_id]}
        assert not strangers, f"the box {box.label!r} covers nodes {strangers} that other code made"
        assert all(box.rect().contains(boxes[node_id]) for node_id in touched), f"{box.label!r} cuts through a node"
        for node_id in touched:
            held[node_id].add(box.key)
    unboxed = {node_id: paths[node_id] for node_id in boxes if held[node_id] != set(paths[node_id])}
    assert not unboxed, f"nodes not in a box of each of their groups: {unboxed}"
    for a, b in itertools.combinations(shown, 2):
        if a.rect().intersects(b.rect()):
            outer, inner = (a, b) if a.rect().contains(b.rect()) else (b, a)
            assert outer.rect().contains(inner.rect()) and outer.key in origin_keys_of(inner, graph), \
                f"the boxes {a.label!r} and {b.label!r} overlap"
    for tag in [item for item in scene_of(view).items() if isinstance(item, QGraphicsPathItem)
                and item.parentItem() is not None and item.data(0) is not None]:
        covered = {node_id for node_id, rect in boxes.items()
                   if node_id != tag.data(0) and rect.intersects(tag.sceneBoundingRect())}
        assert not covered, f"the tag of node {tag.data(0)} covers nodes {covered}"


def origin_keys_of(box: OriginBox, graph: dict[str, Any]) -> tuple:
    """The group path of a box's nodes."""
    member = next(iter(box.members))
    return next(origin_keys(node.get("origin")) for node in graph["nodes"] if int(node["id"]) == member)


def amber(view: GraphView) -> set[int]:
    """The nodes outlined in amber, as "new"."""
    return {int(item.data(0)) for item in scene_of(view).items()
            if item.parentItem() is None and item.data(0) is not None and not isinstance(item, OriginBox)
            and item.pen().color().name() == PALETTE["new"]}


def added(snapshot: dict[str, Any]) -> set[int]:
    return {int(node["id"]) for node in (snapshot.get("graph") or {}).get("added", [])}


def assert_graph_true(window) -> None:
    """The graph in view, against the run's record of the step in view."""
    run = window.run
    snapshot = run.history.snapshot(run.shown_index)
    assert_edges_true(window.graph_view, snapshot["graph_full"])
    assert_boxes_true(window.graph_view, snapshot["graph_full"])


# -- tests --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_final_graph_draws_its_edges_and_boxes_truly(qtbot, make_window, name):  # noqa: F811
    window = make_window(1280, 800, LESSONS_DIR / name)
    qtbot.waitUntil(window.isActiveWindow)
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)  # record to the end
    wait_ended(qtbot, window, timeout=120_000)
    assert_graph_true(window)


@pytest.mark.parametrize("name", ["01_dynamic_graphs.py", "03_loops.py"])
def test_step_back_and_go_to_live_draw_the_graph_truly_with_the_steps_new_nodes_in_amber(qtbot, make_window,  # noqa: F811
                                                                                          name):
    window = make_window(1280, 800, LESSONS_DIR / name)
    qtbot.waitUntil(window.isActiveWindow)
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)
    wait_ended(qtbot, window, timeout=120_000)
    history = window.run.history
    grown = [i for i in range(history.dropped_before, len(history)) if added(history.snapshot(i))]
    for index in grown[-3:]:  # the last steps that made nodes, shown as the past, then the end again
        window.run.view(index)
        assert_graph_true(window)
        assert amber(window.graph_view) == added(history.snapshot(index))
    window.act_step_back.trigger()
    assert_graph_true(window)
    assert amber(window.graph_view) == added(history.snapshot(window.run.viewing))
    window.act_go_live.trigger()
    assert window.run.viewing is None
    assert_graph_true(window)
    assert amber(window.graph_view) == added(window.run.live)


def test_a_training_step_boxes_the_model_and_the_loss_apart(qtbot, window_on):
    window = window_on(TRAINING, "train.py")
    qtbot.waitUntil(window.isActiveWindow)
    press(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ControlModifier)
    wait_ended(qtbot, window, timeout=60_000)
    assert_graph_true(window)
    labels = Counter(box.label for box in origin_boxes(window.graph_view))
    assert labels["model"] >= 1 and labels["loss_fn"] >= 1


def test_each_step_outlines_in_amber_exactly_the_nodes_it_made(qtbot, make_window):  # noqa: F811
    window = make_window(1280, 800, LESSONS_DIR / "03_loops.py")
    qtbot.waitUntil(window.isActiveWindow)
    press(qtbot, window, Qt.Key.Key_F5)
    wait_paused(qtbot, window)
    seen_growth = 0
    for _ in range(60):
        before = window.run.live
        press(qtbot, window, Qt.Key.Key_F10)
        qtbot.waitUntil(lambda b=before: window.session.state in ("paused", "ended") and window.run.live is not b,
                        timeout=30_000)
        if window.session.state != "paused":
            break
        assert amber(window.graph_view) == added(window.run.live)
        seen_growth += bool(added(window.run.live))
        if seen_growth >= 4:
            break
    assert seen_growth >= 4
    window.act_step_back.trigger()
    assert amber(window.graph_view) == added(window.run.history.snapshot(window.run.viewing))
    window.act_go_live.trigger()
    assert amber(window.graph_view) == added(window.run.live)


def test_a_variables_tag_never_covers_the_node_beside_it(qtbot):
    """``⟨x_t @ W_xh⟩ →`` covered the SqueezeBackward4 left of its node."""
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    tracker = GraphTracker(TensorSummarizer())
    tracker.update({"x": x, "w": w, "left": x * w, "right": x + w})
    view = GraphView(GraphModel())
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    graph = tracker.full()
    right = next(node["id"] for node in graph["nodes"] if node["name"] == "AddBackward0")
    view.model.set_graph({**graph, "roots": {"⟨a rather long operation name here⟩": right,
                                             "left": graph["roots"]["left"]}})
    assert_boxes_true(view, graph)
    view.model.set_graph({**graph, "roots": {"short": right}})
    assert_boxes_true(view, graph)
