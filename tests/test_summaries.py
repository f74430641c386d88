"""Value summaries: what a pause shows of tensors, modules, sequences and everything else."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from conftest import line_of
from torch import nn

from app.lesson.snapshot import SnapshotBuilder, is_hidden, visible
from app.lesson.summaries import ITEM_LIMIT, PARAMETER_LIMIT, VALUE_LIMIT, Summarizer
from app.lesson.tensor_reading import ValuesUnavailable, tensor_values


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


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
                                   torch.uint8, torch.bool, torch.float16, torch.bfloat16, torch.complex64])
def test_values_are_the_tensors_own_in_numpy_whatever_the_dtype(dtype):
    t = (torch.arange(6).reshape(2, 3) % 3).to(dtype).t()  # transposed: not contiguous
    values = Summarizer().summarize(t)["values"]
    shown = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype  # half precision widened
    assert values.shape == (3, 2) and values.tolist() == t.to(shown).tolist()
    assert values.dtype == torch.empty(0, dtype=shown).numpy().dtype


def test_a_conjugated_view_and_a_quantized_tensor_show_their_values():
    z = torch.tensor([1 + 2j, 3 - 1j]).conj()  # a view with the conjugate bit set: numpy() refuses it as it is
    assert Summarizer().summarize(z)["values"].tolist() == [1 - 2j, 3 + 1j]
    q = torch.quantize_per_tensor(torch.tensor([0.5, 1.0]), scale=0.5, zero_point=0, dtype=torch.qint8)
    assert Summarizer().summarize(q)["values"].tolist() == [0.5, 1.0]


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


def test_a_pause_shows_what_visible_shows_step_after_step_as_values_change_kind():
    builder = SnapshotBuilder()
    namespace = {"__name__": "x", "torch": torch, "f": lambda: 0, "x": 1, "__doc__": None}
    assert list(builder.module_variables(namespace)) == list(visible(namespace)) == ["x"]
    namespace["f"] = 3  # a name hidden at one step (a function) is shown once it holds a number
    namespace["torch"] = torch.ones(1)
    assert list(builder.module_variables(namespace)) == list(visible(namespace)) == ["torch", "f", "x"]
    namespace["x"] = int  # and hidden again once it holds a class
    assert list(builder.module_variables(namespace)) == ["torch", "f"]


def test_a_tensor_that_cannot_be_read_costs_its_own_row_only_step_after_step(monkeypatch):
    """Plain tensors skip the summarizer's dispatch at every pause (most of a recording's values): one
    whose reading fails still gets its own explanation, and the others their cached summaries."""
    builder = SnapshotBuilder()
    namespace = {"a": torch.ones(2), "b": torch.zeros(3), "n": 4}
    first = builder.module_variables(namespace)
    read = builder.summarizer.tensors.summarize

    def failing(tensor):
        if tensor is namespace["b"]:
            raise RuntimeError("storage gone")
        return read(tensor)

    monkeypatch.setattr(builder.summarizer.tensors, "summarize", failing)
    later = builder.module_variables(namespace)
    assert later["a"] is first["a"] and later["n"] is first["n"]
    assert later["b"] == {"type": "Tensor", "repr": "<cannot be shown yet: RuntimeError: RuntimeError('storage gone')>"}


def test_the_globals_torch_compile_adds_are_hidden_but_a_learners_underscored_names_are_not():
    """After lesson 10's compile cell, Variables listed __builtins_dict___2, __compiled_fn_1_…, __resume_at_…"""
    namespace = {}
    exec("import torch\n"
         "def f(x):\n    y = x * 2\n    if y.sum() > 0:\n        return y\n    return -y\n"
         "out = torch.compile(f, backend='eager')(torch.ones(2))\n"
         "__private = 1\n_single = 2\n", namespace)
    generated = [name for name in namespace if name.startswith(("__compiled_fn_", "__resume_at_", "__builtins_dict"))]
    assert generated  # torch.compile did add them
    assert list(visible(namespace)) == ["out", "__private", "_single"]


# ---- bounded summaries ------------------------------------------------------------------

def _two_entries(layout: str) -> torch.Tensor:
    coo = torch.sparse_coo_tensor([[0, 299], [0, 299]], [1.0, 2.0], (300, 300))
    return {"coo": coo, "csr": coo.coalesce().to_sparse_csr(), "csc": coo.coalesce().to_sparse_csc(),
            "bsr": coo.coalesce().to_sparse_bsr((3, 3))}[layout]


