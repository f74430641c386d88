"""Lesson 17: NaN gradients at points where a function has no derivative, and the double-where fix.

What it teaches: what autograd returns at a kink (``abs`` and ``relu`` at 0) and at an
infinite slope (``sqrt`` at 0); why ``torch.where(x > 0, torch.sqrt(x), 0)`` has a clean
output and NaN gradients; what a ``where`` or a ``clamp`` in front of ``sqrt`` gives
instead; the double-``where`` fix, whose intermediate gradients stay finite too (anomaly
mode stays quiet); and a vector's length at the zero vector, written by hand and with
``torch.linalg.vector_norm``.
"""

# %% [markdown]
# [en]
# # NaN gradients and the double where
# A masked-out branch is still computed, and its gradient still flows: how NaN gets into .grad, and how to keep it out.
#
# Lesson 1 showed NaN that appears only in the backward pass. Here we look at where it
# comes from. Autograd multiplies local derivatives along the graph, and two products
# have no number as their answer: 0 × ∞ and 0 × NaN. Both are NaN, and once a NaN is in a
# gradient every later sum that touches it is NaN too.
# [zh]
# # NaN 梯度与双重 where
# 被掩码屏蔽的分支照样会被计算，它的梯度也照样会回传：NaN 是怎样进入 .grad 的，又该如何避免。
#
# 第 1 课展示了只在反向传播中出现的 NaN，这里来看它的来源。
# 自动求导沿着计算图把局部导数相乘，而有两种乘积得不出一个数：0 × ∞ 和 0 × NaN。
# 它们的结果都是 NaN，而梯度里一旦出现 NaN，之后凡是碰到它的求和也都会变成 NaN。

# %%
import warnings

import torch

torch.manual_seed(0)
POINTS = [-1.0, 0.0, 4.0]


def grad_at_points(fn):
    """The gradient of fn(x).sum() at x = POINTS, from a fresh leaf."""
    x = torch.tensor(POINTS, requires_grad=True)
    fn(x).sum().backward()
    return x.grad


# %% [markdown]
# [en]
# ## What autograd returns where there is no derivative
# `abs` and `relu` have a kink at 0: no slope there, only a range of slopes that would fit.
# `grad_at_points` differentiates at `POINTS` = [-1, 0, 4], so entry 1 of each gradient is
# the one at 0. Before the `abs_grad` line runs, GradStep asks what autograd returns there.
# [zh]
# ## 在没有导数的地方，自动求导返回什么
# `abs` 和 `relu` 在 0 处有一个尖点（不可导点）：那里没有确定的斜率，只有一段都说得通的斜率。
# `grad_at_points` 在 `POINTS` = [-1, 0, 4] 处求导，所以每个梯度的第 1 个元素就是 0 处的值。
# 在 `abs_grad` 那一行运行之前，GradStep 会问你自动求导在那里返回什么。

# %%
abs_grad = grad_at_points(torch.abs)  # predict: abs_grad[1].item() | -1 | 0 | 1 | nan

# %% [markdown]
# [en]
# ## A kink gives 0, an infinite slope gives inf
# PyTorch picks 0 for the kinks of both `abs` and `relu`, so they give 0 at 0: a plain 0,
# never NaN.
#
# `sqrt` is different: at 0 its slope is infinite, so the gradient is `inf`, and at -1 the
# value itself is NaN and so is its gradient. Step over the next two lines and compare
# `abs_grad`, `relu_grad` and `sqrt_grad` in the Variables view: the NaN and inf counts
# show up in each row.
# [zh]
# ## 不可导点给出 0，无穷大的斜率给出 inf
# PyTorch 对 `abs` 和 `relu` 的尖点都取 0，所以它们在 0 处的梯度就是 0，不会是 NaN。
#
# `sqrt` 则不同：它在 0 处的斜率是无穷大，所以梯度是 `inf`；在 -1 处函数值本身就是 NaN，
# 梯度也是 NaN。单步执行接下来的两行，在变量视图里比较 `abs_grad`、`relu_grad` 和 `sqrt_grad`：
# 每一行都会显示 NaN 和 inf 的个数。

