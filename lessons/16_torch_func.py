"""Lesson 16: torch.func (grad, jacrev, hessian, vmap) beside the graph-based ways to the same numbers.

What it teaches: one gradient computed three ways (``backward()``, ``torch.autograd.grad``,
``torch.func.grad``); one Hessian three ways (``torch.func.hessian``,
``torch.autograd.functional.hessian``, and differentiating a gradient made with
``create_graph=True``); a Jacobian with ``jacrev`` and ``torch.autograd.functional.jacobian``;
and per-sample gradients with ``vmap(grad(...))``, which calls the function once for the
whole batch. torch.func transforms functions, not tensors.
"""

# %% [markdown]
# [en]
# # torch.func: transforming functions
# grad, jacrev, hessian and vmap turn a function into a new one; the numbers match backward() and create_graph=True.
#
# So far every derivative came from the graph recorded on tensors that require grad
# (lessons 7 and 8). `torch.func` works on *functions* instead: `grad(f)` is a new function
# that returns the gradient of `f`, and the transforms compose, so `vmap(grad(f))` gives
# the gradient for every sample of a batch. The older `torch.autograd.functional` offers
# calls of the same shape, built on the recorded graph.
# [zh]
# # torch.func：对函数做变换
# grad、jacrev、hessian 和 vmap 把一个函数变成一个新函数；算出的数与 backward() 和 create_graph=True 相同。
#
# 到目前为止，所有导数都来自在需要梯度的张量上记录下来的计算图（见第 7、8 课）。
# `torch.func` 则作用于*函数*：`grad(f)` 是一个新函数，返回 `f` 的梯度；
# 这些变换还可以组合，比如 `vmap(grad(f))` 给出一个批量中每个样本各自的梯度。
# 较早的 `torch.autograd.functional` 提供形式相同的调用，底层用的是记录下来的计算图。

# %%
import warnings

import torch
from torch.func import grad, hessian, jacrev, vmap

# The first forward-mode call (hessian uses one) makes torch 2.13 load rules that it builds
# with its own, deprecated, torch.jit.script: a warning about torch, not about this lesson.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=DeprecationWarning)
torch.manual_seed(0)


def f(x):
    """The function we differentiate: sum(x**3) + x[0] * x[1] * x[2]."""
    return (x**3).sum() + x.prod()


x = torch.tensor([1.0, 2.0, 3.0])

# %% [markdown]
# [en]
# ## One gradient, three ways
# By hand, df/dx_i = 3 * x_i**2 + (the product of the other two entries), which is
# [9, 15, 29] at x = [1, 2, 3].
#
# - `by_backward` is the lesson 7 way: a leaf that requires grad, `backward()`, then `.grad`.
# - `by_autograd_grad` is the lesson 8 way: the gradient is returned and no `.grad` is touched.
# - `by_func = grad(f)(x)` hands `grad` your plain `x`, which does not require grad. Before
#   the line runs, GradStep asks what `x.grad` will be after it.
# - To see what `f` is given instead, skip the question and press F11 on that line: you
#   stop inside `f`, but the `x` there is not your tensor. It is a wrapper that `grad` put
#   around it, with no storage of its own, so the Variables view may not be able to show
#   its values.
# [zh]
# ## 同一个梯度，三种算法
# 手算可得 df/dx_i = 3 * x_i**2 +（另外两个元素之积），在 x = [1, 2, 3] 处是 [9, 15, 29]。
#
# - `by_backward` 是第 7 课的做法：需要梯度的叶子张量，调用 `backward()`，再读 `.grad`。
# - `by_autograd_grad` 是第 8 课的做法：梯度作为返回值给出，不改动任何 `.grad`。
# - `by_func = grad(f)(x)` 交给 `grad` 的是你那个普通的、不需要梯度的 `x`。
#   在这一行运行之前，GradStep 会问你：运行之后 `x.grad` 是什么？
# - 如果想看 `f` 收到的是什么，就跳过这个问题，在这一行按 F11：你会停在 `f` 里，
#   但那里的 `x` 不是你的张量，而是 `grad` 在它外面包的一层，没有自己的存储，
#   所以变量视图可能显示不了它的值。

