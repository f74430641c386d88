"""Lesson 23: forward-mode automatic differentiation beside reverse mode.

What it teaches: dual numbers with ``torch.autograd.forward_ad``, a value that carries its
derivative along a direction through every operation; ``torch.func.jvp``, the same pass on a
function; reverse mode (``backward()``, ``torch.func.vjp``) beside it, and how many passes each
needs for a whole Jacobian, for a function with few inputs and many outputs and for one with
many inputs and one output; and forward over reverse, for a Hessian-vector product.
"""

# %% [markdown]
# [en]
# # Forward-mode AD
# Push a derivative forward with the values, or pull one back from the output: when each wins.
#
# Everything so far was *reverse mode*: the forward pass records a graph, and `backward()`
# walks it from the output back to the inputs. *Forward mode* needs no graph. Each input
# carries, next to its value, a *tangent*: how fast it moves along a chosen direction. Every
# operation computes its output's tangent together with its output, by the chain rule, in
# the order the code runs.
# [zh]
# # 前向模式自动求导
# 让导数随着数值一起往前推，或者从输出往回拉：各在什么时候占优。
#
# 到目前为止都是*反向模式*：前向计算记录计算图，`backward()` 从输出沿着它走回输入。
# *前向模式*不需要计算图。每个输入在数值旁边带着一个*切向量*（tangent）：它沿着选定的方向变化得有多快。
# 每个运算按代码执行的顺序，用链式法则在算出输出的同时算出输出的切向量。

# %%
import warnings

import torch
import torch.autograd.forward_ad as fwAD
from torch.func import grad, hessian, jacrev, jvp, vjp

# Forward-mode calls make torch 2.13 load rules that it builds with its own, deprecated,
# torch.jit.script: a warning about torch, not about this lesson (as in lesson 16).
warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=DeprecationWarning)
torch.manual_seed(0)

# %% [markdown]
# [en]
# ## Dual numbers
# `fwAD.make_dual(value, tangent)` makes a *dual tensor*: the value 2 with the tangent 1, "x
# moving at speed 1". Inside `fwAD.dual_level()` every operation on it passes a tangent on.
# `fwAD.unpack_dual` splits the result into its value and its tangent.
#
# - `y = x**3`. Before the unpacking line runs, GradStep asks what `tangent` will be.
# [zh]
# ## 对偶数
# `fwAD.make_dual(value, tangent)` 生成一个*对偶张量*：数值 2，切向量 1，也就是“x 以速度 1 变化”。
# 在 `fwAD.dual_level()` 中，对它做的每个运算都会把切向量传下去。`fwAD.unpack_dual` 把结果拆成数值和切向量。
#
# - `y = x**3`。在拆开结果的那一行执行之前，GradStep 会问你：`tangent` 会是多少？

# %%
with fwAD.dual_level():
    x = fwAD.make_dual(torch.tensor(2.0), torch.tensor(1.0))
    y = x**3
    value, tangent = fwAD.unpack_dual(y)  # predict: tangent
print("value:", value, "| tangent:", tangent)

# %% [markdown]
# [en]
# ## The derivative rode along
# `tangent` is 12: the derivative of x³ at 2, 3 · 2², times the speed 1. `pow` computed its
# output's tangent right when it computed the output, so nothing was recorded and nothing
# saved for later (lesson 22): forward mode costs about one more forward pass, and no memory
# for a graph.
#
# ## jvp: one column of the Jacobian per pass
# `spread` takes 2 numbers and returns 6. Its Jacobian J is 6 × 2. `torch.func.jvp(fn,
# (point,), (direction,))` is the same forward pass on a function: it returns `fn(point)`
# and J · direction. With the direction [1, 0] that is the first column of J.
# `jacobian_forward` builds J from such columns.
#
# Reverse mode gives rows instead: `torch.func.vjp` runs `fn` once, and each call of the
# function it returns pulls one output's direction back, giving directionᵀ · J, a row.
# `jacobian_reverse` builds J from such rows. Before each line runs, GradStep asks how many
# passes it takes.
# [zh]
# ## 导数顺路算好了
# `tangent` 是 12：x³ 在 2 处的导数 3 · 2²，乘以速度 1。`pow` 在算出输出的同时就算出了输出的切向量，
# 所以没有记录任何东西，也没有为以后保存任何张量（见第 22 课）：前向模式大约多花一次前向计算，
# 不需要为计算图占内存。
#
# ## jvp：每一遍得到雅可比矩阵的一列
# `spread` 接收 2 个数，返回 6 个数，它的雅可比矩阵 J 是 6 × 2。
# `torch.func.jvp(fn, (point,), (direction,))` 是对函数做的同样的前向计算：它返回 `fn(point)` 和 J · direction。
# 方向取 [1, 0] 时，得到的就是 J 的第一列。`jacobian_forward` 用这样的列拼出 J。
#
# 反向模式得到的则是行：`torch.func.vjp` 把 `fn` 运行一次，它返回的函数每调用一次，就把一个输出方向拉回来，
# 得到 directionᵀ · J，也就是一行。`jacobian_reverse` 用这样的行拼出 J。
# 在这两行各自执行之前，GradStep 会问你它要几遍。

