"""Lesson 7: what backward() computes and where the gradients end up.

What it teaches: a scalar loss's ``backward()`` fills ``.grad`` of the leaves, and the
values match the gradient worked out by hand; a non-leaf's ``.grad`` stays None (with a
warning) unless you call ``retain_grad()``; a non-scalar root needs a ``gradient``
argument, and what it computes is a vector-Jacobian product (worked out on a 2x3 example);
gradients accumulate across backward calls until you zero them.
"""

# %% [markdown]
# [en]
# # backward() and where gradients land
# A scalar loss fills the leaves' .grad; a vector needs a gradient argument; and .grad keeps adding up.
#
# `loss.backward()` walks the graph from `loss` back to the leaves, applying the chain rule
# at every node, and *adds* the result into each leaf's `.grad`.
# [zh]
# # backward() 与梯度的去向
# 标量损失会填充叶子的 .grad；向量需要 gradient 参数；而 .grad 会不断累加。
#
# `loss.backward()` 从 `loss` 出发沿计算图回溯到叶子，在每个节点上应用链式法则，
# 并把结果*累加*进每个叶子的 `.grad`。

# %%
import warnings

import torch

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## A scalar loss and its analytic gradient
# With `h = x * w` and `loss = sum(h**2)`, the chain rule goes from `loss` to `h`, then
# from `h` to `w`.
#
# - Before `loss.backward()` runs, GradStep asks what it puts in `w.grad`: work it out
#   with the chain rule and the values of `x` and `w`, then step over the line.
# - `x` has no `.grad`: it does not require grad, so backward computes no gradient for it.
# [zh]
# ## 标量损失与解析梯度
# 设 `h = x * w`，`loss = sum(h**2)`，链式法则先从 `loss` 走到 `h`，再从 `h` 走到 `w`。
#
# - 在 `loss.backward()` 执行之前，GradStep 会问你它在 `w.grad` 中填入了什么：
#   用链式法则和 `x`、`w` 的值算一算，然后单步执行这一行。
# - `x` 没有 `.grad`：它不需要梯度，所以反向传播不会为它计算梯度。

# %%
x = torch.tensor([1.0, 2.0, 3.0])
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = x * w
loss = (h**2).sum()
loss.backward()  # predict: w.grad | None | tensor([1., -4., 12.]) | tensor([1., -8., 36.])

# %% [markdown]
# [en]
# ## The chain rule, worked out
# dloss/dh = 2 * h, and dh/dw = x, so dloss/dw = 2 * h * x = 2 * w * x**2. The gradient
# at `h` (2 * h) is not yet the gradient at `w`: it is multiplied by `x` on the way.
# `expected` on the next line computes it by hand; compare it with `w.grad`.
# [zh]
# ## 链式法则算出来
# dloss/dh = 2 * h，dh/dw = x，所以 dloss/dw = 2 * h * x = 2 * w * x**2。
# `h` 处的梯度（2 * h）还不是 `w` 处的梯度：传到 `w` 的路上还要乘以 `x`。
# 下一行的 `expected` 用手算出它，把它与 `w.grad` 比较。

# %%
expected = 2 * w.detach() * x**2
print("w.grad:  ", w.grad)
print("expected:", expected)

# %% [markdown]
# [en]
# ## Non-leaf tensors do not keep .grad
# To save memory, autograd only stores gradients for leaves. Reading `h.grad` gives None
# and PyTorch warns about it; this lesson records that warning and prints it.
#
# - Step over `h2.retain_grad()`: it asks autograd to keep the gradient of this one
#   non-leaf. After `loss2.backward()`, `h2.grad` equals 2 * h2.
# - Look at `w.grad` after `loss2.backward()` too (GradStep asks for it first). `loss2` is
#   the same computation as `loss`, and `w.grad` still holds the gradient of the first
#   backward. What does a second backward do with it? That is the subject of the last section.
# [zh]
# ## 非叶子张量不保留 .grad
# 为了节省内存，自动求导只为叶子保存梯度。读取 `h.grad` 得到 None，PyTorch 还会发出警告；
# 本课把这个警告记录下来并打印出来。
#
# - 单步执行 `h2.retain_grad()`：它要求自动求导保留这个非叶子的梯度。
#   `loss2.backward()` 之后，`h2.grad` 等于 2 * h2。
# - `loss2.backward()` 之后也看一看 `w.grad`（GradStep 会先问你）。`loss2` 与 `loss` 的
#   计算完全相同，而 `w.grad` 里还留着第一次反向传播的梯度。第二次反向传播会怎样对待它？
#   这正是最后一节的主题。

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("h.grad:", h.grad)
for warning in caught:
    print("warning:", str(warning.message).split(". ")[0])

h2 = x * w
h2.retain_grad()
loss2 = (h2**2).sum()
loss2.backward()  # predict: w.grad | tensor([1., -8., 36.]) | tensor([2., -16., 72.])
print("h2.grad:", h2.grad, "| 2 * h2:", 2 * h2.detach())
print("w.grad after a second backward:", w.grad, "| 2 * expected:", 2 * expected)

