"""Lesson 10: turning a dynamic model into a static graph, and what happens to its branches.

What it teaches: ``torch.jit.trace``, which records the operations one example input ran,
and ``torch.jit.script``, which compiles the Python source, each given a data-dependent
``if``; TorchScript is deprecated in current PyTorch, and the modern route is
``torch.export`` with ``torch.cond`` for data-dependent branches, and ``torch.compile``,
whose graphs around the ``if`` are shown with ``backend="eager"`` and
``torch._dynamo.explain``. Every step is guarded so the lesson runs on any PyTorch that has
(or no longer has) these APIs, and every expected warning is captured and printed instead of
going to stderr.
"""

# %% [markdown]
# [en]
# # From dynamic to static: trace, script and export
# Tracing freezes the branch one example took; script, export with torch.cond, and compile keep the decision.
#
# A static graph can be optimised, saved and run without Python, which is what deployment
# wants. Converting a dynamic model is easy until the model makes a decision based on
# its data: then it matters *how* the graph is captured.
#
# TorchScript (`torch.jit.trace` and `torch.jit.script`) was PyTorch's first answer. It is
# deprecated in current releases in favour of `torch.export` (a whole-program graph for
# deployment) and `torch.compile` (a faster model inside Python). The default backend of
# `torch.compile`, Inductor, generates code: C++ on the CPU (so it needs a C compiler) and
# Triton kernels on a GPU. It is not the only backend that compiles, as
# `torch._dynamo.list_backends()` shows; the last code cell uses `backend="eager"`, which
# compiles nothing, runs anywhere and shows how the `if` is handled.
# [zh]
# # 从动态到静态：trace、script 与 export
# 追踪会把示例输入走过的分支固定下来；script、配合 torch.cond 的 export 以及 compile 都保留了判断。
#
# 静态图可以被优化、保存，并脱离 Python 运行，这正是部署所需要的。转换一个动态模型本来很简单，
# 但如果模型要根据数据做判断，*如何*捕获计算图就很重要了。
#
# TorchScript（`torch.jit.trace` 和 `torch.jit.script`）是 PyTorch 最早的方案。在当前版本中它已被
# 弃用，取而代之的是 `torch.export`（为部署导出完整的程序图）和 `torch.compile`（在 Python 中
# 让模型跑得更快）。`torch.compile` 的默认后端 Inductor 会生成代码：在 CPU 上生成 C++（因而需要 C 编译器），
# 在 GPU 上生成 Triton 内核。它并不是唯一会编译的后端，`torch._dynamo.list_backends()` 会列出其他后端；
# 最后一个代码单元使用 `backend="eager"`，它什么也不编译，在任何环境下都能运行，并能展示 `if` 是如何处理的。

# %%
import contextlib
import io
import logging
import warnings

import torch
from torch import nn

from course import first_lines, has_api

torch.manual_seed(0)
print("PyTorch", torch.__version__)


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
# what SignFlip is for, however forward is written: -linear for a negative mean, +linear otherwise
flips_sign = torch.allclose(expected, -model.linear(negative)) and torch.equal(model(positive), model.linear(positive))

# %% [markdown]
# [en]
# ## trace: record one run
# `torch.jit.trace` runs the model once on `positive` and records the tensor operations it
# sees; `traced` then replays that record.
#
# - Step over `traced = torch.jit.trace(model, example)` (`example` is `positive`).
# - Before `traced_out = traced(negative)` runs, GradStep asks whether it matches
#   `expected`, the eager model's answer for the same input.
# - Two helpers from `course.py`, the module beside the lessons, keep each cell short:
#   `has_api(torch, "jit.trace")` checks that this PyTorch has the API, so a cell skips what
#   it lacks instead of failing, and `first_lines(caught)` gives each caught warning's first
#   sentence once. F11 does not step inside them.
# [zh]
# ## trace：记录一次运行
# `torch.jit.trace` 用 `positive` 把模型运行一次，记录看到的张量运算；之后 `traced` 重放这份记录。
#
# - 单步执行 `traced = torch.jit.trace(model, example)`（`example` 就是 `positive`）。
# - 在 `traced_out = traced(negative)` 执行之前，GradStep 会问你：它与 `expected`
#   （即时执行的模型对同一输入的结果）一致吗？
# - 课程目录里的辅助模块 `course.py` 提供了两个函数，让每个单元保持简短：
#   `has_api(torch, "jit.trace")` 检查当前 PyTorch 是否有这个接口，没有时该单元跳过它而不是报错；
#   `first_lines(caught)` 把捕获到的每种警告的第一句各列一次。按 F11 不会单步进入它们。