# %%


def spread(p):
    """Six numbers from two."""
    return torch.stack([p[0] * p[1], p[0] ** 2, torch.sin(p[1]), p[0] + p[1], 3 * p[0], torch.exp(p[1])])


def jacobian_forward(fn, x):
    """The Jacobian of ``fn`` at ``x`` one column at a time, and how many forward passes that took."""
    columns = [jvp(fn, (x,), (direction,))[1] for direction in torch.eye(x.numel())]
    return torch.stack(columns, dim=1), len(columns)


def jacobian_reverse(fn, x):
    """The Jacobian of ``fn`` at ``x`` one row at a time, and how many backward passes that took."""
    out, pull_back = vjp(fn, x)
    rows = [pull_back(direction)[0] for direction in torch.eye(out.numel())]
    return torch.stack(rows), len(rows)


point = torch.tensor([1.0, 2.0])
by_columns, forward_passes = jacobian_forward(spread, point)  # predict: forward_passes | 1 | 2 | 6 | 12
by_rows, reverse_passes = jacobian_reverse(spread, point)  # predict: reverse_passes | 1 | 2 | 6 | 12

# %% [markdown]
# [en]
# ## Few inputs: forward wins; one output: reverse wins
# Two forward passes against six backward passes, for the same 6 × 2 Jacobian (`same`
# compares both with `jacrev`). A pass of either kind costs about one evaluation of the
# function, so forward mode wins when a function has fewer inputs than outputs.
#
# A loss is the other way round: many inputs (every weight) and one output. `loss` takes 6
# numbers: forward mode needs 6 passes for its gradient, reverse mode 1. With millions of
# weights that is the whole difference, and it is why training uses `backward()`.
# [zh]
# ## 输入少，前向占优；输出只有一个，反向占优
# 同一个 6 × 2 的雅可比矩阵，前向要两遍，反向要六遍（`same` 把两者都与 `jacrev` 比较）。
# 两种方式每一遍的代价都大约是把函数算一次，所以当函数的输入比输出少时，前向模式占优。
#
# 损失函数正好相反：输入很多（每一个权重），输出只有一个。`loss` 接收 6 个数：
# 求它的梯度，前向模式要 6 遍，反向模式只要 1 遍。权重有几百万个时，差别就在这里，
# 这也是训练使用 `backward()` 的原因。

# %%
same = torch.allclose(by_columns, jacrev(spread)(point)) and torch.allclose(by_rows, by_columns)
print(f"spread, 2 inputs and 6 outputs: {forward_passes} forward passes, {reverse_passes} backward passes,"
      f" same Jacobian: {same}")


def loss(w):
    """One number from six, kept as a vector of length 1."""
    return (w**2 * torch.arange(1.0, 7.0)).sum().reshape(1)


weights = torch.randn(6)
_, loss_forward = jacobian_forward(loss, weights)
_, loss_reverse = jacobian_reverse(loss, weights)
print(f"loss, 6 inputs and 1 output: {loss_forward} forward passes, {loss_reverse} backward pass")