@pytest.mark.parametrize("layout", ["coo", "csr", "csc", "bsr"])
def test_sparse_tensors_show_layout_nnz_and_entries_never_a_dense_copy(layout):
    s = Summarizer().summarize(_two_entries(layout))
    assert s["layout"] == f"sparse_{layout}" and s["shape"] == [300, 300] and s["nnz"] == 2
    entries = {tuple(index): value for index, value in s["entries"]}
    assert entries[(0, 0)] == 1.0 and entries[(299, 299)] == 2.0
    assert s["values"] is None and "sparse" in s["why_no_values"] and "2 of its 90,000" in s["why_no_values"]
    assert (s["min"], s["max"]) == (0.0, 2.0) and math.isclose(s["mean"], 3.0 / 90_000)


def test_an_expanded_view_is_summarised_from_a_sample():
    s = Summarizer().summarize(torch.ones(1).expand(2_000_000))
    assert s["shape"] == [2_000_000] and s["sampled"] and s["stats_sampled"]
    assert s["values"].size == VALUE_LIMIT and (s["min"], s["max"], s["mean"], s["std"]) == (1.0, 1.0, 1.0, 0.0)


def test_a_large_tensor_has_exact_stats_read_chunk_by_chunk():
    t = torch.arange(3_000_000, dtype=torch.float32)
    t[5] = float("nan")
    t[7] = float("-inf")
    s = Summarizer().summarize(t)
    finite = t[torch.isfinite(t)].double()
    assert not s["stats_sampled"] and (s["nan"], s["inf"]) == (1, 1)
    assert (s["min"], s["max"]) == (0.0, 2_999_999.0)
    assert math.isclose(s["mean"], float(finite.mean()), rel_tol=1e-12)
    assert math.isclose(s["std"], float(finite.std()), rel_tol=1e-9)
    transposed = Summarizer().summarize(torch.arange(2_000_000.0).reshape(1000, 2000).t())
    assert not transposed["stats_sampled"] and transposed["max"] == 1_999_999.0


class _Wrapper(torch.Tensor):
    dispatched = 0

    @staticmethod
    def __new__(cls, elem):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype, requires_grad=True)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.dispatched += 1
        return func(*[a.elem if isinstance(a, _Wrapper) else a for a in args], **(kwargs or {}))


def _fake() -> torch.Tensor:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return torch.ones(2, 3)


@pytest.mark.parametrize("make, reason", [
    (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)]), "nested tensor"),
    (lambda: torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged), "nested tensor"),
    (lambda: _Wrapper(torch.ones(2, 3)), "__torch_dispatch__"),
    (lambda: torch.ones(2, 3, device="meta", requires_grad=True), "meta tensor"),
    (_fake, "fake tensor"),
], ids=["nested-strided", "nested-jagged", "wrapper-subclass", "meta", "fake"])
def test_tensors_without_readable_values_show_their_metadata_and_say_why(make, reason):
    tensor = make()
    _Wrapper.dispatched = 0
    s = Summarizer().summarize(tensor)
    assert reason in s["why_no_values"] and s["values"] is None
    assert s["type"] == "Tensor" and s["dtype"] == "float32" and s["device"] in ("cpu", "meta")
    assert s["layout"] in ("strided", "jagged") and s["grad_fn"] is None
    assert s["requires_grad"] == tensor.requires_grad and len(s["shape"]) == tensor.dim()
    assert _Wrapper.dispatched == 0  # the subclass's own code never ran


def test_nested_shapes_name_their_ragged_dimension():
    summarize = Summarizer().summarize
    assert summarize(torch.nested.nested_tensor([torch.ones(2, 4), torch.ones(3, 4)]))["shape"] == [2, "*", 4]
    assert summarize(torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=torch.jagged))["shape"][1] \
        .startswith("j")



@pytest.mark.parametrize("layout", [torch.strided, torch.jagged], ids=["strided", "jagged"])
def test_a_nested_tensor_keeps_its_summary_until_it_changes(layout):
    """The summary cache's key reads a nested tensor's shape, which a strided one does not have."""
    tensor = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], layout=layout)
    summarize = Summarizer().summarize
    first = summarize(tensor)
    assert summarize(tensor) is first
    tensor.mul_(2)
    again = summarize(tensor)
    assert again is not first and again["version"] == first["version"] + 1
    tensor.requires_grad_()
    assert summarize(tensor) is not again and summarize(tensor)["requires_grad"] is True


