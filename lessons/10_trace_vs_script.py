"""Lesson 10: turning a dynamic model into a static graph, and what happens to its branches.

What it teaches: ``torch.jit.trace`` records the operations one example input ran, so a
data-dependent ``if`` is frozen to the branch that example took (with a TracerWarning, and
a wrong answer for inputs that should take the other branch); ``torch.jit.script`` compiles
the Python source and keeps the ``if``; TorchScript is deprecated in current PyTorch, and
the modern route is ``torch.export`` with ``torch.cond`` for data-dependent branches. Every
step is guarded so the lesson runs on any PyTorch that has (or no longer has) these APIs,
and every expected warning is captured and printed instead of going to stderr.
"""

# %% [markdown]
# [en]
# # From dynamic to static: trace, script and export
# Tracing freezes the branch one example took; scripting and torch.export with torch.cond keep the decision.
#
# A static graph can be optimised, saved and run without Python, which is what deployment
# wants. Converting a dynamic model is easy until the model makes a decision based on
# its data: then it matters *how* the graph is captured.
#
# TorchScript (`torch.jit.trace` and `torch.jit.script`) was PyTorch's first answer. It is
# deprecated in current releases in favour of `torch.export` (a whole-program graph for
# deployment) and `torch.compile` (a faster model inside Python). `torch.compile` needs a C
# compiler and takes a while on first use, so this lesson only uses `torch.export`.
# [zh]
# # 从动态到静态：trace、script 与 export
# 追踪会把示例输入走过的分支固定下来；script 以及 torch.export 配合 torch.cond 则保留了判断。
#
# 静态图可以被优化、保存，并脱离 Python 运行，这正是部署所需要的。转换一个动态模型本来很简单，
# 但如果模型要根据数据做判断，*如何*捕获计算图就很重要了。
#
# TorchScript（`torch.jit.trace` 和 `torch.jit.script`）是 PyTorch 最早的方案。在当前版本中它已被
# 弃用，取而代之的是 `torch.export`（为部署导出完整的程序图）和 `torch.compile`（在 Python 中
# 让模型跑得更快）。`torch.compile` 需要 C 编译器，首次使用也比较慢，所以本课只使用 `torch.export`。

# %%
import contextlib
import io
import logging
import warnings

import torch
from torch import nn

torch.manual_seed(0)
print("PyTorch", torch.__version__)


def first_lines(caught):
    """Each distinct warning caught, as 'Category: first sentence'."""
    lines = []
    for warning in caught:
        text = f"{warning.category.__name__}: {str(warning.message).split('. ')[0]}"
        if text not in lines:
            lines.append(text)
    return lines


