"""Lesson 5: which tensors autograd tracks, which are leaves, and how to step outside the graph.

What it teaches: ``requires_grad=True`` at creation and ``requires_grad_()`` afterwards;
``nn.Linear`` parameters require grad by default; results of tracked operations require
grad too; leaf versus non-leaf tensors (``is_leaf``, ``grad_fn``); only floating point and
complex tensors can require grad; and ``detach()``: what it shares with the original, and what
it cuts.
"""

# %% [markdown]
# [en]
# # requires_grad and leaf tensors
# How a tensor joins the graph, which tensors are leaves, and how detach() gives you one outside it.
#
# Autograd only records operations whose inputs include at least one tensor with
# `requires_grad=True`. Tensors you create yourself are *leaves*: the graph starts at them,
# and `backward()` adds gradients into their `.grad`. Everything computed from them is a
# non-leaf with a `grad_fn` that remembers how it was made.
# [zh]
# # requires_grad 与叶子张量
# 张量如何加入计算图、哪些张量是叶子，以及如何用 detach() 得到从计算图中分离出来的张量。
#
# 只有当某个运算的输入中至少有一个张量设置了 `requires_grad=True` 时，自动求导才会记录
# 这个运算。你自己创建的张量是*叶子张量*：计算图从它们开始，`backward()` 把梯度
# 累加进它们的 `.grad`。由它们算出的其他张量都不是叶子，带有一个记录其来历的 `grad_fn`。

# %%
import torch
from torch import nn

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## Two ways to ask for gradients
# - Step over `x = torch.tensor(..., requires_grad=True)`: in the variables view `x` shows
#   `requires_grad` True, `is_leaf` True, `grad_fn` None.
# - `y` starts without gradients. Step over `y.requires_grad_(True)`: the trailing
#   underscore means "change this tensor in place", and `y` now requires grad as well.
# - `layer = nn.Linear(3, 1)`: its `weight` and `bias` are `Parameter`s, which require
#   grad by default, so you never set the flag on a model's weights yourself.
# [zh]
# ## 两种方式声明需要梯度
# - 单步执行 `x = torch.tensor(..., requires_grad=True)`：在变量视图中，
#   `x` 的 `requires_grad` 为 True，`is_leaf` 为 True，`grad_fn` 为 None。
# - `y` 创建时不需要梯度。单步执行 `y.requires_grad_(True)`：末尾的下划线表示这是一个原地操作，
#   改的就是这个张量，此后 `y` 也需要梯度了。
# - `layer = nn.Linear(3, 1)`：它的 `weight` 和 `bias` 是 `Parameter`，默认就需要梯度，
#   所以不必自己给模型的权重设置这个标志。

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.tensor([4.0, 5.0, 6.0])
print("y.requires_grad before:", y.requires_grad)
y.requires_grad_(True)
print("y.requires_grad after: ", y.requires_grad)

layer = nn.Linear(3, 1)
for name, param in layer.named_parameters():
    print(f"layer.{name}: requires_grad={param.requires_grad}")

# %% [markdown]
# [en]
# ## Leaves and non-leaves
# `x` and `y` are leaves: tensors you made yourself. `z = x * y + 1` is made from them.
# Before its line runs, GradStep asks whether `z` is a leaf.
# [zh]
# ## 叶子与非叶子
# `x` 和 `y` 是叶子：你自己创建的张量。`z = x * y + 1` 由它们算出。
# 在这一行执行之前，GradStep 会问你 `z` 是不是叶子。

# %%
z = x * y + 1  # predict: z.is_leaf | True | False
print("z:", z.requires_grad, z.is_leaf, z.grad_fn.name())

# %% [markdown]
# [en]
# ## What makes a leaf
# `z` is not a leaf: it requires grad because its inputs do, and it has a `grad_fn`
# (`AddBackward0`) that remembers how it was made.
#
# `plain` was created without `requires_grad`, and `scaled = plain * 2` is made from it,
# just as `z` was made from `x` and `y`. Before that line runs, GradStep asks whether
# `scaled` is a leaf.
# [zh]
# ## 什么样的张量是叶子
# `z` 不是叶子：因为输入需要梯度，它也需要梯度；它还有一个记录自己来历的 `grad_fn`（`AddBackward0`）。
#
# `plain` 创建时没有设置 `requires_grad`，而 `scaled = plain * 2` 由它算出，
# 就像 `z` 由 `x` 和 `y` 算出一样。在这一行执行之前，GradStep 会问你 `scaled` 是不是叶子。