class _Counted:
    reprs = 0

    def __repr__(self):
        _Counted.reprs += 1
        return "counted"


def test_a_long_list_builds_only_the_repr_it_shows():
    _Counted.reprs = 0
    s = Summarizer().summarize([_Counted() for _ in range(10_000)])
    assert s["length"] == 10_000 and len(s["items"]) == ITEM_LIMIT and s["repr"].endswith("...]")
    assert _Counted.reprs <= 2 * ITEM_LIMIT
    tensors = Summarizer().summarize([torch.ones(4)] * 10_000)
    assert tensors["repr"].startswith("[tensor(shape=[4], dtype=float32), ")


def test_a_module_with_many_parameters_says_how_many_and_that_the_list_is_cut():
    model = nn.Sequential(*[nn.Linear(2, 2) for _ in range(500)])
    s = Summarizer().summarize(model)
    assert s["parameter_count"] == 1000 and s["parameters_cut"] and len(s["parameters"]) == PARAMETER_LIMIT
    assert s["repr"].startswith("Sequential(\n  (0): Linear(in_features=2, out_features=2, bias=True)")
    assert s["repr"].endswith("…") and len(s["repr"]) <= 2000
    small = Summarizer().summarize(nn.Linear(3, 2))
    assert (small["parameter_count"], small["parameters_cut"]) == (2, False)
    assert small["repr"] == repr(nn.Linear(3, 2))


class _Hangs:
    calls = 0

    def __repr__(self):
        type(self).calls += 1
        while True:
            pass


def test_a_repr_that_never_returns_gets_a_placeholder_and_is_not_retried():
    summarizer = Summarizer()
    hangs = _Hangs()
    _Hangs.calls = 0
    summarizer.new_pause()
    assert summarizer.summarize(hangs)["repr"] == "<repr() did not return within 0.5 s>"
    summarizer.new_pause()
    assert summarizer.summarize(hangs)["repr"] == "<repr() did not return within 0.5 s>"
    assert _Hangs.calls == 1


def test_one_pause_spends_at_most_its_budget_on_slow_reprs():
    summarizer = Summarizer()
    _Hangs.calls = 0
    summarizer.new_pause()
    shown = [summarizer.summarize(_Hangs())["repr"] for _ in range(3)]
    assert shown[-1].startswith("<repr() not run: this pause already spent 1 s")
    assert _Hangs.calls == 2


def test_a_repr_that_sleeps_is_cut_short_too():
    class Sleeps:
        def __repr__(self):
            time.sleep(10)
            return "late"

    summarizer = Summarizer()
    summarizer.new_pause()
    assert summarizer.summarize(Sleeps())["repr"] == "<repr() did not return within 0.5 s>"


def test_full_values_refuse_to_densify_a_huge_sparse_tensor_or_view():
    huge = torch.sparse_coo_tensor([[0, 19_999], [0, 19_999]], [1.0, 2.0], (20_000, 20_000))
    with pytest.raises(ValuesUnavailable, match="400,000,000 elements"):
        tensor_values(huge)
    with pytest.raises(ValuesUnavailable, match="200,000,000 elements over 4 bytes"):
        tensor_values(torch.ones(1).expand(200_000_000))
    with pytest.raises(ValuesUnavailable, match="meta tensor"):
        tensor_values(torch.ones(2, device="meta"))
    assert tensor_values(_two_entries("csr"))[299, 299] == 2.0
    assert tensor_values(torch.ones(1).expand(5)).tolist() == [1.0] * 5


def test_in_the_lesson_process_a_hanging_repr_and_a_huge_sparse_tensor_cost_a_bounded_pause(session, events, lesson):
    path = lesson("""
    import torch

    class Hangs:
        def __repr__(self):
            while True:
                pass

    h = Hangs()
    s = torch.sparse_coo_tensor([[0, 19999], [0, 19999]], [1.0, 2.0], (20000, 20000))
    done = 1
    done = 2
    print("finished")
    """)
    session.breakpoints[path] = {line_of(path, "done = 1"): None}
    session.start(path, stop_on_entry=False)
    shown = events.pause()["vars"]
    assert shown["h"]["repr"] == "<repr() did not return within 0.5 s>"
    assert shown["s"]["nnz"] == 2 and shown["s"]["values"] is None
    refused = events.reply(session.request("values", expression="s"))
    assert not refused["ok"] and "400,000,000 elements" in refused["error"]["message"]
    session.step_over()
    assert events.pause()["vars"]["h"]["repr"] == "<repr() did not return within 0.5 s>"
    session.resume()
    assert events.end().status == "ok" and events.output("stdout") == "finished\n"


