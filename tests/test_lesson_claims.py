"""What a lesson's notes claim about PyTorch, run against the installed torch, and said alike in English and Chinese.

Each test checks a fact with torch itself, then that the notes of the lessons that state it
say it (in both languages) and no longer say the wrong version it replaced. Plain torch, no
engine: a claim is about PyTorch, not about a run of the lesson.
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pytest
import torch

from app.lesson_format import parse_lesson

LESSONS = Path(__file__).resolve().parent.parent / "lessons"


def notes(stem_prefix: str, lang: str) -> str:
    """All the notes of the lesson whose file name starts with ``stem_prefix``, in ``lang``, as one text.

    Line breaks become spaces, so a phrase the notes wrap over two lines is still found.
    """
    (path,) = LESSONS.glob(f"{stem_prefix}_*.py")
    text = "\n".join(section.text[lang] for section in parse_lesson(path).notes)
    return " ".join(text.split()) if lang == "en" else "".join(text.split())


def test_grad_mode_is_per_thread_and_a_new_thread_starts_with_it_on():
    seen: dict[str, bool] = {}
    with torch.no_grad():
        thread = threading.Thread(target=lambda: seen.update(other=torch.is_grad_enabled()))
        thread.start()
        thread.join()
        seen["this"] = torch.is_grad_enabled()
    assert seen == {"this": False, "other": True}
    assert "one per thread" in notes("06", "en") and "a new thread starts with it on" in notes("06", "en")
    assert "每个线程各有一个" in notes("06", "zh") and "新线程启动时它是开着的" in notes("06", "zh")
    assert "one per thread" in notes("15", "en") and "每个线程各有一个" in notes("15", "zh")
    for stem in ("06", "15"):
        assert "global" not in notes(stem, "en") and "全局" not in notes(stem, "zh")


def test_multiplying_by_a_number_saves_the_number_as_a_0d_tensor_not_the_output():
    x = torch.randn(3, requires_grad=True)
    doubled = x * 2
    saved = doubled.grad_fn._saved_other
    assert type(doubled.grad_fn).__name__ == "MulBackward0"
    assert saved.dim() == 0 and saved.item() == 2 and doubled.grad_fn._saved_self is None
    doubled.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        doubled.sum().backward()  # what lesson 9 says: the saved 2 is freed, so a second pass fails
    assert "`x * 2` saves the constant 2 (as a 0-d tensor), not its output" in notes("11", "en")
    assert "`x*2`保存的是常数2（一个0维张量），而不是它的输出" in notes("11", "zh")
    assert "does not save its output" not in notes("11", "en")
    assert "multiplying by 2 already saves a tensor, the 2 itself as a 0-d tensor" in notes("09", "en")
    assert "保存的是作为0维张量的2本身" in notes("09", "zh")


def test_padding_zeros_pull_a_mean_toward_zero_from_either_side():
    for sign in (1.0, -1.0):
        row = torch.tensor([[sign * 2.0], [sign * 4.0], [0.0], [0.0]])  # two real steps, two of padding
        naive, masked = row.mean(), row[:2].mean()
        assert abs(naive) < abs(masked) and naive * masked > 0  # nearer 0, same side: up for a negative mean
    assert "pull the average toward 0" in notes("04", "en") and "drag the average down" not in notes("04", "en")
    assert "把平均值拉向0" in notes("04", "zh") and "拉低平均值" not in notes("04", "zh")


def test_sqrt_of_where_has_the_gradient_a_quarter_and_the_value_two():
    x = torch.tensor([-1.0, 0.0, 4.0], requires_grad=True)
    value = torch.sqrt(torch.where(x > 0, x, 0.0))
    value.sum().backward()
    assert value.tolist() == [0.0, 0.0, 2.0] and x.grad.tolist() == [0.0, 0.0, 0.25]
    assert "The gradient of `sqrt(where(x > 0, x, 0))` is [0, 0, 0.25] (its value is [0, 0, 2])" in notes("17", "en")
    assert "`sqrt(where(x>0,x,0))`的梯度是[0,0,0.25]（它的值是[0,0,2]）" in notes("17", "zh")


def test_inductor_is_one_of_several_compiling_backends():
    if not hasattr(torch, "_dynamo"):
        pytest.skip("this PyTorch has no torch.compile")
    backends = torch._dynamo.list_backends()
    assert "inductor" in backends and len(set(backends) - {"inductor"}) >= 1 and "eager" not in backends
    en, zh = notes("10", "en"), notes("10", "zh")
    assert "C++ on the CPU" in en and "Triton kernels on a GPU" in en and "not the only backend that compiles" in en
    assert "Only the default backend" not in en and "compiles nothing" in en
    assert "在CPU上生成C++" in zh and "在GPU上生成Triton内核" in zh and "它并不是唯一会编译的后端" in zh


def test_a_tracer_warns_at_the_bool_conversion_and_records_only_the_branch_that_ran():
    def branchy(x):
        if x.mean() > 0:
            return x * 2
        return -x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(branchy, torch.ones(3))
    assert any(w.category.__name__ == "TracerWarning" and "Python boolean" in str(w.message) for w in caught)
    negative = -torch.ones(3)
    assert torch.equal(traced(negative), negative * 2) and not torch.equal(traced(negative), branchy(negative))
    en, zh = notes("02", "en"), notes("02", "zh")
    assert "notices that conversion and warns about it, but it records only the branch that ran" in en
    assert "cannot see the choice" not in en
    assert "会注意到这次转换并发出警告，但它只记录实际执行的那个分支" in zh


def test_accumulating_micro_batches_zero_once_per_step_not_before_each_backward():
    torch.manual_seed(0)
    layer, inputs = torch.nn.Linear(3, 1), torch.randn(8, 3)
    layer(inputs).pow(2).mean().backward()
    full = layer.weight.grad.clone()
    layer.zero_grad()
    for part in inputs.chunk(4):  # no zeroing in between: the four backward passes add up
        (layer(part).pow(2).mean() / 4).backward()
    assert torch.allclose(layer.weight.grad, full, atol=1e-6)
    en, zh = notes("07", "en"), notes("07", "zh")
    assert "usually zeroes the gradients before each backward" in en and "(lesson 18)" in en
    assert "every training loop zeroes" not in en
    assert "通常在每次反向传播之前先把梯度清零" in zh and "见第18课" in zh


def test_a_tensor_used_twice_gets_its_shares_summed_within_one_backward_and_accumulate_grad_adds_across_calls():
    z_leaf = torch.tensor(-0.5, requires_grad=True)
    z = z_leaf * 1.0  # not a leaf, like lesson 20's z_t
    arrived: list[float] = []
    z.register_hook(lambda grad: arrived.append(grad.item()))
    (z * z).backward(retain_graph=True)
    assert arrived == [-1.0] and not z.is_leaf  # one call with both shares already added, no .grad involved
    first = z_leaf.grad.item()
    (z * z).backward()
    assert first == -1.0 and z_leaf.grad.item() == -2.0  # AccumulateGrad adds into the leaf's .grad across calls
    en, zh = notes("20", "en"), notes("20", "zh")
    assert "within one backward, the gradients flowing into a tensor used twice are summed" in en
    assert "`AccumulateGrad` is another sum: it adds into a leaf's `.grad` across backward calls" in en
    assert "`z_t` is not a leaf" in en and "for the same reason" not in en
    assert "在一次反向传播中，流入一个被用了两次的张量的梯度，会在产生这个张量的节点运行之前先加在一起" in zh
    assert "它在多次反向传播之间把梯度加进叶子张量的`.grad`" in zh and "`z_t`不是叶子张量" in zh
    assert "也是同样的道理" not in zh


def test_clip_grad_norm_scales_by_max_norm_over_the_norm_plus_1e_6_clamped_at_1():
    def clipped(grad: float, max_norm: float) -> float:
        weight = torch.nn.Parameter(torch.zeros(1))
        weight.grad = torch.tensor([grad])
        torch.nn.utils.clip_grad_norm_([weight], max_norm=max_norm)
        return weight.grad.item()

    assert clipped(1e-6, 1e-6) == pytest.approx(1e-6 * 1e-6 / (1e-6 + 1e-6))  # max_norm / norm would leave 1e-6
    assert clipped(0.1, 1.0) == pytest.approx(0.1)  # clamped at 1: max_norm / norm would make it 1.0
    assert clipped(4.0, 0.5) == pytest.approx(4.0 * 0.5 / (4.0 + 1e-6))
    en, zh = notes("18", "en"), notes("18", "zh")
    assert "max_norm / (norm_before + 1e-6), a factor clamped at 1" in en and "max_norm / norm_before:" not in en
    assert "max_norm/(norm_before+1e-6)，这个比例最大取1" in zh and "max_norm/norm_before：" not in zh


def test_lesson_01_counts_the_negative_entries_its_log_turns_into_nan():
    """The notes said `data - 1.0` has "a negative entry"; it has two, and `logged` shows two NaNs."""
    shifted = torch.tensor([2.0, 0.5, 3.0, -1.0]) - 1.0  # lesson 01's data
    assert int((shifted < 0).sum()) == 2 and int(torch.log(shifted).isnan().sum()) == 2
    source = (LESSONS / "01_dynamic_graphs.py").read_text(encoding="utf-8")
    assert "data = torch.tensor([2.0, 0.5, 3.0, -1.0])" in source
    assert "has two negative entries" in notes("01", "en") and "a negative entry" not in notes("01", "en")
    assert "里有两个负数" in notes("01", "zh") and "一个负数" not in notes("01", "zh")