# %%
plain = torch.ones(3)
scaled = plain * 2  # predict: scaled.is_leaf | True | False
print("plain.is_leaf:", plain.is_leaf, "| scaled.is_leaf:", scaled.is_leaf, "| scaled.grad_fn:", scaled.grad_fn)
with torch.no_grad():
    untracked = x * 2
print("made under no_grad, is_leaf:", untracked.is_leaf, "| z.detach().is_leaf:", z.detach().is_leaf)

# %% [markdown]
# [en]
# ## A leaf is a tensor without a grad_fn
# `scaled` is a leaf, although it was computed from `plain`. "Leaf" does not mean "not
# derived from another tensor": it means *no `grad_fn`*. No operation on tensors that do
# not require grad is recorded, so `scaled` has no history, and autograd treats it as a
# starting point. The same goes for a result made under `torch.no_grad()` (`untracked`,
# lesson 6) and for a `detach()` result (below): both print `is_leaf` True.
#
# `z.sum().backward()` fills in the `.grad` of the leaves that require grad. GradStep
# asks what lands in `y.grad`.
# [zh]
# ## 叶子就是没有 grad_fn 的张量
# `scaled` 是叶子，尽管它是由 `plain` 算出来的。“叶子”的意思不是“没有由别的张量算出”，
# 而是*没有 `grad_fn`*。对不需要梯度的张量做运算不会被记录，所以 `scaled` 没有历史，
# 自动求导把它当作起点。在 `torch.no_grad()` 下算出的结果（`untracked`，见第 6 课）
# 和 `detach()` 的结果（见下文）也一样：两者打印出的 `is_leaf` 都是 True。
#
# `z.sum().backward()` 会填入需要梯度的叶子的 `.grad`。GradStep 会问你 `y.grad` 里是什么。

# %%
z.sum().backward()  # predict: y.grad | None | tensor([1., 2., 3.]) | tensor([4., 5., 6.])

# %% [markdown]
# [en]
# ## Each input gets the other's values
# The derivative of x*y with respect to `x` is `y`, and with respect to `y` it is `x`: so
# `y.grad` holds the values of `x`, [1, 2, 3]. Only leaves get `.grad` filled in.
# [zh]
# ## 每个输入得到的是另一个输入的值
# x*y 对 `x` 的导数是 `y`，对 `y` 的导数是 `x`：所以 `y.grad` 里是 `x` 的值 [1, 2, 3]。
# 只有叶子的 `.grad` 会被填入梯度。

# %%
print("x.grad:", x.grad, "| y.grad:", y.grad)

# %% [markdown]
# [en]
# ## Integers cannot require gradients
# A gradient is a small change, and integers cannot change a little. Step over the line in
# the `try` that builds an integer tensor with `requires_grad=True` and read PyTorch's
# message. Convert with `.float()` first if you need gradients.
# [zh]
# ## 整数不能要求梯度
# 梯度描述的是微小的变化，而整数无法只变化一点点。
# 单步执行 `try` 中创建带 `requires_grad=True` 的整数张量的那一行，读一读 PyTorch 的报错。
# 如果需要梯度，先用 `.float()` 转换类型。

# %%
counts = torch.tensor([1, 2, 3])
try:
    torch.tensor([1, 2, 3], requires_grad=True)
except RuntimeError as err:
    print("integer tensor:", err)
as_float = counts.float().requires_grad_()
print("as_float.requires_grad:", as_float.requires_grad)

# %% [markdown]
# [en]
# ## detach(): same numbers, no history
# - Step over `frozen = z.detach()`: `frozen` has the same values as `z`, but
#   `requires_grad` False and no `grad_fn`. Nothing computed from it is tracked.
# - Is it a copy? GradStep asks whether `frozen` and `z` share memory (the same
#   `data_ptr()`) before `shares_memory` is computed. `z.detach().clone()` is always an
#   independent tensor.
#
# ### detach() inside a computation: a stop-gradient
# `u = square.detach()` holds the values of `t * t`, so `cubic = u * t` has the values of
# t³. Before `cubic.sum().backward()` runs, GradStep asks what lands in `t.grad`.
# [zh]
# ## detach()：数值相同，没有历史
# - 单步执行 `frozen = z.detach()`：`frozen` 与 `z` 的数值相同，但 `requires_grad` 为 False，
#   也没有 `grad_fn`。由它算出的结果都不会被跟踪。
# - 它是副本吗？在计算 `shares_memory` 之前，GradStep 会问你：
#   `frozen` 与 `z` 是否共享内存（`data_ptr()` 相同）？`z.detach().clone()` 则总是一个独立的张量。
#
# ### 计算中间的分离（detach）：截断梯度
# `u = square.detach()` 的值就是 `t * t`，所以 `cubic = u * t` 的值等于 t³。
# 在 `cubic.sum().backward()` 执行之前，GradStep 会问你 `t.grad` 里是什么。

