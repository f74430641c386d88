"""The layered layout of the autograd graph, on graphs the engine builds from real PyTorch programs (no Qt)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
import torch

from app.graph_layout import LayeredLayout
from app.lesson.autograd_graph import GraphTracker
from app.lesson.summaries import TensorSummarizer

# -- graphs the tests draw (the view tests and the benchmark use them too) -----------------


def rnn_graph(steps: int, hidden: int = 8) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An RNN cell ``h = tanh(x_t @ W_xh + h @ W_hh + b)`` unrolled ``steps`` times, then ``loss = h.sum()``.

    Returns
    -------
    full : dict
        The whole graph after the loss (``5 * steps + 4`` nodes, ``8 * steps`` edges).
    diffs : list of dict
        One diff per step as the engine sends them while the learner steps, then the loss's.
    """
    torch.manual_seed(0)
    W_xh = torch.randn(4, hidden, requires_grad=True)
    W_hh = torch.randn(hidden, hidden, requires_grad=True)
    b = torch.zeros(hidden, requires_grad=True)
    h = torch.zeros(1, hidden)
    tracker = GraphTracker(TensorSummarizer())
    diffs = []
    for _ in range(steps):
        x_t = torch.randn(1, 4)
        h = torch.tanh(x_t @ W_xh + h @ W_hh + b)
        diffs.append(tracker.update({"W_xh": W_xh, "W_hh": W_hh, "b": b, "x_t": x_t, "h": h}))
    loss = h.sum()
    diffs.append(tracker.update({"W_xh": W_xh, "W_hh": W_hh, "b": b, "h": h, "loss": loss}))
    return tracker.full(), diffs


