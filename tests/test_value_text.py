"""Value text without Qt: the one-line summaries, grad states, what changed, the rows a value expands to, and when
two summaries are the same value (as the watch list and the lesson's stop-on-change compare them)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch import nn

from app import messages as m
from app.i18n import set_language
from app.lesson.summaries import Summarizer
from app.value_fingerprint import result_fingerprint, value_fingerprint
from app.value_text import (
    describe_change,
    field_tip,
    full_text,
    grad_state,
    number,
    result_text,
    short_dtype,
    summary_line,
    tensor_line,
    value_text,
    value_tip,
)
from app.value_tree import children, summaries_by_path


def across(value: Any, summarizer: Summarizer | None = None) -> dict[str, Any]:
    """A value's summary as the app receives it: summarised, then through the wire's encoding."""
    summary = (summarizer or Summarizer()).summarize(value)
    return m.decode(m.encode({"v": summary})[m.HEADER_SIZE:])["v"]


def test_a_row_line_is_lovely_tensors_and_a_line_alone_carries_device_and_autograd_state():
    x = torch.tensor([[0.5, -1.25, 3.0], [1.0, 2.0, 4.0]], requires_grad=True)
    assert summary_line(across(x)) == "tensor[2, 3] f32 μ=1.54 σ=1.87 [0.5, -1.25, 3, 1, …]"
    assert summary_line(across(x * 2), alone=True) == "tensor[2,3] f32 μ=3.083 σ=3.747 grad_fn=MulBackward0"
    w = nn.Parameter(torch.tensor([0.5, -1.0]))
    w.grad = torch.tensor([1.0, 1.0])
    assert summary_line(across(w)) == "Parameter[2] f32 μ=-0.25 σ=1.06 [0.5, -1]"
    assert summary_line(across(w), alone=True) == "param[2] f32 [0.5, -1] requires_grad has .grad"
    assert tensor_line(across(torch.tensor(3.5))) == "tensor 3.5 f32"
    assert tensor_line(across(torch.tensor(3.5)), alone=True) == "tensor f32 3.5"
    assert summary_line(across(torch.tensor(float("nan"))), alone=True) == "tensor f32 nan NaN×1"
    assert summary_line(across(torch.zeros(0))) == "tensor[0] f32 empty"
    assert summary_line(across(torch.zeros(0)), alone=True) == "tensor[0] f32 empty"


def test_other_values_show_their_repr_alone_and_their_counts_in_a_row():
    torch.manual_seed(0)
    model = nn.Linear(3, 2).eval()
    assert summary_line(across(model)) == \
        "Linear(in_features=3, out_features=2, bias=True) · 2 tensors, 8 values, eval mode"
    assert summary_line(across(model), alone=True) == "Linear(in_features=3, out_features=2, bias=True)"
    items = [torch.zeros(2), torch.ones(3)]
    assert summary_line(across(items)) == "list · 2 items"
    assert summary_line(across({"lr": 0.1})) == "{'lr': 0.1}"
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert summary_line(across(optimizer)).startswith("SGD(lr=0.1, momentum=0, dampening=0, weight_decay=0, …) · ")
    assert summary_line(across(optimizer)).endswith(" · 2 tensors")


def test_the_counts_are_words_of_the_interface_language():
    set_language("zh")
    try:
        assert summary_line(across([torch.zeros(2), torch.ones(3)])) != "list · 2 items"
        assert "has .grad" not in summary_line(across(nn.Parameter(torch.ones(1)) * 1), alone=True)
    finally:
        set_language("en")


def test_grad_state_says_what_dot_grad_holds():
    x = torch.ones(2, requires_grad=True)
    y, z = x * 2, x * 3
    z.retain_grad()
    assert [grad_state(across(t)) for t in (x, y, z)] == ["none", "non-leaf", "retains grad"]
    (y + z).sum().backward()
    assert grad_state(across(x)) == grad_state(across(z)) == "has grad"


def test_a_dtype_is_shortened_by_its_family_and_a_number_to_its_digits():
    assert [short_dtype(d) for d in ("float32", "bfloat16", "uint16", "complex64", "float8_e4m3fn", "bool")] == \
        ["f32", "bf16", "u16", "c64", "f8_e4m3fn", "bool"]
    assert number(1 / 3) == "0.333" and number(1 / 3, 4) == "0.3333"
    assert number(True) == "True" and number(torch.tensor(7).numpy()[()]) == "7"


def test_a_gradient_shows_its_values_up_to_eight_then_shape_and_statistics():
    summarize = Summarizer().summarize
    assert value_text(summarize(torch.tensor(3.5))) == "3.5"
    assert value_text(summarize(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))) == "[[1, 2], [3, 4]]"
    assert value_text(summarize(torch.arange(8.0))) == "[0, 1, 2, 3, 4, 5, 6, 7]"
    assert value_text(summarize(torch.zeros(64, 32))).startswith("[64, 32] μ=0")
    assert value_text(None) == "None"
    assert full_text(across(torch.arange(12.0) / 3)).startswith("[0, 0.3333, 0.6667, 1,")
    assert full_text(across(torch.zeros(100_000))).endswith("(a sample of the values)")


def test_a_tensor_tip_spells_out_what_its_line_cuts():
    tip = value_tip(across(torch.tensor([1.0, float("nan"), float("inf")])))
    assert "min 1   max 1" in tip and "NaN (not a number)" in tip and "infinite" in tip
    assert "preview is left out" in value_tip(across(torch.zeros(100_000)))


def test_each_autograd_field_is_explained_in_one_sentence_for_its_state():
    x = torch.ones(2, requires_grad=True)
    plain = across(torch.ones(3))
    assert field_tip("grad", across(x)) == "no .grad yet: it appears once backward() reaches this leaf"
    assert field_tip("grad", plain) == "no .grad: the tensor does not require grad, so backward() never reaches it"
    assert field_tip("grad_fn", across(x * 2)) == "the autograd node that made this tensor; backward() starts here"
    assert field_tip("is_leaf", across(x * 2)).startswith("computed by an operation")
    assert field_tip("shape", plain) == "the size of each dimension: 3 values, 12 bytes"
    assert "in-place" in field_tip("_version", plain) and field_tip("layout", plain) == ""


def test_a_result_is_its_value_alone_or_its_error():
    assert result_text({"ok": True, "value": across(3)}) == "3"
    assert result_text({"ok": True, "value": None}) == "(no value)"
    assert result_text({"ok": False, "error": {"type": "NameError", "message": "name 'q' is not defined"}}) == \
        "NameError: name 'q' is not defined"


def test_what_changed_between_two_summaries_is_said_in_words():
    summarizer = Summarizer()
    x = torch.tensor([1.0, 2.0], requires_grad=False)
    before = across(x, summarizer)
    x.requires_grad_()
    assert describe_change(before, across(x, summarizer)) == "requires_grad turned on"
    x.sum().backward()
    with_grad = across(x, summarizer)
    x.sum().backward()
    assert describe_change(with_grad, across(x, summarizer)) == ".grad changed"
    x.grad = None
    assert describe_change(with_grad, across(x, summarizer)) == ".grad was cleared"
    model = nn.Linear(1, 1)
    assert describe_change(across(model.train()), across(model.eval())) == "switched to eval() mode"
    assert describe_change(across([1, 2]), across([1, 2, 3])) == "now 3 items"
    assert describe_change(across([1]), across((1,))) == "new value (now a tuple)"
    assert describe_change(None, across(1)) == "new name" and describe_change(None, across(1), child=True) == "new item"
    assert describe_change(across(torch.tensor([float("nan")])), across(torch.tensor([float("nan")]))) == ""


def test_a_value_expands_to_rows_whose_paths_name_them_across_pauses():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 2))
    assert [(name, expression) for name, expression, _ in children(across(net), "net")] == \
        [("net[0].weight", "net[0].weight"), ("net[0].bias", "net[0].bias")]
    assert [name for name, expression, _ in children(across({"a", "b"}), "s") if expression is None] == \
        ["s item 0", "s item 1"]
    paths = summaries_by_path({"d": across({"k": torch.ones(1)})}, {"g": across(1)})
    assert list(paths) == ["Locals:d", "Locals:d['k']", "Globals:g"]
    assert list(summaries_by_path({"xs": across([1, 2])}, {})) == [":xs", ":xs[0]", ":xs[1]"]


def test_two_summaries_are_the_same_value_by_their_data_and_autograd_state_not_their_identity():
    summarizer = Summarizer()
    assert value_fingerprint(across(torch.tensor([1.0, float("nan")]), summarizer)) == \
        value_fingerprint(across(torch.tensor([1.0, float("nan")]), summarizer))  # an equal new tensor
    w = torch.zeros(2)
    before = value_fingerprint(across(w, summarizer))
    w.add_(1).sub_(1)  # changed in place and back: _version moved, the value did not
    assert value_fingerprint(across(w, summarizer)) == before
    w.requires_grad_()
    assert value_fingerprint(across(w, summarizer)) != before


@pytest.mark.parametrize("change", ["weights", "grad", "mode"])
def test_a_module_is_another_value_when_its_parameters_or_mode_change(change):
    """A watched module stops a run where its weights change: the watch list shows the same change."""
    summarizer = Summarizer()
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    before = value_fingerprint(across(model, summarizer))
    if change == "weights":
        with torch.no_grad():
            model.weight.add_(1)
    elif change == "grad":
        model(torch.ones(2)).sum().backward()
    else:
        model.eval()
    assert value_fingerprint(across(model, summarizer)) != before


def test_an_error_result_is_another_value_than_an_ok_one_or_another_error():
    ok = result_fingerprint({"ok": True, "value": across(1)})
    error = result_fingerprint({"ok": False, "error": {"type": "NameError", "message": "x"}})
    other = result_fingerprint({"ok": False, "error": {"type": "NameError", "message": "y"}})
    assert len({ok, error, other}) == 3
    assert result_fingerprint({"ok": True, "value": across(1)}) == ok