# %%
relu_grad = grad_at_points(torch.relu)
sqrt_grad = grad_at_points(torch.sqrt)
print("at x =", POINTS)
print("abs: ", abs_grad)
print("relu:", relu_grad)
print("sqrt:", sqrt_grad)

# %% [markdown]
# [en]
# ## The trap: a where() after sqrt
# `torch.where(x > 0, root, 0.0)` keeps `root` where x > 0 and 0 elsewhere, so `masked`
# has no NaN. But `root = torch.sqrt(x)` was computed for *every* entry, and it is a node
# of the graph: in the graph panel, `WhereBackward0` has `SqrtBackward0` behind it.
#
# Before `masked.sum().backward()` runs, GradStep asks how many entries of `x.grad` will
# be NaN.
# [zh]
# ## 陷阱：sqrt 之后的 where()
# `torch.where(x > 0, root, 0.0)` 在 x > 0 处取 `root`，其余位置取 0，所以 `masked` 里没有 NaN。
# 但 `root = torch.sqrt(x)` 对*每个*元素都算过了，而且它是计算图里的一个节点：
# 在计算图面板上，`WhereBackward0` 后面连着 `SqrtBackward0`。
#
# 在 `masked.sum().backward()` 运行之前，GradStep 会问你 `x.grad` 里将有几个 NaN。

# %%
x = torch.tensor(POINTS, requires_grad=True)
root = torch.sqrt(x)
masked = torch.where(x > 0, root, 0.0)
masked.sum().backward()  # predict: int(x.grad.isnan().sum()) | 0 | 1 | 2 | 3

# %% [markdown]
# [en]
# ## where() cleans the output, not the gradient
# Look at the `.grad` column of `x`: two NaN. `where` sends gradient 1 to `root` where
# x > 0 and 0 where it chose the constant, and `sqrt` multiplies that by its own slope:
# 0 × ∞ at x = 0, 0 × NaN at x = -1. Masking the result with `root * (x > 0)` or
# `root.masked_fill(x <= 0, 0.0)` falls into the same trap. `trap_grad` keeps this
# gradient, since the double where below starts `x.grad` afresh.
# [zh]
# ## where() 清理了输出，却没有清理梯度
# 查看 `x` 的 `.grad` 列：有两个 NaN。`where` 在 x > 0 处把梯度 1 传给 `root`，
# 在选了常数的位置传 0；`sqrt` 再把它乘上自己的斜率：x = 0 处是 0 × ∞，x = -1 处是 0 × NaN。
# 用 `root * (x > 0)` 或 `root.masked_fill(x <= 0, 0.0)` 来屏蔽结果，也会掉进同样的陷阱。
# `trap_grad` 留住了这个梯度，因为下面的双重 where 会让 `x.grad` 从头开始。

# %%
trap_grad = x.grad
print("masked:", masked.detach(), "| x.grad:", trap_grad)

# %% [markdown]
# [en]
# ## A where in front of sqrt: the condition decides
# Put the `where` *before* `sqrt`, so `sqrt` never sees a negative number.
#
# - The gradient of `sqrt(where(x > 0, x, 0))` is [0, 0, 0.25] (its value is [0, 0, 2]): no
#   NaN, nothing infinite. `sqrt` still sends an
#   infinite gradient back at the two entries it got as 0, but the backward of `where` is
#   a *choice*, not a product: for the entries where it took the constant it passes 0 to
#   `x`, whatever arrived. So this form is already safe.
# - `sqrt(clamp(x, min=0))` looks like the same idea. Before its line runs, GradStep asks
#   what its gradient is at 0, `clamp_grad[1]`.
# [zh]
# ## 把 where 放在 sqrt 前面：条件说了算
# 把 `where` 放到 `sqrt` *前面*，让 `sqrt` 永远见不到负数。
#
# - `sqrt(where(x > 0, x, 0))` 的梯度是 [0, 0, 0.25]（它的值是 [0, 0, 2]）：没有 NaN，也没有无穷大。
#   `sqrt` 在它收到 0 的两个位置上仍会传回无穷大的梯度，但 `where` 的反向传播是一次*选择*，
#   而不是乘法：在它选了常数的位置上，不管传来的是什么，它传给 `x` 的都是 0。
#   所以这种写法本身就是安全的。
# - `sqrt(clamp(x, min=0))` 看起来是同一个思路。在它那一行运行之前，
#   GradStep 会问你它在 0 处的梯度 `clamp_grad[1]` 是多少。

