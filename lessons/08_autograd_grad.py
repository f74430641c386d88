"""Lesson 8: torch.autograd.grad, gradients returned as values instead of stored in .grad.

What it teaches: ``torch.autograd.grad(outputs, inputs)``, which returns gradients instead of
storing them; differentiating with respect to non-leaf tensors; ``create_graph=True`` and
second derivatives; and what the result holds with several outputs plus ``grad_outputs``.
"""

# %% [markdown]
# [en]
# # torch.autograd.grad
# Ask for exactly the gradients you want, get them back as a tuple, and differentiate them again.
#
# `backward()` writes into `.grad` of every leaf it reaches. `torch.autograd.grad` instead
# returns the gradients of `outputs` with respect to the `inputs` you list, as a tuple in
# the same order as `inputs`, and writes no `.grad` at all.
# [zh]
# # torch.autograd.grad
# 只求你想要的梯度，以元组形式拿回来，还可以对它们再求导。
#
# `backward()` 会写入它所到达的每个叶子的 `.grad`。
# `torch.autograd.grad` 则返回 `outputs` 对你列出的 `inputs` 的梯度，
# 以与 `inputs` 顺序相同的元组返回，不会写入任何 `.grad`。

# %%
import torch

torch.manual_seed(0)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

# %% [markdown]
# [en]
# ## Gradients as return values, also for non-leaves
# `y = x**2` and `z = y.mean()`, so dz/dx = 2x/3 and dz/dy = 1/3 for each entry.
#
# - Step over `(grad_x,) = torch.autograd.grad(z, x, retain_graph=True)`: the result is a
#   tuple of one tensor, `grad_x`. `x` is a leaf that requires grad, as in lesson 7;
#   GradStep asks first what `x.grad` will be after this call.
# [zh]
# ## 梯度作为返回值，非叶子同样适用
# `y = x**2`，`z = y.mean()`，所以每个元素的 dz/dx = 2x/3，dz/dy = 1/3。
#
# - 单步执行 `(grad_x,) = torch.autograd.grad(z, x, retain_graph=True)`：结果是只含一个张量的
#   元组 `grad_x`。`x` 和第 7 课一样，是需要梯度的叶子；GradStep 会先问你：
#   这次调用之后 `x.grad` 是什么？

# %%
y = x**2
z = y.mean()
(grad_x,) = torch.autograd.grad(z, x, retain_graph=True)  # predict: x.grad | None | tensor([0.6667, 1.3333, 2.0])

# %% [markdown]
# [en]
# ## Returned, not stored
# `grad_x` is `[0.667, 1.333, 2.0]`, and `x.grad` is still None: `torch.autograd.grad`
# returns the gradients and leaves `.grad` untouched, so nothing accumulates between calls.
#
# `y` is not a leaf, yet `torch.autograd.grad(z, y)` works: `grad_y` is 1/3 everywhere.
# `retain_graph=True` on the first call keeps the graph for the second one (lesson 9).
# [zh]
# ## 返回，而不是存下
# `grad_x` 为 `[0.667, 1.333, 2.0]`，而 `x.grad` 仍然是 None：
# `torch.autograd.grad` 把梯度作为返回值交给你，不碰任何 `.grad`，所以多次调用之间不会累加。
#
# `y` 不是叶子，但 `torch.autograd.grad(z, y)` 照样可以：`grad_y` 处处为 1/3。
# 第一次调用时的 `retain_graph=True` 为第二次调用保留了计算图（见第 9 课）。

# %%
print("dz/dx:", grad_x, "| x.grad is still:", x.grad)
(grad_y,) = torch.autograd.grad(z, y)
print("dz/dy:", grad_y)

# %% [markdown]
# [en]
# ## Higher derivatives with create_graph=True
# For `f = sum(x**3)`: the first derivative is 3x**2, the second is 6x.
#
# - Step over the line computing `first`. `first` is a gradient, the result of a backward
#   pass; GradStep asks first whether it requires grad.
# [zh]
# ## 用 create_graph=True 求高阶导数
# 对 `f = sum(x**3)`：一阶导数是 3x**2，二阶导数是 6x。
#
# - 单步执行计算 `first` 的那一行。`first` 是一个梯度，是反向传播的结果；
#   GradStep 会先问你它是否需要梯度。

# %%
f = (x**3).sum()
(first,) = torch.autograd.grad(f, x, create_graph=True)  # predict: first.requires_grad | True | False

# %% [markdown]
# [en]
# ## A gradient with a graph of its own
# `first` requires grad and has a `grad_fn`: `create_graph=True` recorded the backward pass
# itself as a graph, with `x` among its inputs: it makes the gradient itself differentiable. So
# the next line can differentiate
# `first.sum()` again: `second` equals `6 * x`.
# [zh]
# ## 自带计算图的梯度
# `first` 需要梯度，也有 `grad_fn`：`create_graph=True` 把反向传播的过程本身也记录成了计算图，
# `x` 就是它的输入之一。所以下一行可以再对 `first.sum()` 求导：`second` 等于 `6 * x`。

