"""The graph view frames itself: after every pause the new nodes are in view at a readable zoom, never an empty view."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPointF, QRectF  # noqa: E402
from PySide6.QtWidgets import QLabel, QToolBar, QToolButton  # noqa: E402
from test_graph_layout import rnn_graph, small_graph  # noqa: E402
from test_graph_view import canvas, make_view  # noqa: E402

from app.graph_model import GraphModel  # noqa: E402
from widgets.graph_framing import MIN_READABLE_SCALE  # noqa: E402
from widgets.graph_items import FONT_PIXELS  # noqa: E402
from widgets.graph_view import EMPTY_TEXT, GraphView  # noqa: E402

EMPTY = {"nodes": [], "edges": [], "roots": {}}


def visible(view: GraphView) -> QRectF:
    return canvas(view).mapToScene(canvas(view).viewport().rect()).boundingRect()


def text_pixels(view: GraphView) -> float:
    """How tall node text is on screen."""
    return canvas(view).transform().m11() * FONT_PIXELS


def node_rects(view: GraphView) -> dict[int, QRectF]:
    return {item.data(0): item.sceneBoundingRect() for item in canvas(view).scene().items()
            if item.parentItem() is None and item.data(0) is not None}


def direct_inputs(diff: dict, leaves: set[int]) -> set[int]:
    """The inputs of the diff's new nodes, leaves excepted (they are reached through their lanes)."""
    return {target for source, target, _ in diff["edges_added"] if target not in leaves}


@pytest.mark.parametrize("size", [(450, 600), (900, 800)])
def test_every_pause_shows_the_new_nodes_and_their_inputs_readably(qtbot, size):
    view = make_view(qtbot, *size)
    _, diffs = rnn_graph(40)
    view.model.set_graph(EMPTY)
    leaves: set[int] = set()
    for diff in diffs:
        leaves |= {node["id"] for node in diff["added"] if node["kind"] == "leaf"}
        view.model.apply_diff(diff)
        rects = node_rects(view)
        shown = visible(view)
        for node_id in {node["id"] for node in diff["added"]} | direct_inputs(diff, leaves):
            assert shown.contains(rects[node_id]), node_id
        assert text_pixels(view) >= 9


def test_a_graph_that_fits_readably_is_shown_whole(qtbot):
    view = make_view(qtbot, 450, 600)
    view.model.set_graph(EMPTY)
    graph = small_graph()
    view.model.apply_diff({"changed": True, "added": graph["nodes"], "removed": [], "edges_added": graph["edges"],
                     "roots": graph["roots"], "leaves": {}})
    shown = visible(view)
    assert all(shown.contains(rect) for rect in node_rects(view).values())
    assert text_pixels(view) >= 9


def test_a_diff_never_leaves_the_view_empty_even_when_the_learner_panned_away(qtbot):
    view = make_view(qtbot, 450, 600)
    _, diffs = rnn_graph(6)
    view.model.set_graph(EMPTY)
    for diff in diffs[:3]:
        view.model.apply_diff(diff)
    for follow, diff in ((False, diffs[3]), (True, diffs[4])):
        view.set_follow_new(follow)
        canvas(view).centerOn(50_000, -80_000)
        assert not any(visible(view).intersects(rect) for rect in node_rects(view).values())
        view.model.apply_diff(diff)
        assert any(visible(view).contains(rect) for rect in node_rects(view).values())
        assert text_pixels(view) >= 9


def test_the_learners_zoom_stays_while_it_shows_the_new_nodes(qtbot):
    view = make_view(qtbot, 900, 800)
    _, diffs = rnn_graph(3)
    view.model.set_graph(EMPTY)
    view.model.apply_diff(diffs[0])
    view.zoom(0.55)  # zoomed out, still readable, and panned so that the next step has room
    canvas(view).centerOn(230, 290)
    before = (canvas(view).transform().m11(), visible(view))
    assert text_pixels(view) >= 9
    view.model.apply_diff(diffs[1])
    assert (canvas(view).transform().m11(), visible(view)) == before
    assert all(before[1].contains(node_rects(view)[node["id"]]) for node in diffs[1]["added"])


def test_fit_keeps_a_big_loop_graph_readable_and_all_shows_the_whole_of_it(qtbot):
    view = make_view(qtbot, 450, 600)
    graph, _ = rnn_graph(200)
    view.model.set_graph(graph)
    loss = graph["roots"]["loss"]
    assert visible(view).contains(node_rects(view)[loss]) and text_pixels(view) >= 9
    view.show_overview()
    assert all(visible(view).contains(rect) for rect in node_rects(view).values())
    assert text_pixels(view) < 9
    view.fit_to_view()
    assert visible(view).contains(node_rects(view)[loss]) and text_pixels(view) >= 9


def test_another_graph_resets_the_view(qtbot):
    view = make_view(qtbot, 450, 600)
    _, diffs = rnn_graph(60)
    view.model.set_graph(EMPTY)
    for diff in diffs:
        view.model.apply_diff(diff)
    view.zoom(3.0)
    view.model.set_graph(EMPTY)
    assert canvas(view).transform().m11() == 1.0
    graph = small_graph()
    view.model.apply_diff({"changed": True, "added": graph["nodes"], "removed": [], "edges_added": graph["edges"],
                     "roots": graph["roots"], "leaves": {}})
    assert all(visible(view).contains(rect) for rect in node_rects(view).values())