# %%
leaf = x.clone().requires_grad_()
f(leaf).backward()
by_backward = leaf.grad
start = x.clone().requires_grad_()
(by_autograd_grad,) = torch.autograd.grad(f(start), start)
by_func = grad(f)(x)  # predict: x.grad | None | [9., 15., 29.]

# %% [markdown]
# [en]
# ## torch.func recorded nothing
# `x.grad` is still None, `x` still has `requires_grad` False, and the graph panel has no
# node for `by_func`: torch.func recorded nothing on your tensors, and leaves them without
# `.grad` or `grad_fn`. It returned the gradient
# as a new tensor, the same [9, 15, 29] as the other two ways.
# [zh]
# ## torch.func 什么都没有记录
# `x.grad` 仍是 None，`x` 的 `requires_grad` 仍是 False，计算图面板上也没有 `by_func` 的节点：
# torch.func 没有在你的张量上记录任何东西。它把梯度作为一个新张量返回，
# 与另外两种做法一样，都是 [9, 15, 29]。

# %%
print("backward():         ", by_backward)
print("torch.autograd.grad:", by_autograd_grad)
print("torch.func.grad:    ", by_func)
print("x.requires_grad:", x.requires_grad, "| x.grad:", x.grad, "| by_func.grad_fn:", by_func.grad_fn)

# %% [markdown]
# [en]
# ## The Hessian, three ways
# The Hessian holds the second derivatives: H[i, j] = d²f / dx_i dx_j. Here the diagonal is
# 6 * x_i and each off-diagonal entry is the third coordinate, the one not in (i, j):
# [[6, 3, 2], [3, 12, 1], [2, 1, 18]].
#
# - `torch.func.hessian(f)` is `jacfwd(jacrev(f))`: the Jacobian of the gradient.
# - `torch.autograd.functional.hessian(f, x)` does the same on a recorded graph.
# - By hand with `create_graph=True` (lesson 8): `first` is the gradient again, as
#   `by_autograd_grad` was, but this time the backward pass runs with `create_graph=True`.
# [zh]
# ## Hessian 矩阵，三种算法
# Hessian 矩阵由二阶导数组成：H[i, j] = d²f / dx_i dx_j。这里对角线是 6 * x_i，
# 每个非对角元素等于不在 (i, j) 中的那个坐标：[[6, 3, 2], [3, 12, 1], [2, 1, 18]]。
#
# - `torch.func.hessian(f)` 就是 `jacfwd(jacrev(f))`：梯度的雅可比矩阵。
# - `torch.autograd.functional.hessian(f, x)` 在记录下来的计算图上做同样的事。
# - 用 `create_graph=True` 手工计算（见第 8 课）：`first` 和 `by_autograd_grad` 一样是梯度，
#   但这次反向传播是带着 `create_graph=True` 运行的。

# %%
by_func_hessian = hessian(f)(x)
by_functional = torch.autograd.functional.hessian(f, x)
(first,) = torch.autograd.grad(f(start), start, create_graph=True)

# %% [markdown]
# [en]
# ## A gradient that is part of a graph
# Look at `first` in the Variables view. Unlike `by_autograd_grad`, it requires grad and
# has a `grad_fn`, and the graph panel shows the nodes of the backward pass itself: the
# gradient is part of a graph, so it can be differentiated again. Each row of the Hessian
# is the gradient of one entry of `first`; `retain_graph=True` keeps that graph for the
# next row.
#
# Lesson 8 got the second derivative 6x of sum(x**3) in one call, by differentiating
# `first.sum()`. Here `summed` does the same for our `f`. Before its line runs, GradStep
# asks what it holds: the diagonal of the Hessian, [6, 12, 18], or something else?
# [zh]
# ## 成为计算图一部分的梯度
# 在变量视图里查看 `first`。与 `by_autograd_grad` 不同，它需要梯度，也有 `grad_fn`，
# 计算图面板上显示的是反向传播本身的节点：梯度成了计算图的一部分，因此可以再求一次导。
# Hessian 的每一行是 `first` 中一个元素的梯度；
# `retain_graph=True` 为下一行保留计算图。
#
# 第 8 课对 `first.sum()` 求导，一次调用就得到了 sum(x**3) 的二阶导数 6x。
# 这里的 `summed` 对我们的 `f` 做同样的事。在它那一行运行之前，GradStep 会问你：
# 它是 Hessian 矩阵的对角线 [6, 12, 18]，还是别的什么？