def small_graph() -> dict[str, Any]:
    """``y = x * w + b`` with three leaves."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([3.0, 4.0], requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    y = x * w + b
    tracker = GraphTracker(TensorSummarizer())
    tracker.update({"x": x, "w": w, "b": b, "y": y})
    return tracker.full()


def crossings(layout: LayeredLayout, edges: list[list[int]]) -> int:
    """Pairs of edges between the same two adjacent ranks that cross."""
    spans: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for source, target, _ in edges:
        (cs, rs), (ct, rt) = layout.position(source), layout.position(target)
        if rs - rt == 1:
            spans.setdefault((rs, rt), []).append((cs, ct))
    return sum((a[0] - b[0]) * (a[1] - b[1]) < 0
               for pairs in spans.values() for a, b in itertools.combinations(pairs, 2))


# -- tests -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rnn10() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return rnn_graph(10)


def test_every_edge_runs_from_a_higher_rank_to_a_lower_one(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    assert len(full["nodes"]) == 54 and len(layout) == 54
    for source, target, _ in full["edges"]:
        assert layout.position(source)[1] > layout.position(target)[1]


def test_without_groups_leaves_sit_in_the_top_band_and_nothing_else_does(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    for node in full["nodes"]:
        rank = layout.position(node["id"])[1]
        assert (rank == 0) == (node["kind"] == "leaf") == layout.is_leaf(node["id"])


def test_no_two_nodes_share_a_cell(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    cells = [layout.position(n["id"]) for n in full["nodes"]]
    assert len(set(cells)) == len(cells)


def test_the_recurrent_chain_stays_in_one_column_without_crossings(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    tanh_columns = {layout.position(n["id"])[0] for n in full["nodes"] if n["name"] == "TanhBackward0"}
    assert len(tanh_columns) == 1
    assert crossings(layout, full["edges"]) == 0
    assert max(layout.position(n["id"])[0] for n in full["nodes"] if n["kind"] != "leaf") <= 1


def test_a_node_added_with_its_user_sits_just_above_it(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    for source, target, _ in full["edges"]:
        if not layout.is_leaf(target):
            assert layout.position(source)[1] - layout.position(target)[1] == 1


def test_shared_leaves_reach_deep_users_through_their_lane(rnn10):
    full, _ = rnn10
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    leaves = {n["variable"]: n["id"] for n in full["nodes"] if n["kind"] == "leaf"}
    assert set(leaves) == {"W_xh", "W_hh", "b"}
    deepest_tanh = max(layout.position(n["id"])[1] for n in full["nodes"] if n["name"] == "TanhBackward0")
    for leaf in leaves.values():
        assert len(layout.users(leaf)) == 10
        assert deepest_tanh - 4 < layout.lane_depth(leaf) < deepest_tanh
    lane_edges = [e for e in full["edges"] if layout.uses_lane(e[0], e[1])]
    assert len(lane_edges) == 28  # every leaf edge but the two from the first step's matmuls, right under the band


def test_adding_step_by_step_keeps_every_placed_node_where_it_was(rnn10):
    _, diffs = rnn10
    layout = LayeredLayout()
    seen: dict[int, tuple[int, int]] = {}
    for diff in diffs:
        layout.remove(diff["removed"])
        placed = layout.add(diff["added"], diff["edges_added"])
        assert sorted(placed) == sorted(n["id"] for n in diff["added"])
        for node_id, cell in seen.items():
            if node_id in layout:
                assert layout.position(node_id) == cell
        seen.update((i, layout.position(i)) for i in placed)
    assert len(layout) == 54


def test_removed_nodes_free_their_cells_and_edges():
    full = small_graph()
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    by_name = {n["name"]: n["id"] for n in full["nodes"]}
    add, mul = by_name["AddBackward0"], by_name["MulBackward0"]
    cell = layout.position(add)
    layout.remove([add, 12345])
    assert add not in layout and len(layout) == 4
    assert add not in layout.users(mul)
    layout.add([{"id": 99, "kind": "op"}], [[99, mul, 0]])
    assert layout.position(99) == cell


def test_small_graph_puts_each_directly_used_leaf_above_its_user():
    full = small_graph()
    layout = LayeredLayout()
    layout.add(full["nodes"], full["edges"])
    names = {n["id"]: n["variable"] or n["name"] for n in full["nodes"]}
    position = {names[i]: layout.position(i) for i in names}
    assert position["MulBackward0"] == (0, 1) and position["AddBackward0"] == (0, 2)
    assert [position[v] for v in ("x", "w", "b")] == [(0, 0), (1, 0), (2, 0)]
    assert layout.lane_depth(next(i for i, n in names.items() if n == "b")) == 2


def test_a_cycle_is_refused():
    layout = LayeredLayout()
    with pytest.raises(ValueError, match="cycle"):
        layout.add([{"id": 1, "kind": "op"}, {"id": 2, "kind": "op"}], [[1, 2, 0], [2, 1, 0]])


def test_one_more_step_of_a_long_rnn_places_only_its_own_piece():
    _, diffs = rnn_graph(300)
    layout = LayeredLayout()
    for diff in diffs[:-2]:
        layout.add(diff["added"], diff["edges_added"])
    before = {n["id"]: layout.position(n["id"]) for diff in diffs[:-2] for n in diff["added"]}
    placed = layout.add(diffs[-2]["added"], diffs[-2]["edges_added"])
    assert len(placed) == 5
    assert all(layout.position(i) == cell for i, cell in before.items())
    assert {layout.position(i)[1] for i in placed} == {max(r for _, r in before.values()) + k for k in (1, 2, 3, 4)}


def test_a_node_that_uses_the_same_input_twice_is_placed():
    """``b = (a * a).sum()``: MulBackward0 has two edges to a's AccumulateGrad, and the layout
    took the pair for a cycle, so the pause that made them drew nothing and raised."""
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    tracker = GraphTracker(TensorSummarizer())
    diff = tracker.update({"a": a, "b": (a * a).sum()})
    pairs = [tuple(edge[:2]) for edge in diff["edges_added"]]
    assert len(pairs) - len(set(pairs)) == 1  # the two edges of a * a
    layout = LayeredLayout()
    placed = layout.add(diff["added"], diff["edges_added"])
    assert len(placed) == len(diff["added"]) == 3
    ranks = {node_id: layout.position(node_id)[1] for node_id in placed}
    for source, target, _ in diff["edges_added"]:
        assert ranks[source] > ranks[target] or layout.is_leaf(target)


def grouped(diffs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[int]]]:
    """The nodes of ``diffs``, each with the step that made it as its group, and all their edges."""
    nodes = [{**node, "group": ("step", step)} for step, diff in enumerate(diffs) for node in diff["added"]]
    return nodes, [edge for diff in diffs for edge in diff["edges_added"]]


def by_group(node: dict[str, Any]) -> tuple:
    return (node["group"],)


def test_each_group_gets_ranks_of_its_own_in_the_order_it_came(rnn10):
    _, diffs = rnn10
    nodes, edges = grouped(diffs)
    layout = LayeredLayout(by_group)
    layout.add(nodes, edges)
    spans: dict[tuple, list[int]] = {}
    for node in nodes:
        spans.setdefault(node["group"], []).append(layout.position(node["id"])[1])
    ordered = [(min(ranks), max(ranks)) for _, ranks in sorted(spans.items(), key=lambda item: item[0][1])]
    assert all(high < next_low for (_, high), (next_low, _) in itertools.pairwise(ordered))
    stepwise = LayeredLayout(by_group)
    for step, diff in enumerate(diffs):
        stepwise.add([{**node, "group": ("step", step)} for node in diff["added"]], diff["edges_added"])
    assert all(stepwise.position(n["id"])[1] == layout.position(n["id"])[1] for n in nodes)
    for source, target, _ in edges:
        assert layout.position(source)[1] > layout.position(target)[1]


def test_a_group_that_comes_back_after_another_gets_a_box_of_its_own():
    layout = LayeredLayout(by_group)
    layout.add([{"id": 1, "kind": "op", "group": "a"}], [])
    layout.add([{"id": 2, "kind": "op", "group": "a"}], [[2, 1, 0]])
    layout.add([{"id": 3, "kind": "op", "group": "b"}], [[3, 2, 0]])
    layout.add([{"id": 4, "kind": "op", "group": "a"}], [[4, 3, 0]])
    assert layout.boxes(1) == layout.boxes(2) != layout.boxes(4)
    assert [key for _, key in layout.boxes(4)] == ["a"]


def test_blocks_are_spaced_by_the_boxes_that_end_and_begin_between_them():
    asked = []

    def spacing(closes: int, opens: int, above: bool, below: bool) -> int:
        asked.append((closes, opens, above, below))
        return 2

    layout = LayeredLayout(lambda node: node["group"], spacing)
    layout.add([{"id": 1, "kind": "leaf", "group": ("line", "model")},
                {"id": 2, "kind": "op", "group": ("line", "model")},
                {"id": 3, "kind": "op", "group": ("line", "loss")}], [[2, 1, 0], [3, 2, 0]])
    assert asked == [(1, 1, False, False)]
    assert [layout.position(i)[1] for i in (1, 2, 3)] == [0, 1, 4]
    assert layout.boxes(3)[0] == layout.boxes(2)[0] and layout.boxes(3)[1] != layout.boxes(2)[1]


def test_lanes_and_connectors_to_different_nodes_never_share_a_track():
    """Two nodes of one column whose lanes' ranks overlap, and connectors in one gap to both lanes."""
    layout = LayeredLayout()
    layout.add([{"id": 1, "kind": "leaf"}, {"id": 2, "kind": "op"}, {"id": 3, "kind": "op"}, {"id": 4, "kind": "op"}],
               [[2, 1, 0], [3, 2, 0], [4, 3, 0]])
    layout.add([{"id": 5, "kind": "op"}, {"id": 6, "kind": "op"}], [[5, 1, 0], [5, 2, 0], [6, 4, 0]])
    layout.add([{"id": 7, "kind": "op"}], [[7, 6, 0], [7, 1, 0], [7, 2, 0]])
    assert layout.uses_lane(7, 1) and layout.uses_lane(7, 2) and layout.uses_lane(5, 1)
    assert layout.position(1)[0] == layout.position(2)[0]  # one gutter
    assert layout.lane_track(1) != layout.lane_track(2)
    assert layout.connector_track(7, 1) != layout.connector_track(7, 2)


