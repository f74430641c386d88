"""The graph model: one graph, fed once, and the learner's marks on it; no Qt."""

from __future__ import annotations

from unittest.mock import Mock

from app.graph_model import GraphModel


def node(node_id: int, name: str, *inputs: int, kind: str = "op", variable: str | None = None) -> dict:
    return {"id": node_id, "name": name, "kind": kind, "next": [[i, 0] for i in inputs], "variable": variable}


def chain() -> dict:
    """``x`` (leaf 1) → MulBackward0 (2, ``y``) → SumBackward0 (3, ``loss``)."""
    return {"nodes": [node(1, "AccumulateGrad", kind="leaf", variable="x"), node(2, "MulBackward0", 1),
                      node(3, "SumBackward0", 2)],
            "edges": [[2, 1, 0], [3, 2, 0]], "roots": {"y": 2, "loss": 3}, "leaves": {1: "x"}}


def listened(model: GraphModel) -> dict[str, Mock]:
    mocks = {name: Mock() for name in ("replaced", "changed", "selected_changed", "highlight_changed",
                                       "active_changed", "leaves_waiting")}
    for name, mock in mocks.items():
        getattr(model, name).connect(mock)
    return mocks


def test_a_whole_graph_replaces_the_one_before_and_says_so_once():
    model = GraphModel()
    told = listened(model)
    model.set_graph(chain(), new=[3, 99])
    assert list(model.nodes) == [1, 2, 3]
    assert model.new == {3}  # a node not in the graph is not new
    assert model.edges() == [(2, 1, 0), (3, 2, 0)]
    told["replaced"].assert_called_once_with()
    told["changed"].assert_not_called()


def test_a_diff_adds_removes_and_renames_and_the_next_diff_ends_the_new_marks():
    model = GraphModel()
    model.set_graph(chain())
    told = listened(model)
    diff = {"changed": True, "added": [node(4, "AddBackward0", 3)], "removed": [2], "updated": [],
            "edges_added": [[4, 3, 0]], "roots": {"loss": 3, "z": 4}, "leaves": {1: "w"}}
    model.apply_diff(diff)
    told["changed"].assert_called_once_with(diff)
    assert list(model.nodes) == [1, 3, 4] and model.new == {4}
    assert model.roots == {"loss": 3, "z": 4}
    assert model.nodes[1]["variable"] == "w"  # the leaf renamed without being sent again
    assert model.consumers(3) == [4] and model.inputs(4) == [3]
    model.apply_diff({"changed": False})
    assert model.new == set() and list(model.nodes) == [1, 3, 4]


def test_a_highlighted_variable_follows_its_subgraph_through_diffs():
    model = GraphModel()
    model.set_graph(chain())
    told = listened(model)
    model.highlight_variable("y")
    assert model.highlighted == {1, 2}
    told["highlight_changed"].assert_called_once_with()
    model.apply_diff({"changed": True, "added": [node(5, "MulBackward0", 1)], "removed": [], "updated": [],
                      "roots": {"y": 5, "loss": 3}, "leaves": {1: "x"}})
    assert model.highlighted == {1, 5}  # y now names the new node
    model.highlight_variable("nothing")
    assert model.highlighted == set()
    model.highlight([3, 42])
    assert model.highlighted == {3} and model.highlighted_variable is None


def test_selection_and_the_replay_mark_are_dropped_with_their_node():
    model = GraphModel()
    model.set_graph(chain())
    told = listened(model)
    model.select(2)
    model.select(2)
    model.select(42)
    assert told["selected_changed"].call_args_list == [((2,),), ((None,),)]
    model.select(2)
    model.set_active(2)
    told["active_changed"].assert_called_once_with(2)
    model.apply_diff({"changed": True, "added": [], "removed": [2], "updated": [], "roots": {"loss": 3},
                      "leaves": {1: "x"}})
    assert model.selected is None and model.active is None


def test_names_of_a_node_come_from_roots_or_its_leaf():
    model = GraphModel()
    model.set_graph(chain())
    assert model.names_of(2) == ["y"] and model.names_of(1) == ["x"] and model.names_of(7) == []
    assert model.node_of("x") == 1 and model.node_of("loss") == 3 and model.node_of("q") is None
    assert model.reach(3) == {1, 2, 3} and model.reach(9) == set()


def test_waiting_leaves_tell_only_when_they_change_and_clear_empties_everything():
    model = GraphModel()
    model.set_graph(chain())
    told = listened(model)
    model.set_waiting_leaves(["x"])
    model.set_waiting_leaves(["x"])
    assert told["leaves_waiting"].call_count == 1
    model.clear()
    assert model.nodes == {} and model.waiting_leaves == [] and told["replaced"].call_count == 1


def test_the_keyboard_walks_along_edges_to_inputs_consumers_and_siblings():
    """``z = x * y + x``: AddBackward0 (4) takes MulBackward0 (3) and x's leaf (1); Mul takes x (1) and y (2)."""
    model = GraphModel()
    model.set_graph({"nodes": [node(1, "AccumulateGrad", kind="leaf", variable="x"),
                               node(2, "AccumulateGrad", kind="leaf", variable="y"), node(3, "MulBackward0", 1, 2),
                               node(4, "AddBackward0", 3, 1)],
                     "edges": [], "roots": {"z": 4}, "leaves": {1: "x", 2: "y"}})
    assert model.step_from(None, "input") == 4  # from nothing: the output
    assert model.step_from(4, "input") == 3 and model.step_from(3, "input") == 1
    assert model.step_from(1, "consumer") == 3  # the first consumer in creation order
    assert model.step_from(1, "next") == 2 and model.step_from(2, "next") == 1  # Mul's inputs, wrapping
    assert model.step_from(2, "previous") == 1
    assert model.step_from(4, "consumer") is None and model.step_from(4, "next") is None  # one output: no sibling
    assert model.step_from(2, "input") is None


def test_creation_order_follows_autogradss_sequence_numbers_with_each_leaf_before_its_first_user():
    """The tracker discovers nodes from the root back (SumBackward0 before PowBackward0); the lesson made them
    the other way round."""
    model = GraphModel()
    model.set_graph({"nodes": [{**node(1, "MulBackward0", 2), "seq": 10}, node(2, "AccumulateGrad", kind="leaf"),
                               {**node(3, "SumBackward0", 4), "seq": 12}, {**node(4, "PowBackward0", 1), "seq": 11}],
                     "edges": [], "roots": {}, "leaves": {}})
    assert model.creation_order() == [2, 1, 4, 3]