def test_the_empty_graph_says_how_a_node_appears(qtbot):
    view = make_view(qtbot, 450, 600)
    message = view.findChild(QLabel, "graph_empty_message")
    view.model.set_graph(EMPTY)
    assert message.isVisible() and message.text() == EMPTY_TEXT
    assert canvas(view).viewport().rect().contains(message.geometry())
    view.model.set_graph(small_graph())
    assert not message.isVisible()
    view.model.set_graph(EMPTY)
    assert message.isVisible()


def test_follow_new_nodes_is_on_the_toolbar_at_a_narrow_width(qtbot):
    view = make_view(qtbot, 420, 600)
    toolbar = view.findChild(QToolBar, "graph_toolbar")
    follow = next(action for action in toolbar.actions() if action.objectName() == "follow_new_nodes")
    button = toolbar.widgetForAction(follow)
    assert button.isVisible() and button.text() == "Follow new nodes"
    assert toolbar.rect().contains(button.geometry())
    overflow = [b for b in toolbar.findChildren(QToolButton) if b.objectName() == "qt_toolbar_ext_button"]
    assert not any(b.isVisible() for b in overflow)


def test_an_empty_graph_names_the_leaves_no_operation_has_used_yet(qtbot):
    view = GraphView(GraphModel())
    qtbot.addWidget(view)
    view.resize(450, 600)
    view.show()
    message = view.findChild(QLabel, "graph_empty_message")
    view.model.set_waiting_leaves(["W_xh", "b_h"])
    assert message.isVisible()
    assert "W_xh, b_h require grad, but no operation has used them yet" in message.text()
    view.model.set_waiting_leaves([])
    assert message.text().startswith("No tensor requires grad yet")


def test_when_a_steps_new_leaves_are_too_wide_to_show_readably_its_operations_are_shown_whole(qtbot):
    import torch

    from app.lesson.autograd_graph import GraphTracker
    from app.lesson.summaries import TensorSummarizer

    view = make_view(qtbot, 450, 600)
    leaves = {name: torch.ones(2, requires_grad=True) for name in "abcde"}
    total = leaves["a"] * leaves["b"] + leaves["c"] * leaves["d"] * leaves["e"]  # one line, five leaves
    tracker = GraphTracker(TensorSummarizer())
    tracker.update({**leaves, "total": total})
    graph = tracker.full()
    view.model.set_graph(EMPTY)
    view.model.apply_diff({"changed": True, "added": graph["nodes"], "removed": [], "edges_added": graph["edges"],
                     "roots": graph["roots"], "leaves": {}})
    rects = node_rects(view)
    new_leaves = [rects[n["id"]] for n in graph["nodes"] if n["kind"] == "leaf"]
    assert (max(r.right() for r in new_leaves) - min(r.left() for r in new_leaves)) * MIN_READABLE_SCALE > 450
    shown = visible(view)
    for node in graph["nodes"]:
        if node["kind"] != "leaf":
            assert shown.contains(rects[node["id"]]), node["name"]
    assert text_pixels(view) >= 9


def cut_nodes(view: GraphView) -> list[int]:
    """The nodes the view's edge cuts in two: partly in view, partly out."""
    shown = visible(view)
    return [node_id for node_id, rect in node_rects(view).items()
            if node_id in view.model.nodes and shown.intersects(rect) and not shown.contains(rect)]


@pytest.mark.parametrize("size", [(450, 600), (524, 703), (600, 450), (420, 380), (900, 800)])
def test_fit_frames_whole_nodes_and_cuts_none_at_the_views_edge(qtbot, size):
    """Lesson 03 at 1280×800: after the loop line the leaves were cut in half along the top, and Fit did the same."""
    view = make_view(qtbot, *size)
    _, diffs = rnn_graph(8)
    view.model.set_graph(EMPTY)
    for diff in diffs:
        view.model.apply_diff(diff)
        assert cut_nodes(view) == []
        canvas(view).centerOn(visible(view).center() + QPointF(37, 53))  # the learner panned a little
        view.fit_to_view()
        rects, shown = node_rects(view), visible(view)
        operations = [node["id"] for node in diff["added"] if node["kind"] != "leaf"]
        assert all(shown.contains(rects[node_id]) for node_id in operations)
        assert cut_nodes(view) == []
        assert text_pixels(view) >= 9


def test_the_framed_extent_follows_lanes_as_they_grow_move_and_go(qtbot):
    """The lanes' extent is kept as the lanes grow, not measured again each step: after every
    step, and after the last steps' nodes are freed, it is what measuring every lane gives."""
    view = make_view(qtbot, 800, 600)
    view.model.set_graph(EMPTY)
    _, diffs = rnn_graph(12)

    def measured_again() -> QRectF:
        view._scene.edges._lanes_rect = None
        return view._scene.content_rect()

    for diff in diffs:
        view.model.apply_diff(diff)
        kept = view._scene.content_rect()
        assert kept == measured_again()
    late = [node["id"] for diff in diffs[8:] for node in diff["added"] if node["kind"] != "leaf"]
    before = view._scene.content_rect()
    view.model.apply_diff({"changed": True, "added": [], "removed": late, "edges_added": [], "roots": {}})
    kept = view._scene.content_rect()
    assert kept == measured_again() and kept.height() < before.height()