# %%
traced = None
if has_api(torch, "jit.trace"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        example = positive  # the input the tracer runs the model on
        traced = torch.jit.trace(model, example)
        traced_out = traced(negative)  # predict: torch.allclose(traced_out, expected) | True | False
    for line in first_lines(caught):
        print("while tracing:", line)
    print("traced code:", traced.code)
    print("traced matches eager on negative input:", torch.allclose(traced_out, expected))
else:
    print("This PyTorch has no torch.jit.trace; skipping.")

# %% [markdown]
# [en]
# ## trace: the branch is baked in
# `traced(negative)` does not match `expected`. The `if` is Python, not a tensor operation,
# so the trace kept only the branch that ran on `positive`, and gives a wrong answer for inputs
# that should take the other branch. The printed warnings said so:
# a `TracerWarning` ("Converting a tensor to a Python boolean might cause the trace to be
# incorrect") and, on recent PyTorch, a `DeprecationWarning`. `traced.code` shows the graph
# that was recorded: it has no `if` and no negation.
#
# ## script: compile the source
# `torch.jit.script` reads the source of `forward` and compiles it, instead of recording a
# run. Step over `scripted = torch.jit.script(model)`; GradStep asks the same question for
# `scripted(negative)`.
# [zh]
# ## trace：分支被固定下来
# `traced(negative)` 与 `expected` 不一致。`if` 是 Python 语句，不是张量运算，
# 所以追踪只保留了在 `positive` 上实际执行的那个分支。打印出的警告已经提醒过：
# 一条 `TracerWarning`（“把张量转换成 Python 布尔值可能导致追踪结果不正确”），
# 在较新的 PyTorch 上还有一条 `DeprecationWarning`。`traced.code` 显示记录下来的图：
# 里面没有 `if`，也没有取反。
#
# ## script：编译源代码
# `torch.jit.script` 读取 `forward` 的源代码并编译它，而不是记录一次运行。
# 单步执行 `scripted = torch.jit.script(model)`；对 `scripted(negative)`，GradStep 会问同样的问题。

# %%
scripted = None
if has_api(torch, "jit.script"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scripted = torch.jit.script(model)
            scripted_out = scripted(negative)  # predict: torch.allclose(scripted_out, expected) | True | False
        except Exception as err:  # TorchScript support shrinks as it is phased out
            print("torch.jit.script failed:", err)
    for line in first_lines(caught):
        print("while scripting:", line)
if scripted is not None:
    print("scripted code:", scripted.code)
    print("scripted matches eager on negative input:", torch.allclose(scripted_out, expected))

# %% [markdown]
# [en]
# ## script: the branch survives
# `scripted(negative)` matches: `torch.jit.script` keeps the `if`, compiled with the rest, and
# `scripted.code` still holds the condition.
#
# ## The modern route: torch.export and torch.cond
# By default `torch.export` does run `forward` as Python, but on *fake* tensors: tensors
# that have a shape and a dtype and no values. At the `if`, Python asks for
# `bool(x.mean() > 0)`, and a fake tensor has no value to answer with. So exporting the plain
# `SignFlip` stops with a `GuardOnDataDependentSymNode` error ("Could not guard on
# data-dependent expression") instead of silently picking a branch (the first `try`
# prints the error's type and first line).
#
# `torch.cond(predicate, true_fn, false_fn, operands)` states the branch as an operation,
# so both sides go into the graph and the choice is made at run time.
#
# - Step over `exported = torch.export.export(cond_model, (positive,))` and read the
#   printed graph: a `cond` call with a true and a false sub-graph.
# - `exported.module()(negative)` matches `expected`.
# [zh]
# ## script：分支被保留
# `scripted(negative)` 与 `expected` 一致：`if` 和其余代码一起被编译了，`scripted.code` 里
# 条件判断还在。
#
# ## 现代方案：torch.export 与 torch.cond
# 默认情况下 `torch.export` 确实会把 `forward` 当作 Python 来执行，但用的是*伪张量*（fake
# tensor）：只有形状和数据类型、没有数值的张量。执行到 `if` 时，
# Python 需要求出 `bool(x.mean() > 0)`，而伪张量没有数值可以回答。所以导出原来的 `SignFlip` 时，
# 它会抛出 `GuardOnDataDependentSymNode` 错误（“Could not guard on data-dependent expression”），
# 而不是悄悄选一个分支（第一个 `try` 会打印错误的类型和第一行）。
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
if has_api(torch, "export.export", "cond"):
    # A failed export logs its reasoning and prints the partial graph to stderr; keep
    # both out of the lesson's stderr and show only the error's first line.
    logging.getLogger("torch.fx.experimental.symbolic_shapes").setLevel(logging.ERROR)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            torch.export.export(model, (positive,))
    except Exception as err:
        print("exporting the plain if:", type(err).__name__, "-", str(err).splitlines()[0])
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
# ## torch.compile: Python bytecode into graphs
# `torch.compile` turns Python bytecode into graphs (its front end is called Dynamo).
# `backend="eager"` runs the captured graphs with ordinary PyTorch instead of generating
# code, so it needs no compiler.
#
# - Step over `compiled_out = compiled(negative)`: it matches `expected`, so unlike the
#   trace, Dynamo did not bake in one branch. Yet a graph cannot hold our `if`.
# - `torch._dynamo.explain(model)(positive)` reports what Dynamo did: how many graphs it
#   made and how many *graph breaks* (places where it ended a graph, let Python run, and
#   started a new graph). GradStep asks how many breaks.
# [zh]
# ## torch.compile：把 Python 字节码变成计算图
# `torch.compile` 把 Python 字节码转换成计算图（它的前端叫 Dynamo）。
# `backend="eager"` 用普通的 PyTorch 运行捕获到的图，不生成代码，因此不需要编译器。
#
# - 单步执行 `compiled_out = compiled(negative)`：结果与 `expected` 一致，所以 Dynamo 不像追踪那样
#   把某个分支固定下来。可是计算图里放不下我们的 `if`。
# - `torch._dynamo.explain(model)(positive)` 报告 Dynamo 做了什么：生成了几张图，
#   *断图*（graph break，即结束一张图、让 Python 执行、再开始一张新图的地方）有几次。
#   GradStep 会问你断了几次。

# %%
explanation = None
if has_api(torch, "compile", "_dynamo.explain"):
    compiled = torch.compile(model, backend="eager")
    compiled_out = compiled(negative)
    print("compiled matches eager on negative input:", torch.allclose(compiled_out, expected))
    explanation = torch._dynamo.explain(model)(positive)
    graph_count, break_count = explanation.graph_count, explanation.graph_break_count  # predict: break_count | 0 | 1
else:
    print("This PyTorch has no torch.compile; skipping.")

# %% [markdown]
# [en]
# ## A graph break at the `if`
# One break, two graphs: `torch.compile` splits the model into graphs at the `if`. At a
# decision it cannot put in a graph, such as our `if`, Dynamo does not guess: it ends the
# graph there, lets Python make the choice, and starts a new graph after it. So the compiled
# model gives the right answer for both signs. Graph 1 ends with the comparison and returns
# it; graph 2 is the branch that ran (`linear`).
#
# - Rerun and step *into* `compiled_out = compiled(negative)`: the debugger stops in
#   `forward`, then in a function named `torch_dynamo_resume_in_forward_at_` plus the line
#   of the `if`. That is the code after the break, which Dynamo made into a function of its
#   own; the `return` lines never run as Python, because their graph runs instead.
# - Dynamo stores a few helpers among the lesson's globals (`__compiled_fn_…`, `__resume_at_…`,
#   `__builtins_dict___` and a number); the variables view hides them, as it hides other `__` names.
# [zh]
# ## 在 `if` 处断图
# 断图一次，生成两张图。遇到无法放进图里的判断（比如这里的 `if`）时，Dynamo 不会去猜：
# 它在那里结束当前的图，让 Python 做出选择，然后在选择之后开始一张新图。
# 所以编译后的模型对正负两种输入都给出正确的结果。第 1 张图以比较运算结束并把结果返回；
# 第 2 张图是实际执行的分支（`linear`）。
#
# - 重新运行，单步进入 `compiled_out = compiled(negative)`：调试器先停在 `forward` 中，
#   然后停在一个函数里，它的名字是 `torch_dynamo_resume_in_forward_at_` 加上 `if` 所在的行号。
#   它是断图之后的代码，Dynamo 把它单独做成了一个函数；两行 `return` 从不作为 Python 执行，
#   执行的是它们的图。
# - Dynamo 会在课程的全局变量中放几个辅助对象（`__compiled_fn_…`、`__resume_at_…`、
#   `__builtins_dict___` 加一个数字）；变量视图会像隐藏其他 `__` 开头的名字一样隐藏它们。

# %%
if explanation is not None:
    print("graphs:", graph_count, "| graph breaks:", break_count)
    for reason in explanation.break_reasons:
        frame = reason.user_stack[-1]
        print(f"graph break at line {frame.lineno}: {frame.line} ({reason.reason})")
    for number, graph in enumerate(explanation.graphs, 1):
        print(f"graph {number}:", graph.code.strip())

# %% [markdown]
# [en]
# ## Try it
# 1. Trace with `negative` instead of `positive`: change `example = positive` (the input
#    `torch.jit.trace` runs the model on) to `example = negative`. Now the traced model is
#    right for negative inputs and wrong for positive ones.
# 2. Replace the `if` and both `return` lines in `SignFlip.forward` with
#    `return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)`: a branch-free form
#    that trace, script and export all handle correctly, and that `torch.compile` captures
#    whole: `explain` reports one graph and no graph break.
# [zh]
# ## 动手试试
# 1. 用 `negative` 代替 `positive` 做追踪：把 `example = positive`（`torch.jit.trace` 运行模型时
#    用的输入）改成 `example = negative`。这时追踪出的模型对负输入是对的，对正输入反而错了。
# 2. 把 `SignFlip.forward` 中的 `if` 和两行 `return` 换成下面这一行：
#    `return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)`。这种没有分支的写法，
#    trace、script 和 export 都能正确处理，`torch.compile` 也能完整捕获：`explain` 报告
#    只有一张图，没有断图。
# check: example is negative and type(traced).__name__ == 'TopLevelTracedModule' and (lambda n: torch.allclose(traced(n), model(n)))(-torch.rand(2, 4) - 0.1)
# check: (lambda p: torch.allclose(model(p), model.linear(p)) and torch.allclose(model(-p), -model.linear(-p)) and torch.allclose(torch.jit.trace(model, p)(-p), model(-p)))(torch.rand(2, 4) + 0.1) and torch._dynamo.explain(model)(-torch.rand(2, 4) - 0.1).graph_break_count == 0
