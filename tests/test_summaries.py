"""Value summaries: what a pause shows of tensors, modules, sequences and everything else."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from app.snapshot import is_hidden, visible
from app.summaries import VALUE_LIMIT, Summarizer


def test_tensor_summary_has_every_flag_and_value():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    s = Summarizer().summarize(x)
    assert s["type"] == "Tensor" and s["shape"] == [2, 2] and s["dtype"] == "float32"
    assert (s["device"], s["requires_grad"], s["is_leaf"], s["grad_fn"]) == ("cpu", True, True, None)
    assert (s["numel"], s["nbytes"], s["is_parameter"], s["version"]) == (4, 16, False, 0)
    assert s["values"].tolist() == [[1.0, 2.0], [3.0, 4.0]] and not s["sampled"]
    assert (s["min"], s["max"], s["mean"]) == (1.0, 4.0, 2.5)
    assert math.isclose(s["std"], float(x.detach().std()), rel_tol=1e-6)
    assert s["grad"]["values"].tolist() == [[2.0, 2.0], [2.0, 2.0]]
    ys = Summarizer().summarize(y)
    assert (ys["grad_fn"], ys["is_leaf"], ys["grad"], ys["shape"]) == ("SumBackward0", False, None, [])


def test_nan_and_inf_are_counted_and_stats_use_the_finite_values():
    t = torch.tensor([1.0, float("nan"), float("inf"), 3.0])
    s = Summarizer().summarize(t)
    assert (s["nan"], s["inf"], s["min"], s["max"]) == (1, 1, 1.0, 3.0)


def test_large_tensors_send_a_marked_sample():
    t = torch.arange(VALUE_LIMIT * 3, dtype=torch.float32)
    s = Summarizer().summarize(t)
    assert s["sampled"] and s["values"].size == VALUE_LIMIT
    assert s["values"][0] == 0 and s["values"][-1] == VALUE_LIMIT * 3 - 1
    assert s["max"] == VALUE_LIMIT * 3 - 1


def test_unchanged_tensor_reuses_its_summary_and_a_change_is_seen():
    summarizer = Summarizer()
    t = torch.zeros(3)
    first = summarizer.summarize(t)
    assert summarizer.summarize(t) is first
    t.add_(1)
    second = summarizer.summarize(t)
    assert second is not first and second["version"] == 1 and second["values"].tolist() == [1, 1, 1]


def test_half_precision_integer_and_bool_tensors():
    summarize = Summarizer().summarize
    assert summarize(torch.ones(2, dtype=torch.bfloat16))["values"].dtype == np.float32
    ints = summarize(torch.tensor([1, 5, 3]))
    assert (ints["dtype"], ints["min"], ints["max"], ints["mean"]) == ("int64", 1.0, 5.0, 3.0)
    assert summarize(torch.tensor([True, False]))["values"].tolist() == [True, False]


def test_module_summary_lists_parameters():
    model = nn.Linear(3, 2)
    model.eval()
    s = Summarizer().summarize(model)
    assert s["type"] == "Linear" and s["training"] is False
    names = [(p["name"], p["shape"], p["requires_grad"], p["has_grad"]) for p in s["parameters"]]
    assert names == [("weight", [2, 3], True, False), ("bias", [2], True, False)]
    assert s["parameters"][0]["summary"]["type"] == "Parameter"


def test_packed_sequence_summary():
    seqs = [torch.ones(3, 1), torch.ones(1, 1)]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    packed = nn.utils.rnn.pack_padded_sequence(padded, [3, 1], batch_first=True)
    s = Summarizer().summarize(packed)
    assert s["type"] == "PackedSequence"
    assert s["batch_sizes"]["values"].tolist() == [2, 1, 1]
    assert s["data"]["shape"] == [4, 1]


def test_containers_are_bounded_and_show_tensors_inside():
    s = Summarizer().summarize([torch.ones(2), 3, "a"] + list(range(100)))
    assert s["length"] == 103 and len(s["items"]) == 20
    assert s["items"][0]["type"] == "Tensor" and s["items"][1]["value"] == 3
    d = Summarizer().summarize({"w": torch.zeros(1)})
    assert d["items"][0][0] == "'w'" and d["items"][0][1]["shape"] == [1]


def test_other_values_have_a_bounded_repr_and_broken_repr_is_described():
    class Broken:
        def __repr__(self):
            raise RuntimeError("boom")

    assert Summarizer().summarize(Broken())["repr"].startswith("<repr failed: RuntimeError")
    assert len(Summarizer().summarize("x" * 10_000)["repr"]) <= 300


def test_modules_functions_classes_and_dunders_are_hidden_by_default():
    namespace = {"__name__": "x", "torch": torch, "f": lambda: 0, "C": int, "nn": nn, "x": 1,
                 "layer": nn.Linear(1, 1)}
    assert list(visible(namespace)) == ["x", "layer"]
    assert is_hidden("print", print)
    assert len(visible(namespace, show_hidden=True)) == len(namespace)