def test_a_non_leaf_that_retains_its_grad_shows_it_and_one_that_does_not_stays_silent(recwarn):
    """Lessons 03 and 07 call retain_grad() on an intermediate result and point at its .grad."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    kept = x * 3
    kept.retain_grad()
    other = x * 4
    (kept.sum() + other.sum()).backward()
    summarizer = Summarizer()
    summary = summarizer.summarize(kept)
    assert not summary["is_leaf"] and summary["retains_grad"]
    assert summary["grad"] is not None and summary["grad"]["values"].tolist() == [1.0, 1.0]
    assert summarizer.summarize(other)["grad"] is None
    assert not [w for w in recwarn if "non-leaf" in str(w.message)]  # reading it did not warn


# ---- the summary cache never hands back a stale summary ------------------------------------------
# Each of these changes leaves the tensor the same object; a cache that kept the old summary fails here.


def test_a_tensor_changed_in_place_gets_a_new_summary_with_the_new_values():
    summarizer = Summarizer()
    t = torch.zeros(3)
    first = summarizer.summarize(t)
    t[1] = 5.0
    second = summarizer.summarize(t)
    assert second is not first and second["values"].tolist() == [0, 5, 0]


def test_a_grad_that_appears_or_changes_in_place_gets_a_new_summary():
    summarizer = Summarizer()
    w = torch.ones(2, requires_grad=True)
    before = summarizer.summarize(w)
    (w * 3).sum().backward()
    after = summarizer.summarize(w)
    assert before["grad"] is None and after is not before and after["grad"]["values"].tolist() == [3, 3]
    w.grad.mul_(2)
    doubled = summarizer.summarize(w)
    assert doubled is not after and doubled["grad"]["values"].tolist() == [6, 6]


def test_requires_grad_toggled_gets_a_new_summary():
    summarizer = Summarizer()
    t = torch.ones(2)
    assert summarizer.summarize(t)["requires_grad"] is False
    t.requires_grad_()
    assert summarizer.summarize(t)["requires_grad"] is True
    t.requires_grad_(False)
    assert summarizer.summarize(t)["requires_grad"] is False


def test_a_retain_grad_and_a_reshape_through_data_get_a_new_summary():
    summarizer = Summarizer()
    y = torch.ones(2, requires_grad=True) * 2
    assert summarizer.summarize(y)["retains_grad"] is False
    y.retain_grad()
    assert summarizer.summarize(y)["retains_grad"] is True
    t = torch.zeros(3)
    summarizer.summarize(t)
    t.data = torch.zeros(2, 2)  # keeps the version counter: the shape tells
    assert summarizer.summarize(t)["shape"] == [2, 2]


def test_a_tensor_that_becomes_a_leaf_or_stops_being_one_gets_a_new_summary():
    """A leaf's cache key leaves out ``grad_fn`` and ``retains_grad``: joining or leaving the leaves is still seen."""
    summarizer = Summarizer()
    w = torch.ones(3, requires_grad=True)
    t = torch.zeros(3)
    assert summarizer.summarize(t)["is_leaf"] is True
    t.add_(w)  # an in-place op with a tensor that requires grad: t now has a grad_fn
    joined = summarizer.summarize(t)
    assert (joined["is_leaf"], joined["grad_fn"]) == (False, "AddBackward0")
    y = w * 2
    y.retain_grad()
    assert summarizer.summarize(y)["retains_grad"] is True
    y.detach_()  # a leaf again, without a grad_fn (PyTorch still says it retains its grad)
    left = summarizer.summarize(y)
    assert (left["is_leaf"], left["grad_fn"], left["requires_grad"]) == (True, None, False)
    assert left["retains_grad"] is y.retains_grad
    w.requires_grad_(False)
    assert summarizer.summarize(w)["requires_grad"] is False