# %% [markdown]
# [en]
# ## Forward over reverse: a Hessian-vector product
# Forward mode earns its place in training code one level up. The gradient `grad(fn)` is a
# function with as many outputs as inputs, and pushing one direction `v` forward through it
# gives H · v, the Hessian times `v`, in about the cost of a gradient, without building the
# Hessian (n × n numbers). Optimizers that use curvature rely on it.
#
# `hvp` below does not do that yet: it estimates H · v from two gradients a small step apart
# (a finite difference). `hvp_error` is how far that estimate is from the exact product.
#
# `tangent_of` does with dual numbers what `jvp` does. The last line compares the two along
# the direction [1, 0]: read what it prints.
# [zh]
# ## 先反向再前向：Hessian 与向量的乘积
# 前向模式在训练代码里的用武之地要高一层。梯度 `grad(fn)` 是一个输出和输入一样多的函数，
# 沿一个方向 `v` 把它前向推一遍，就得到 H · v，即 Hessian 矩阵乘以 `v`，代价大约相当于一次求梯度，
# 而且不必构造整个 Hessian 矩阵（n × n 个数）。利用曲率的优化器靠的就是它。
#
# 下面的 `hvp` 还没有这样做：它用相隔一小步的两个梯度来估计 H · v（有限差分）。
# `hvp_error` 是这个估计与精确乘积之间的差距。
#
# `tangent_of` 用对偶数做的是 `jvp` 做的事。最后一行沿方向 [1, 0] 比较两者：看看它打印了什么。

# %%


def curvy(w):
    """A scalar function of a vector whose Hessian is not constant."""
    return (torch.sin(w) * w.roll(1)).sum()


def hvp(fn, w, v, step=1e-3):
    """The Hessian of ``fn`` at ``w`` times ``v``, estimated from two gradients ``step`` apart."""
    return (grad(fn)(w + step * v) - grad(fn)(w - step * v)) / (2 * step)


def tangent_of(fn, x, v):
    """The derivative of ``fn`` at ``x`` along the direction ``v`` (J · v), with dual numbers."""
    with fwAD.dual_level():
        out = fn(fwAD.make_dual(x, torch.ones_like(x)))
        return fwAD.unpack_dual(out).tangent


w = torch.randn(4, dtype=torch.float64)
v = torch.randn(4, dtype=torch.float64)
hvp_error = (hvp(curvy, w, v) - hessian(curvy)(w) @ v).abs().max().item()
print(f"finite-difference H·v is off by {hvp_error:.1e}")
print("tangent_of along [1, 0] matches jvp:",
      torch.allclose(tangent_of(spread, point, torch.tensor([1.0, 0.0])), by_columns[:, 0]))


def follows_the_direction(fn):
    """Whether ``fn(f, x, v)`` gives J · v for fresh functions, points and directions."""
    for size in (3, 5):
        x, v = torch.randn(size, dtype=torch.float64), torch.randn(size, dtype=torch.float64)
        for f in (lambda p: torch.cumsum(p, 0) * p.sum(), lambda p: torch.sin(p) * p.flip(0)):
            got = fn(f, x, v)
            if not (isinstance(got, torch.Tensor) and got.shape == x.shape
                    and torch.allclose(got, jvp(f, (x,), (v,))[1], rtol=0, atol=1e-12)):
                return False
    return True


def exact_hessian_vector_product(fn):
    """Whether ``fn(f, w, v)`` gives H · v to within rounding, for fresh functions, points and directions."""
    for size in (3, 6):
        w, v = torch.randn(size, dtype=torch.float64), torch.randn(size, dtype=torch.float64)
        for f in (curvy, lambda p: torch.exp(p).sum() * p.sum()):
            got = fn(f, w, v)
            if not (isinstance(got, torch.Tensor) and got.shape == w.shape
                    and torch.allclose(got, hessian(f)(w) @ v, rtol=0, atol=1e-10)):
                return False
    return True

# %% [markdown]
# [en]
# ## Try it
# 1. `tangent_of` gives every input the tangent 1, whatever `v` it is given, which is why it
#    did not match `jvp` along [1, 0]. Make it carry `v`: `fwAD.make_dual(x, v)`. The check gives it fresh functions, points and directions
#    and compares with `jvp`.
# 2. Make `hvp` exact with forward over reverse: return `jvp(grad(fn), (w,), (v,))[1]`, one
#    forward pass through the gradient. `hvp_error` drops from about 1e-7 to rounding.
# [zh]
# ## 动手试试
# 1. 不管传进来的 `v` 是什么，`tangent_of` 都给每个输入切向量 1，所以沿 [1, 0] 它与 `jvp` 不一致。
#    让它带上 `v`：`fwAD.make_dual(x, v)`。
#    检查会用新的函数、新的点和新的方向调用它，并与 `jvp` 比较。
# 2. 用先反向再前向的办法让 `hvp` 变成精确的：返回 `jvp(grad(fn), (w,), (v,))[1]`，
#    也就是沿梯度函数做一遍前向计算。`hvp_error` 从大约 1e-7 降到舍入误差的量级。
# check: follows_the_direction(tangent_of)
# check: exact_hessian_vector_product(hvp)