# %%
inner_where_grad = grad_at_points(lambda x: torch.sqrt(torch.where(x > 0, x, 0.0)))
clamp_grad = grad_at_points(lambda x: torch.sqrt(x.clamp(min=0.0)))  # predict: clamp_grad[1].item() | 0 | inf | nan

# %% [markdown]
# [en]
# ## The boundary decides
# `clamp_grad` is inf at 0: `sqrt(clamp(x, min=0))` gives inf at 0. `clamp` counts x = 0 as
# inside the range and lets the gradient through there, so the infinite slope of `sqrt` at 0
# reaches `x`. `where(x >= 0, x, 0)` does the same. The boundary decides, not the shape of
# the code.
# [zh]
# ## 边界说了算
# `clamp_grad` 在 0 处是 inf。`clamp` 把 x = 0 算作范围之内，梯度在那里照常通过，
# 于是 `sqrt` 在 0 处无穷大的斜率传到了 `x`。`where(x >= 0, x, 0)` 也一样。
# 决定结果的是边界条件，而不是代码的样子。

# %%
print("sqrt(where(x > 0, x, 0)):", inner_where_grad)
print("sqrt(clamp(x, min=0)):   ", clamp_grad)

# %% [markdown]
# [en]
# ## The double where
# The inner `where` above feeds 0 to the masked entries. That suits `sqrt` by luck, since
# sqrt(0) = 0 is the output we want there. For `log` it gives log(0) = -inf in the forward
# pass, and in the backward pass `LogBackward0` computes 0 / 0 = NaN for those entries
# before the inner `where` throws it away. The final `.grad` is right, but anomaly mode
# (lesson 1) stops at that NaN.
#
# The fix uses two `where`s with different jobs: the inner one puts a *harmless* value (1)
# in the masked entries, so every forward value and every gradient stays finite; the outer
# one chooses the output. Step through the loop: with `fill = 0.0` anomaly mode stops the
# backward at `LogBackward0`; with `fill = 1.0` it runs through and `y.grad` is
# [0, 0, 0.25]. The same pattern works for `sqrt`, `log`, division, `x ** 0.5`…
# [zh]
# ## 双重 where
# 上面那个内层 `where` 往被屏蔽的位置填了 0。这对 `sqrt` 来说只是碰巧合适，
# 因为 sqrt(0) = 0 正是那里想要的输出。换成 `log`，前向传播时会得到 log(0) = -inf；
# 反向传播时，`LogBackward0` 会在这些位置算出 0 / 0 = NaN，然后才被内层 `where` 丢掉。
# 最终的 `.grad` 是对的，但异常检测模式（见第 1 课）会在这个 NaN 处停下来。
#
# 修正的办法是用两个分工不同的 `where`：内层的把一个*无害*的值（1）填进被屏蔽的位置，
# 使每个前向值和每个梯度都保持有限；外层的负责选出输出。单步执行这个循环：
# `fill = 0.0` 时，异常检测模式在 `LogBackward0` 处中止反向传播；
# `fill = 1.0` 时一路顺利，`y.grad` 是 [0, 0, 0.25]。
# 同样的写法也适用于 `sqrt`、`log`、除法、`x ** 0.5`……