# %%
(second,) = torch.autograd.grad(first.sum(), x)
print("first derivative:", first, "| 3x^2:", 3 * x.detach() ** 2)
print("second derivative:", second, "| 6x:", 6 * x.detach())

# %% [markdown]
# [en]
# ## Several outputs
# `torch.autograd.grad` also takes several outputs: here `outputs=[y, z]`, with one weight
# per output in `grad_outputs` (here `weights`), and one input, `x`.
#
# - Step over the line computing `combined`: GradStep asks first for `len(combined)`, one
#   entry per output or one per input?
# [zh]
# ## 多个输出
# `torch.autograd.grad` 也接受多个输出：这里是 `outputs=[y, z]`，
# `grad_outputs`（这里是 `weights`）里每个输出一个权重，输入只有一个 `x`。
#
# - 单步执行计算 `combined` 的那一行：GradStep 会先问你 `len(combined)`，
#   是每个输出一项，还是每个输入一项？

# %%
y = x**2
z = y.mean()
weights = [torch.ones_like(y), torch.tensor(1.0)]
combined = torch.autograd.grad([y, z], x, grad_outputs=weights, retain_graph=True)  # predict: len(combined) | 1 | 2

# %% [markdown]
# [en]
# ## Still one gradient per input
# Passing several outputs does **not** give you one gradient per output. Autograd computes
# the gradient of the weighted sum `sum(ones * y) + 1 * z` and returns one tensor per
# *input*. (Some tutorials index the result as if it held "grad of y" and "grad of z";
# with one input there is only index 0.)
#
# - `combined[0]` equals 2x + 2x/3, the sum of the two separate gradients computed below it.
# - With two inputs, `per_input` has two entries, one for `x` and one for `w`.
# [zh]
# ## 仍然是每个输入一个梯度
# 传入多个输出，得到的**并不是**每个输出各一个梯度。自动求导计算的是
# 加权和 `sum(ones * y) + 1 * z` 的梯度，并为每个*输入*返回一个张量。
# （有些教程把结果当成“y 的梯度”和“z 的梯度”来取下标；只有一个输入时，只有下标 0。）
#
# - `combined[0]` 等于 2x + 2x/3，也就是下面分别算出的两个梯度之和。
# - 有两个输入时，`per_input` 就有两项，`x` 和 `w` 各一项。

# %%
print("number of results:", len(combined), "| combined[0]:", combined[0])

(from_y,) = torch.autograd.grad(y.sum(), x, retain_graph=True)
(from_z,) = torch.autograd.grad(z, x)
print("from y + from z:", from_y + from_z)

w = torch.tensor(2.0, requires_grad=True)
p = (w * x).sum()
q = (w * x**2).sum()
per_input = torch.autograd.grad([p, q], [x, w])
print("one gradient per input:", len(per_input), "| d/dx:", per_input[0], "| d/dw:", per_input[1])

# %% [markdown]
# [en]
# ## Try it
# 1. Change `weights` to `[torch.ones_like(y), torch.tensor(0.0)]`: `combined[0]`
#    becomes the gradient of `y.sum()` alone, 2x.
# 2. Go one derivative further: give the `second` line `create_graph=True` as well, and add
#    `(third,) = torch.autograd.grad(second.sum(), x)` after it. `third` is 6 everywhere,
#    the third derivative of x**3. Without `create_graph=True` on the line before, this call
#    would fail: the gradient it differentiates would have no graph.
# [zh]
# ## 动手试试
# 1. 把 `weights` 改成 `[torch.ones_like(y), torch.tensor(0.0)]`：
#    `combined[0]` 变成只有 `y.sum()` 的梯度，即 2x。
# 2. 再多求一阶导数：给计算 `second` 的那一行也加上 `create_graph=True`，
#    并在它后面加上 `(third,) = torch.autograd.grad(second.sum(), x)`。
#    `third` 处处为 6，即 x**3 的三阶导数。如果上一行没有 `create_graph=True`，
#    这次调用就会失败：被求导的梯度没有计算图。
# check: course.after('combined = ', 'torch.allclose(combined[0], 2 * x)') == [True] and course.after('combined = ', 'torch.equal(weights[1], torch.tensor(0.0)) and torch.allclose(combined[0], torch.autograd.grad([y, z], x, grad_outputs=weights, retain_graph=True)[0])') == [True]
# check: course.before('(third,) = ', 'second.grad_fn is not None') == [True] and course.after('(third,) = ', 'torch.allclose(third, torch.full_like(x, 6.0))') == [True]