# %%
rows = [torch.autograd.grad(first[i], start, retain_graph=True)[0] for i in range(3)]
by_create_graph = torch.stack(rows)
(summed,) = torch.autograd.grad(first.sum(), start)  # predict: summed | [6., 12., 18.] | [11., 16., 21.]
print("torch.func.hessian:\n", by_func_hessian)
print("same as autograd.functional:", torch.equal(by_func_hessian, by_functional))
print("same as create_graph=True:  ", torch.equal(by_func_hessian, by_create_graph))

# %% [markdown]
# [en]
# ## The gradient of a sum is a sum of rows
# `summed` is [11, 16, 21], the sums of the Hessian's rows, not its diagonal: the gradient
# of `first.sum()` adds up the gradients of every entry of `first`, off-diagonal ones
# included. In lesson 8 the Hessian of sum(x**3) was diagonal, so its row sums happened to
# be the second derivatives; for a function whose inputs interact (`x.prod()` here) they
# are not. The diagonal needs the whole Hessian, or one backward pass per entry.
#
# ## Jacobians, and per-sample gradients with vmap
# `spread(x) = x * sum(x)` returns a vector, so it has a Jacobian: J[i, j] = sum(x) when
# i = j, plus x_i everywhere. `jacrev` (reverse mode: the rows come from backward passes) and
# `torch.autograd.functional.jacobian` agree.
#
# `vmap` maps a function over a batch dimension. For a linear model,
# `per_sample_grad = vmap(grad(sample_loss), in_dims=(None, 0, 0))` is a new function that
# maps `grad(sample_loss)` over the batch: `None` means `w` is shared, `0` means `inputs`
# and `targets` are split along their first dimension. `w` has 3 entries and the batch has
# 5 samples; before the `per_sample = ...` line runs, GradStep asks for the shape of
# `per_sample`.
#
# To see how often `sample_loss` runs instead, skip the question and press F11 on that line.
# [zh]
# ## 和的梯度是各行之和
# `summed` 是 [11, 16, 21]，是 Hessian 矩阵各行之和，而不是它的对角线：`first.sum()` 的梯度
# 把 `first` 每个元素的梯度都加了起来，非对角元素也包括在内。
# 第 8 课中 sum(x**3) 的 Hessian 矩阵是对角矩阵，所以各行之和恰好就是二阶导数；
# 对于输入之间相互作用的函数（这里的 `x.prod()`），就不是了。要得到对角线，
# 需要整个 Hessian 矩阵，或者每个元素做一次反向传播。
#
# ## 雅可比矩阵，以及用 vmap 求逐样本梯度
# `spread(x) = x * sum(x)` 返回一个向量，所以它有雅可比矩阵：i = j 时 J[i, j] 含 sum(x)，
# 此外每个位置都加上 x_i。`jacrev`（反向模式：每一行都来自一次反向传播）
# 与 `torch.autograd.functional.jacobian` 的结果一致。
#
# `vmap` 把一个函数映射到批量维度上。对线性模型，
# `per_sample_grad = vmap(grad(sample_loss), in_dims=(None, 0, 0))` 是一个新函数，
# 它把 `grad(sample_loss)` 映射到整个批量上：
# `None` 表示 `w` 是共享的，`0` 表示 `inputs` 和 `targets` 沿第一个维度拆开。
# `w` 有 3 个元素，批量里有 5 个样本；在 `per_sample = ...` 这一行运行之前，
# GradStep 会问你 `per_sample` 的形状。
#
# 如果想看 `sample_loss` 运行了几次，就跳过这个问题，在这一行按 F11。


# %%
def spread(x):
    """A vector-valued function: every entry scaled by the sum."""
    return x * x.sum()


def sample_loss(w, one_input, one_target):
    """Squared error of a linear model on one sample."""
    return (one_input @ w - one_target) ** 2