# %%
for fill in (0.0, 1.0):
    y = torch.tensor(POINTS, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's own warnings; the error below says enough
        with torch.autograd.detect_anomaly():
            logged = torch.where(y > 0, torch.log(torch.where(y > 0, y, fill)), 0.0)
            try:
                logged.sum().backward()
                print(f"fill={fill}: backward finished, y.grad =", y.grad)
            except RuntimeError as err:
                print(f"fill={fill}: anomaly mode stopped backward:", err)
safe_input = torch.where(x > 0, x, 1.0)
safe = torch.where(x > 0, torch.sqrt(safe_input), 0.0)
x.grad = None
safe.sum().backward()
print("double where for sqrt: safe =", safe.detach(), "| x.grad =", x.grad)

# %% [markdown]
# [en]
# ## Norms at zero
# The length of a vector, sqrt(sum(v**2)), meets the same infinite slope at the zero
# vector. Before the hand-written norm's `backward()` runs, GradStep asks what `v.grad`
# will be there, entry 0 of it.
# [zh]
# ## 零向量处的范数
# 向量的长度 sqrt(sum(v**2)) 在零向量处也会遇到无穷大的斜率。
# 在手写范数的 `backward()` 运行之前，GradStep 会问你那里的 `v.grad`（它的第 0 个元素）是多少。

# %%
v = torch.zeros(3, requires_grad=True)
torch.sqrt((v**2).sum()).backward()  # predict: v.grad[0].item() | 0 | inf | nan
hand_norm_grad = v.grad

# %% [markdown]
# [en]
# ## The library norm treats that point
# `sqrt` sends ∞ back and `v**2` multiplies it by 2 * v = 0, so the hand-written norm gives
# NaN. `torch.linalg.vector_norm` treats that point on purpose and returns a zero
# gradient. Prefer the library function, or add a small epsilon inside the `sqrt`.
# [zh]
# ## 库函数专门处理了这个点
# `sqrt` 传回 ∞，`v**2` 再乘上 2 * v = 0，所以手写的范数得到 NaN。
# `torch.linalg.vector_norm` 专门处理了这个点，返回零梯度。
# 优先使用库函数，或者在 `sqrt` 里加一个很小的 epsilon。

# %%
v = torch.zeros(3, requires_grad=True)
torch.linalg.vector_norm(v).backward()
library_norm_grad = v.grad
print("hand-written norm at 0:", hand_norm_grad, "| torch.linalg.vector_norm:", library_norm_grad)

# %% [markdown]
# [en]
# ## Try it
# 1. In the trap, change `x > 0` to `x >= 0` and answer GradStep's question again: at 0
#    the gradient now reaches `sqrt` with a 1 and is inf; at -1 it is still NaN. Look at
#    `trap_grad`.
# 2. Replace the hand-written norm with `torch.sqrt((v**2).sum() + 1e-12)`: the epsilon
#    keeps the slope of `sqrt` finite, and the gradient at the zero vector becomes 0.
# [zh]
# ## 动手试试
# 1. 在陷阱那一节把 `x > 0` 改成 `x >= 0`，再回答一次 GradStep 的问题：
#    0 处的梯度现在以 1 传到 `sqrt`，结果是 inf；-1 处仍然是 NaN。查看 `trap_grad`。
# 2. 把手写的范数换成 `torch.sqrt((v**2).sum() + 1e-12)`：epsilon 让 `sqrt` 的斜率保持有限，
#    零向量处的梯度变成 0。
# check: course.before('masked.sum().backward()', 'masked.grad_fn.name(), masked.tolist()') == [('WhereBackward0', [0.0, 0.0, 2.0])] and course.after('masked.sum().backward()', 'x.grad[1].item() == float("inf") and x.grad[0].isnan().item()') == [True]
# check: course.after('torch.sqrt((v**2).sum()', 'torch.equal(v.grad, torch.zeros(3))') == [True]