# %%
frozen = z.detach()
print("frozen:", frozen.requires_grad, frozen.grad_fn)
shares_memory = frozen.data_ptr() == z.data_ptr()  # predict: shares_memory | True | False
print("shares memory with z:", shares_memory)
independent = z.detach().clone()
clone_shares_memory = independent.data_ptr() == z.data_ptr()
print("clone shares memory:", clone_shares_memory)

t = torch.arange(4.0, requires_grad=True)
square = t * t
u = square.detach()
cubic = u * t
cubic.sum().backward()  # predict: t.grad | tensor([0., 1., 4., 9.]) | tensor([0., 3., 12., 27.])

# %% [markdown]
# [en]
# ## What detach() cut
# - `frozen` and `z` share memory: `detach()` shares data but leaves the graph. It makes a new
#   tensor object over the same numbers, so an in-place change of one shows in the other.
# - `t.grad` is `u` = [0, 1, 4, 9], not 3t² = [0, 3, 12, 27]: the graph of `cubic` holds
#   only `u * t`, and to it `u` is a constant with no path back to `t`. This is how
#   `detach()` stops the gradient along one path on purpose (d2l's example): the values
#   still come from `t`, the gradient does not. `square` keeps its own graph, so
#   `square.sum().backward()` would still give 2t.
# [zh]
# ## detach() 截断了什么
# - `frozen` 与 `z` 共享内存：`detach()` 在同一块数据上创建一个新的张量对象，
#   所以对其中一个做原地操作，另一个也会变。
# - `t.grad` 是 `u` = [0, 1, 4, 9]，而不是 3t² = [0, 3, 12, 27]：
#   `cubic` 的计算图里只有 `u * t`，对它来说 `u` 是常数，没有回到 `t` 的路径。这就是有意用 `detach()` 截断某条路径上的
#   梯度（《动手学深度学习》中的例子）：数值仍然来自 `t`，梯度却不会回传。`square` 保留着
#   自己的计算图，所以 `square.sum().backward()` 仍然会得到 2t。

# %%
print("t.grad:", t.grad, "| u:", u)

# %% [markdown]
# [en]
# ## Try it
# 1. Remove `y.requires_grad_(True)`: after backward, `y.grad` is None, and `z` still
#    requires grad because `x` does.
# 2. Freeze the weight as fine-tuning does: at the end of the lesson, add
#    `layer.weight.requires_grad_(False)`, then `layer(x).sum().backward()`.
#    `layer.bias.grad` is filled in and `layer.weight.grad` stays None. (`layer(x).grad_fn`
#    is no sign of a freeze: it exists even with weight and bias frozen, because `x`
#    requires grad. `layer(x.detach())` with both frozen has none.)
# [zh]
# ## 动手试试
# 1. 删掉 `y.requires_grad_(True)`：反向传播之后 `y.grad` 为 None，而 `z` 仍然需要梯度，
#    因为 `x` 需要。
# 2. 像微调时那样冻结权重：在课程末尾加上 `layer.weight.requires_grad_(False)`，
#    再加上 `layer(x).sum().backward()`。`layer.bias.grad` 被填入了梯度，
#    而 `layer.weight.grad` 仍然是 None。（`layer(x).grad_fn` 说明不了是否冻结：
#    即使权重和偏置都冻结了，它也存在，因为 `x` 需要梯度。两者都冻结时，
#    `layer(x.detach())` 就没有 `grad_fn` 了。）
# check: course.before('z = x * y + 1', 'y.requires_grad') == [False] and course.after('z.sum().backward()', 'y.grad is None and x.grad is not None and z.requires_grad') == [True]
# check: course.after('layer(x).sum().backward()', 'not layer.weight.requires_grad and layer.weight.grad is None and layer.bias.grad is not None') == [True]