by_jacrev = jacrev(spread)(x)
print("jacrev(spread):\n", by_jacrev)
print("same as autograd.functional.jacobian:", torch.equal(by_jacrev, torch.autograd.functional.jacobian(spread, x)))

w = torch.randn(3)
inputs, targets = torch.randn(5, 3), torch.randn(5)
per_sample_grad = vmap(grad(sample_loss), in_dims=(None, 0, 0))
per_sample = per_sample_grad(w, inputs, targets)  # predict: per_sample.shape | [3] | [5] | [5, 3]

# %% [markdown]
# [en]
# ## One gradient per sample, from one call
# - `per_sample` is 5 x 3: one gradient with respect to `w` for each of the 5 samples.
# - `sample_loss` ran *once*, not five times (on a rerun, skip the question and press F11
#   on that line to see it): vmap sends the whole batch through one call.
# - The comprehension below calls `grad(sample_loss)` five times, once per sample, and
#   `by_hand` is the derivative of (x · w - y)², 2 * (x · w - y) * x: all three agree.
# [zh]
# ## 一次调用，每个样本一个梯度
# - `per_sample` 是 5 x 3：5 个样本各有一个对 `w` 的梯度。
# - `sample_loss` 只运行了*一次*，而不是五次（重新运行时跳过问题，在那一行按 F11 就能看到）：
#   vmap 让整个批量一次通过。
# - 下面的列表推导式对每个样本调用一次 `grad(sample_loss)`，共五次；
#   `by_hand` 是 (x · w - y)² 的导数 2 * (x · w - y) * x：三者一致。

# %%
one_by_one = torch.stack([grad(sample_loss)(w, inputs[i], targets[i]) for i in range(5)])
by_hand = 2 * (inputs @ w - targets)[:, None] * inputs
print("per-sample gradients, shape", tuple(per_sample.shape))
print("vmap == one by one:", torch.allclose(per_sample, one_by_one))
print("vmap == by hand:   ", torch.allclose(per_sample, by_hand))

# %% [markdown]
# [en]
# ## Try it
# 1. `grad` wants a function that returns one number: `grad(spread)(x)` stops with an error
#    that suggests `vjp` or `jacrev` instead (try it in the console). Sum the output first:
#    after the `by_jacrev` line, add `summed_grad = grad(lambda v: spread(v).sum())(x)`. It
#    equals the column sums of the Jacobian, `by_jacrev.sum(0)`.
# 2. Change `f` to return `torch.sin(x).sum() * x.prod()` and rerun: the three gradients and
#    the three Hessians still agree (compare with `torch.allclose` if `torch.equal` is too
#    strict).
# [zh]
# ## 动手试试
# 1. `grad` 要求函数只返回一个数：`grad(spread)(x)` 会报错，报错信息建议改用 `vjp` 或 `jacrev`
#    （可以在控制台里试试）。先把输出求和：
#    在 `by_jacrev` 那一行之后加上 `summed_grad = grad(lambda v: spread(v).sum())(x)`。
#    它等于雅可比矩阵各列之和 `by_jacrev.sum(0)`。
# 2. 把 `f` 改成返回 `torch.sin(x).sum() * x.prod()` 再运行：三种梯度和三种 Hessian 仍然一致
#    （如果 `torch.equal` 太严格，就用 `torch.allclose` 比较）。
# check: (lambda made: len(made) == 1 and (lambda v: torch.allclose(made[0]['func'](v), spread(v).sum()))(torch.randn(4)))(course.calls('summed_grad = ', grad)) and course.after('summed_grad = ', 'torch.allclose(summed_grad, jacrev(spread)(x).sum(0))') == [True]
# check: (lambda v: torch.allclose(f(v), v.sin().sum() * v.prod()))(torch.rand(3) + 0.5) and course.after('by_create_graph = ', 'torch.allclose(torch.stack(rows), hessian(lambda v: v.sin().sum() * v.prod())(x)) and torch.allclose(by_create_graph, torch.stack(rows)) and torch.allclose(by_func_hessian, by_create_graph)') == [True]
