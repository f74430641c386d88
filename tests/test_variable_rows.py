"""The rows of the Variables tree without Qt: layout, filter, what changed, cell texts, the events a view follows."""

from __future__ import annotations

from typing import Any
from unittest.mock import Mock, call

import torch
from test_value_text import across
from torch import nn

from app.i18n import set_language
from app.lesson.summaries import Summarizer
from app.variable_rows import GRAD, NAME, REQUIRES_GRAD, VALUE, VariableRows


class Frame:
    """A frame's variables as the app receives them; one summarizer, as in one run of the lesson process."""

    def __init__(self) -> None:
        self.summarizer = Summarizer()

    def __call__(self, **values: Any) -> dict[str, Any]:
        return {name: across(value, self.summarizer) for name, value in values.items()}


def listening(rows: VariableRows) -> Mock:
    events = Mock()
    rows.about_to_be_replaced.connect(events.about_to_be_replaced)
    rows.replaced.connect(events.replaced)
    rows.refilled.connect(events.refilled)
    return events


def test_other_names_replace_the_rows_and_the_same_names_refill_them_in_place():
    frame, rows = Frame(), VariableRows()
    events = listening(rows)
    assert rows.set_snapshot(frame(x=torch.ones(2), n=1), {})
    assert events.mock_calls == [call.about_to_be_replaced(), call.replaced()]
    assert rows.paths() == [":x", ":n"]
    x = rows.row(":x")

    events.reset_mock()
    assert not rows.set_snapshot(frame(x=torch.zeros(2), n=2), {})
    assert events.mock_calls == [call.refilled()]
    assert rows.row(":x") is x and x.cells[VALUE] == "tensor[2] f32 μ=0 σ=0 [0, 0]"

    events.reset_mock()
    assert rows.set_snapshot(frame(x=torch.zeros(2)), {})
    assert events.mock_calls == [call.about_to_be_replaced(), call.replaced()]
    assert rows.row(":n") is None


def test_the_about_to_be_replaced_event_comes_while_the_old_rows_are_still_shown():
    frame, rows = Frame(), VariableRows()
    rows.set_snapshot(frame(a=1), {})
    seen = []
    rows.about_to_be_replaced.connect(lambda: seen.append(rows.paths()))
    rows.replaced.connect(lambda: seen.append(rows.paths()))
    rows.set_snapshot(frame(b=2), {})
    assert seen == [[":a"], [":b"]]


def test_what_the_step_before_differs_in_is_marked_and_a_parent_names_its_changed_children():
    frame, rows = Frame(), VariableRows()
    xs = [torch.zeros(1), torch.ones(1)]
    first = frame(xs=xs, same=5)
    rows.set_snapshot(first, {})
    assert all(not row.change for row in rows.root.walk())
    xs[1] = torch.full((1,), 7.0)
    rows.set_snapshot(frame(xs=xs, same=5, loss=torch.tensor(1.0)), {}, before={"vars": first, "globals": {}})
    assert [(row.path, row.change) for row in rows.root.walk() if row.change] == \
        [(":xs", "changed inside: xs[1]"), (":xs[1]", "new value"), (":loss", "new name")]
    assert rows.tooltip(rows.row(":loss"), NAME) == "loss — Tensor\n\nChanged by the step that led here: new name"
    rows.clear()
    rows.set_snapshot(frame(other=1), {})
    assert not rows.row(":other").change  # cleared: nothing to compare with


def test_the_filter_keeps_a_variable_whose_item_matches_and_drops_an_empty_group():
    frame, rows = Frame(), VariableRows()
    rows.set_snapshot(frame(model=nn.Linear(1, 1), Weight=1), frame(bias=2))
    assert rows.paths()[:2] == ["Locals", "Locals:model"]
    rows.set_filter(" WEIGHT ")
    assert rows.paths() == ["Locals", "Locals:model", "Locals:model.weight", "Locals:model.bias", "Locals:Weight"]
    assert [row.row for row in rows.row("Locals").children] == [0, 1]
    rows.set_filter("")
    assert "Globals:bias" in rows.paths()


def test_cells_speak_the_interface_language_for_groups_grad_states_and_counts():
    frame, rows = Frame(), VariableRows()
    rows.set_snapshot(frame(x=torch.ones(2, requires_grad=True), xs=[torch.ones(1)] * 3), frame(g=1))
    group, x, xs = rows.row("Locals"), rows.row("Locals:x"), rows.row("Locals:xs")
    assert (rows.text(group, NAME), rows.text(group, VALUE)) == ("Locals", "2 variables")
    assert (rows.text(x, REQUIRES_GRAD), rows.text(x, GRAD)) == ("True", "none")
    assert rows.text(xs, VALUE) == "list · 3 items"
    set_language("zh")
    try:
        rows.retranslate()
        assert rows.text(group, NAME) != "Locals" and rows.text(x, GRAD) != "none"
        assert rows.text(xs, VALUE) != "list · 3 items"
    finally:
        set_language("en")


def test_widths_are_measured_over_every_row_nested_rows_indented():
    frame, rows = Frame(), VariableRows()
    rows.set_snapshot(frame(d={"key": 1}, longer_name=2), {})
    assert rows.name_width(len, 10) == max(len("longer_name") + 10, len("d['key']") + 20)
    widths = rows.text_widths(lambda text, bold: len(text) * (2 if bold else 1), [VALUE])
    assert widths == {VALUE: len("{'key': 1}")}


def test_the_same_summaries_again_lay_out_nothing_new_but_new_ones_do():
    """The lesson running on from the step in view hands the rows that step's very summaries again."""
    rows = VariableRows()
    variables, globals_ = {"x": Summarizer().summarize(torch.ones(2))}, {}
    rows.set_snapshot(variables, globals_, None)
    told = Mock()
    for event in (rows.about_to_be_replaced, rows.replaced, rows.refilled):
        event.connect(told)
    assert rows.set_snapshot(variables, globals_, None) is False and told.call_count == 0
    rows.set_snapshot(dict(variables), globals_, None)  # a new pause, equal values: laid out again
    assert told.call_count > 0