def test_lanes_on_one_track_of_a_gutter_never_overlap_as_a_graph_grows_and_shrinks():
    """Lanes sharing a gutter's track are found by bisection: as random graphs grow (lanes
    deepen and push others aside) and lose nodes, no two lanes of one track ever share a rank."""
    rng = random.Random(7)
    layout, next_id, placed = LayeredLayout(), 1, []
    for step in range(120):
        if placed and step % 15 == 14:  # free the newest nodes, as a loop's freed graph does
            gone, placed = placed[-6:], placed[:-6]
            layout.remove(gone)
        node = {"id": next_id, "kind": "leaf" if not placed or rng.random() < 0.25 else "op"}
        edges = [[next_id, target, k] for k, target in enumerate(rng.sample(placed, min(len(placed), 3)))
                 if node["kind"] == "op"]
        layout.add([node], edges)
        placed.append(next_id)
        next_id += 1
        lanes = [(layout.position(n)[0], layout.lane_track(n), layout.position(n)[1], layout.lane_depth(n))
                 for n in placed if layout.lane_depth(n) is not None]
        for (c1, t1, top1, d1), (c2, t2, top2, d2) in itertools.combinations(lanes, 2):
            assert not (c1 == c2 and t1 == t2 and top1 <= d2 and top2 <= d1), (step, lanes)