# %% [markdown]
# [en]
# ## A vector root needs a `gradient`: the vector-Jacobian product
# `y = A @ v` has two entries. `y.backward()` alone fails: "grad can be implicitly created
# only for scalar outputs" (printed from the `try`).
#
# The Jacobian of `y` with respect to `v` is the 2x3 matrix J[i, j] = dy_i/dv_j.
# `y.backward(gradient=u)` computes `u @ J`, the vector-Jacobian product.
#
# - Before `y.backward(gradient=u)` runs, GradStep asks for `v.grad`: what is J for
#   `y = A @ v`, and what is `u @ J` with the `u` of the line above?
# - `torch.ones_like(y)` as `gradient` is the same as calling `y.sum().backward()`.
# [zh]
# ## 向量作为起点需要 `gradient`：向量-雅可比积
# `y = A @ v` 有两个元素。直接调用 `y.backward()` 会失败：
# “grad can be implicitly created only for scalar outputs”（由 `try` 打印出来）。
#
# `y` 对 `v` 的雅可比矩阵是 2x3 的矩阵 J[i, j] = dy_i/dv_j。
# `y.backward(gradient=u)` 计算的是 `u @ J`，即向量-雅可比积。
#
# - 在 `y.backward(gradient=u)` 执行之前，GradStep 会问你 `v.grad`：对 `y = A @ v` 来说 J 是什么？
#   用上一行的 `u` 算出的 `u @ J` 又是什么？
# - 用 `torch.ones_like(y)` 作为 `gradient`，与调用 `y.sum().backward()` 效果相同。

# %%
A = torch.tensor([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
v = torch.tensor([1.0, 1.0, 1.0], requires_grad=True)
y = A @ v
try:
    y.backward()
except RuntimeError as err:
    print("backward on a vector:", err)
u = torch.tensor([1.0, 10.0])
y.backward(gradient=u)  # predict: v.grad | tensor([1., -8., 30.]) | tensor([3., 20.]) | tensor([1., 1., 1.])

# %% [markdown]
# [en]
# ## u @ A
# dy_i/dv_j = A[i, j], so J is `A` itself and `v.grad` is `u @ A`: the gradient of the
# scalar `sum(u * y)`. No Jacobian is ever built; each node only multiplies by its local
# derivative. Compare `v.grad` with the printed `u @ A`.
# [zh]
# ## u @ A
# dy_i/dv_j = A[i, j]，所以 J 就是 `A` 本身，`v.grad` 就是 `u @ A`，也就是标量 `sum(u * y)` 的梯度。
# 整个过程从不构造雅可比矩阵，每个节点只乘上自己的局部导数。把 `v.grad` 与打印出的 `u @ A` 比较。

# %%
print("v.grad:", v.grad, "| u @ A:", u @ A)

# %% [markdown]
# [en]
# ## Gradients accumulate
# `backward()` adds into `.grad`; it never overwrites it. Step over the loop and watch
# `w.grad` after each pass: the same gradient is added three times. This is why a training
# loop usually zeroes the gradients before each backward (lesson 13); a loop that accumulates
# on purpose, over several micro-batches, zeroes them only after each optimizer step (lesson 18).
# [zh]
# ## 梯度会累加
# `backward()` 是往 `.grad` 上累加，而不是覆盖。单步执行这个循环，每一轮之后观察 `w.grad`：
# 同样的梯度被加了三次。所以训练循环通常在每次反向传播之前
# 先把梯度清零（见第 13 课）；有意在几个微批次上累积梯度的循环，则只在每次优化器更新之后才清零（见第 18 课）。

# %%
w.grad = None
for step in range(3):
    ((x * w) ** 2).sum().backward()
    print(f"after backward {step + 1}: w.grad = {w.grad}")
accumulated = w.grad.clone()
print("three passes gave three times the gradient:", torch.allclose(accumulated, 3 * expected))
w.grad.zero_()
print("after w.grad.zero_():", w.grad)

# %% [markdown]
# [en]
# ## Try it
# 1. Change `u` to `torch.ones(2)`: `v.grad` now equals the column sums of `A`, the same as
#    `y.sum().backward()` would give.
# 2. Remove `h2.retain_grad()`: `h2.grad` becomes None and the warning comes back.
# [zh]
# ## 动手试试
# 1. 把 `u` 改成 `torch.ones(2)`：`v.grad` 变成 `A` 每一列的和，与 `y.sum().backward()` 的结果相同。
# 2. 删掉 `h2.retain_grad()`：`h2.grad` 变成 None，警告又出现了。
# check: course.before('y.backward(gradient=u)', 'torch.equal(u, torch.ones(2)) and v.grad is None') == [True] and course.after('y.backward(gradient=u)', 'torch.equal(v.grad, A.sum(0))') == [True]
# check: course.before('h2.retain_grad()', 'h2') == [] and course.after('loss2.backward()', 'not h2.retains_grad and h2.grad is None and h2.grad_fn is not None') == [True]