class SignFlip(nn.Module):
    """A linear layer whose output is negated when the input's mean is not positive."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 1)

    def forward(self, x):
        if x.mean() > 0:
            return self.linear(x)
        return -self.linear(x)


model = SignFlip()
positive = torch.rand(3, 4) + 0.1
negative = -positive
expected = model(negative)

# %% [markdown]
# [en]
# ## trace: the branch is baked in
# `torch.jit.trace` runs the model once on `positive` and records the tensor operations it
# sees. The `if` is Python, not a tensor operation, so only the branch that ran is kept.
#
# - Step over `traced = torch.jit.trace(model, positive)`. The printed warnings include a
#   `TracerWarning` ("Converting a tensor to a Python boolean might cause the trace to be
#   incorrect") and, on recent PyTorch, a `DeprecationWarning`.
# - Compare `traced(negative)` with `expected`: the signs are wrong, because the traced
#   graph never negates. `traced.code` shows a graph with no `if` in it.
# [zh]
# ## trace：分支被固定下来
# `torch.jit.trace` 用 `positive` 把模型运行一次，记录看到的张量运算。`if` 是 Python 语句，
# 不是张量运算，所以只保留了实际执行的那个分支。
#
# - 单步执行 `traced = torch.jit.trace(model, positive)`。打印出的警告中有一条 `TracerWarning`
#   （“把张量转换成 Python 布尔值可能导致追踪结果不正确”），在较新的 PyTorch 上还有一条
#   `DeprecationWarning`。
# - 把 `traced(negative)` 与 `expected` 比较：符号错了，因为追踪得到的图从不取反。
#   `traced.code` 显示的图里根本没有 `if`。

# %%
traced = None
if hasattr(torch, "jit") and hasattr(torch.jit, "trace"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = torch.jit.trace(model, positive)
        traced_out = traced(negative)
    for line in first_lines(caught):
        print("while tracing:", line)
    print("traced code:", traced.code)
    print("traced matches eager on negative input:", torch.allclose(traced_out, expected))
else:
    print("This PyTorch has no torch.jit.trace; skipping.")

# %% [markdown]
# [en]
# ## script: the branch survives
# `torch.jit.script` reads the source of `forward` and compiles it, `if` included.
#
# - Step over `scripted = torch.jit.script(model)` and read `scripted.code`: the condition
#   is still there.
# - `scripted(negative)` matches `expected`.
# [zh]
# ## script：分支被保留
# `torch.jit.script` 读取 `forward` 的源代码并编译它，`if` 也一并编译。
#
# - 单步执行 `scripted = torch.jit.script(model)`，阅读 `scripted.code`：条件判断还在。
# - `scripted(negative)` 与 `expected` 一致。

# %%
scripted = None
if hasattr(torch, "jit") and hasattr(torch.jit, "script"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scripted = torch.jit.script(model)
            scripted_out = scripted(negative)
        except Exception as err:  # TorchScript support shrinks as it is phased out
            print("torch.jit.script failed:", err)
    for line in first_lines(caught):
        print("while scripting:", line)
if scripted is not None:
    print("scripted code:", scripted.code)
    print("scripted matches eager on negative input:", torch.allclose(scripted_out, expected))

# %% [markdown]
# [en]
# ## The modern route: torch.export and torch.cond
# `torch.export` captures a graph without running your `if` as Python: when the plain
# `SignFlip` is exported, it stops with an error about a data-dependent condition instead
# of silently picking a branch (the first `try`, its message is printed).
#
# `torch.cond(predicate, true_fn, false_fn, operands)` states the branch as an operation,
# so both sides go into the graph and the choice is made at run time.
#
# - Step over `exported = torch.export.export(cond_model, (positive,))` and read the
#   printed graph: a `cond` call with a true and a false sub-graph.
# - `exported.module()(negative)` matches `expected`.
# [zh]
# ## 现代方案：torch.export 与 torch.cond
# `torch.export` 捕获计算图时不会把你的 `if` 当作 Python 来执行：导出原来的 `SignFlip` 时，
# 它会因为条件依赖数据而报错，而不是悄悄选一个分支（见第一个 `try`，会打印报错信息）。
#
# `torch.cond(predicate, true_fn, false_fn, operands)` 把分支写成一个运算，两边都会进入计算图，
# 到运行时再做选择。
#
# - 单步执行 `exported = torch.export.export(cond_model, (positive,))`，阅读打印出的图：
#   其中有一个 `cond` 调用，带着 true 和 false 两个子图。
# - `exported.module()(negative)` 与 `expected` 一致。


# %%
class CondFlip(nn.Module):
    """SignFlip with its branch written as torch.cond, so export can keep both sides."""

    def __init__(self, linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return torch.cond(x.mean() > 0, lambda t: self.linear(t), lambda t: -self.linear(t), (x,))


exported = None
if hasattr(torch, "export") and hasattr(torch, "cond"):
    # A failed export logs its reasoning and prints the partial graph to stderr; keep
    # both out of the lesson's stderr and show only the error's first line.
    logging.getLogger("torch.fx.experimental.symbolic_shapes").setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            torch.export.export(model, (positive,))
    except Exception as err:
        print("exporting the plain if:", str(err).splitlines()[0])
    cond_model = CondFlip(model.linear)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exported = torch.export.export(cond_model, (positive,))
    for line in first_lines(caught):
        print("while exporting:", line)
    print(exported.graph_module.code.strip())
    exported_out = exported.module()(negative)
    print("exported matches eager on negative input:", torch.allclose(exported_out, expected))
else:
    print("This PyTorch has no torch.export/torch.cond; upgrade to try the modern route.")

# %% [markdown]
# [en]
# ## Try it
# 1. Trace with `negative` instead of `positive`: now the traced model is right for
#    negative inputs and wrong for positive ones.
# 2. Replace the `if` in `SignFlip.forward` with
#    `return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)`: a branch-free form
#    that trace, script and export all handle correctly.
# [zh]
# ## 动手试试
# 1. 用 `negative` 代替 `positive` 做追踪：这时追踪出的模型对负输入是对的，对正输入反而错了。
# 2. 把 `SignFlip.forward` 中的 `if` 换成
#    `return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)`：这种没有分支的写法，
#    trace、script 和 export 都能正确处理。
