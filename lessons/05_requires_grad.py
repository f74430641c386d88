"""Lesson 5: which tensors autograd tracks, which are leaves, and how to step outside the graph.

What it teaches: ``requires_grad=True`` at creation and ``requires_grad_()`` afterwards;
``nn.Linear`` parameters require grad by default; results of tracked operations require
grad too; leaf versus non-leaf tensors (``is_leaf``, ``grad_fn``); only floating point and
complex tensors can require grad; and ``detach()``, which shares data but leaves the graph.
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
# 张量如何加入计算图、哪些张量是叶子，以及如何用 detach() 得到脱离计算图的张量。
#
# 只有当某个运算的输入中至少有一个张量设置了 `requires_grad=True` 时，autograd 才会记录
# 这个运算。你自己创建的张量是*叶子张量*（叶子节点）：计算图从它们开始，`backward()` 把梯度
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
# - `y` 创建时不需要梯度。单步执行 `y.requires_grad_(True)`：末尾的下划线表示“原地修改
#   这个张量”，此后 `y` 也需要梯度了。
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
# - Step over `z = x * y + 1` (GradStep asks first whether `z` is a leaf): `z` requires
#   grad because its inputs do, and it has a `grad_fn` (`AddBackward0`) that remembers how
#   it was made.
# - `plain` was created without `requires_grad`: it is a leaf too, just one autograd does
#   not track. What is the `grad_fn` of `scaled = plain * 2`?
# - `z.sum().backward()` fills in `x.grad` and `y.grad` with the derivative of x*y: with
#   respect to `x` it is `y`, with respect to `y` it is `x`. Only leaves get `.grad` filled in.
# [zh]
# ## 叶子与非叶子
# - 单步执行 `z = x * y + 1`（GradStep 会先问你 `z` 是不是叶子）：因为输入需要梯度，
#   `z` 也需要梯度；它有一个记录自己来历的 `grad_fn`（`AddBackward0`）。
# - `plain` 创建时没有设置 `requires_grad`：它也是叶子，只是 autograd 不跟踪它。
#   那么 `scaled = plain * 2` 的 `grad_fn` 是什么？
# - `z.sum().backward()` 把 x*y 的导数填入 `x.grad` 和 `y.grad`：对 `x` 的导数是 `y`，
#   对 `y` 的导数是 `x`。只有叶子的 `.grad` 会被填入梯度。

# %%
z = x * y + 1  # predict: z.is_leaf | True | False
print("z:", z.requires_grad, z.is_leaf, z.grad_fn.name())

plain = torch.ones(3)
scaled = plain * 2  # predict: scaled.grad_fn | None | MulBackward0
print("plain.is_leaf:", plain.is_leaf, "| scaled.grad_fn:", scaled.grad_fn)

z.sum().backward()  # predict: y.grad | None | tensor([1., 2., 3.]) | tensor([4., 5., 6.])
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
# [zh]
# ## detach()：数值相同，没有历史
# - 单步执行 `frozen = z.detach()`：`frozen` 与 `z` 的数值相同，但 `requires_grad` 为 False，
#   也没有 `grad_fn`。由它算出的结果都不会被跟踪。
# - 它是副本吗？在计算 `shares_memory` 之前，GradStep 会问你：
#   `frozen` 与 `z` 是否共享内存（`data_ptr()` 相同）？`z.detach().clone()` 则总是一个独立的张量。

# %%
frozen = z.detach()
print("frozen:", frozen.requires_grad, frozen.grad_fn)
shares_memory = frozen.data_ptr() == z.data_ptr()  # predict: shares_memory | True | False
print("shares memory with z:", shares_memory)
independent = z.detach().clone()
clone_shares_memory = independent.data_ptr() == z.data_ptr()
print("clone shares memory:", clone_shares_memory)

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
# check: y.grad is None and z.requires_grad
# check: layer.weight.grad is None and layer.bias.grad is not None