def test_values_written_through_data_or_numpy_get_a_new_summary():
    """``.data`` and numpy views write without bumping ``_version``: old tutorials' SGD step."""
    summarizer = Summarizer()
    w = torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    before = summarizer.summarize(w)
    w.data -= 0.5 * w.grad
    after = summarizer.summarize(w)
    assert w._version == 0 and after is not before
    assert after["values"].tolist() == [0.0, 0.0, 0.0] and after["max"] == 0.0
    w.grad.data.zero_()
    cleared = summarizer.summarize(w)
    assert cleared is not after and cleared["grad"]["values"].tolist() == [0.0, 0.0, 0.0]
    assert cleared["grad"]["max"] == 0.0 and cleared["grad"]["mean"] == 0.0
    first = summarizer.summarize(w)
    w.detach().numpy()[1] = 7.0
    assert summarizer.summarize(w) is not first and summarizer.summarize(w)["max"] == 7.0
    assert summarizer.summarize(w) is summarizer.summarize(w)  # unchanged: the cached summary


def test_a_tensor_replaced_by_another_with_the_same_id_gets_its_own_summary():
    summarizer = Summarizer()
    for attempt in range(200):
        old = torch.full((2,), float(attempt))
        old_id, old_summary = id(old), summarizer.summarize(old)
        del old
        new = torch.full((2,), -1.0)
        if id(new) == old_id:
            summary = summarizer.summarize(new)
            assert summary is not old_summary and summary["values"].tolist() == [-1, -1]
            return
    pytest.skip("CPython never reused the id here")


def test_a_grad_replaced_by_another_with_the_same_id_and_version_gets_a_new_summary():
    summarizer = Summarizer()
    w = torch.zeros(2, requires_grad=True)
    for attempt in range(200):
        w.grad = torch.full((2,), float(attempt))
        grad_id, before = id(w.grad), summarizer.summarize(w)
        w.grad = None
        w.grad = torch.full((2,), -7.0)  # a fresh tensor: version 0, like the one it replaced
        if id(w.grad) == grad_id:
            after = summarizer.summarize(w)
            assert after is not before and after["grad"]["values"].tolist() == [-7, -7]
            return
    pytest.skip("CPython never reused the id here")


def test_equal_scalars_share_a_summary_but_look_alike_values_do_not():
    summarizer = Summarizer()
    assert summarizer.summarize(50_000) is summarizer.summarize(50_000)
    assert summarizer.summarize("h") is summarizer.summarize("h")
    one, true, one_f = summarizer.summarize(1), summarizer.summarize(True), summarizer.summarize(1.0)
    assert (one["type"], true["type"], one_f["type"]) == ("int", "bool", "float")
    assert (one["repr"], true["repr"], one_f["repr"]) == ("1", "True", "1.0")
    zero, negative_zero = summarizer.summarize(0.0), summarizer.summarize(-0.0)
    assert zero["repr"] == "0.0" and negative_zero["repr"] == "-0.0"
    nan = summarizer.summarize(float("nan"))
    assert nan["repr"] == "nan" and summarizer.summarize(None)["type"] == "NoneType"


def test_an_optimizer_sends_its_settings_and_tensor_count_read_without_its_methods():
    """An optimizer showed only "SGD (", the first line of its repr."""
    model = nn.Linear(3, 1)
    s = Summarizer().summarize(torch.optim.SGD(model.parameters(), lr=0.1))
    assert s["type"] == "SGD" and s["repr"].startswith("SGD (")  # the whole repr, for the tooltip
    assert s["optimizer"]["groups"] == 1 and s["optimizer"]["tensors"] == 2
    assert s["optimizer"]["settings"][:2] == [["lr", "0.1"], ["momentum", "0"]]
    assert "foreach" not in dict(s["optimizer"]["settings"])  # None: nothing to say


    class Guarded(torch.optim.Adam):
        """A lesson's subclass whose attribute reads are code of its own: the summary runs none of it."""

        guarded = False

        def __getattribute__(self, name):
            if name == "param_groups" and type(self).guarded:
                raise RuntimeError("the lesson's code ran")
            return super().__getattribute__(name)

    optimizer = Guarded([{"params": [model.weight]}, {"params": [model.bias], "lr": 1.0}])
    Guarded.guarded = True  # built: from now on a read of param_groups through the object fails
    s = Summarizer().summarize(optimizer)
    assert (s["type"], s["optimizer"]["groups"], s["optimizer"]["tensors"]) == ("Guarded", 2, 2)
    assert dict(s["optimizer"]["settings"])["betas"] == "(0.9, 0.999)"
