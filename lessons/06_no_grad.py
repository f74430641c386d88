"""Lesson 6: switching gradient tracking off with no_grad, set_grad_enabled and inference_mode.

What it teaches: ``torch.no_grad()`` and ``torch.is_grad_enabled()``; what ``no_grad`` changes,
and what it leaves alone, on the tensors inside the block;
``torch.set_grad_enabled(flag)`` for switching by a variable; the ``@torch.no_grad()``
decorator; and ``torch.inference_mode()``, which is stricter and cheaper.
"""

# %% [markdown]
# [en]
# # Turning gradients off
# no_grad stops recording new operations; it does not change the tensors you already have.
#
# During evaluation, prediction or a manual weight update you do not want a graph: it costs
# memory and time. PyTorch has a "grad mode" switch, one per thread: turning it off affects
# only the thread that did it, and a new thread starts with it on. When it is off,
# operations run as usual but nothing is recorded.
# [zh]
# # 禁用梯度计算
# no_grad 只是不再记录新的运算，并不会改变你已有的张量。
#
# 在评估、预测或手动更新权重时，我们不需要计算图：它既占内存又耗时间。PyTorch 有一个
# “梯度模式”开关，每个线程各有一个：关掉它只影响关掉它的那个线程，新线程启动时它是开着的。
# 关闭时，运算照常执行，只是什么都不记录。

# %%
import torch

torch.manual_seed(0)
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print("grad enabled at start:", torch.is_grad_enabled())

# %% [markdown]
# [en]
# ## Inside no_grad
# `x` requires grad. What does `with torch.no_grad():` do to it, and to what is computed
# inside the block?
#
# - Step into the `with torch.no_grad():` block and look at `torch.is_grad_enabled()`
#   printed on the first line inside it. GradStep asks, as you enter the block, whether
#   `x` still requires grad; watch `x` in the variables view.
# - Before `doubled = x * 2` runs, GradStep asks whether `doubled` requires grad.
# - After the block, look at `tracked = x * 2`.
# [zh]
# ## 在 no_grad 内部
# `x` 需要梯度。`with torch.no_grad():` 会对它做什么？对块内算出的结果又会怎样？
#
# - 单步进入 `with torch.no_grad():` 块，看块内第一行打印的 `torch.is_grad_enabled()`。
#   进入这个块时，GradStep 会问你 `x` 是否仍然需要梯度；请在变量视图里观察 `x`。
# - 在 `doubled = x * 2` 执行之前，GradStep 会问你 `doubled` 是否需要梯度。
# - 离开这个块后，看一看 `tracked = x * 2`。

# %%
with torch.no_grad():  # predict: x.requires_grad | True | False
    print("inside no_grad, grad enabled:", torch.is_grad_enabled())
    doubled = x * 2  # predict: doubled.requires_grad | True | False
    print("doubled.requires_grad:", doubled.requires_grad, "| x.requires_grad:", x.requires_grad)
tracked = x * 2
x_required_grad = x.requires_grad
print("after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)

# %% [markdown]
# [en]
# ## The inputs keep requires_grad, the results lose it
# A common misreading is that `no_grad` switches `requires_grad` off on every tensor. It
# does not touch existing tensors at all: `x` still requires grad inside the block. What
# it switches off is *recording*: `torch.is_grad_enabled()` printed that grad mode was off,
# no operation was recorded: it is the results that do not require grad, so `doubled` has no
# `grad_fn`. After the block,
# `tracked = x * 2` is recorded again, because grad mode is back on.
#
# ## Switching by a flag, and the decorator
# - `torch.set_grad_enabled(is_training)` turns tracking on or off from a variable, which
#   suits code shared by training and evaluation. Step over `with
#   torch.set_grad_enabled(is_training):` once for each value of `is_training` and compare
#   `out.requires_grad`.
# - `@torch.no_grad()` sits above `predict`, and we call it in grad mode with `x`, which
#   requires grad. GradStep asks whether `prediction` requires grad.
# [zh]
# ## 输入仍然需要梯度，结果不再需要
# 一种常见的误解是 `no_grad` 会关掉所有张量的 `requires_grad`。实际上它完全不会改动
# 已有的张量：块内的 `x` 仍然需要梯度。它关掉的是*记录*：`torch.is_grad_enabled()` 打印出
# 梯度模式已关闭，不记录任何运算，所以 `doubled` 不需要梯度，也没有 `grad_fn`。离开这个块后，
# `tracked = x * 2` 又会被记录，因为梯度模式恢复了。
#
# ## 用变量切换，以及装饰器
# - `torch.set_grad_enabled(is_training)` 根据变量的值打开或关闭跟踪，适合训练和评估共用的
#   代码。对 `is_training` 的每个取值各单步执行一次 `with torch.set_grad_enabled(is_training):`，
#   比较 `out.requires_grad`。
# - `predict` 上方写着 `@torch.no_grad()`，而我们在梯度模式下用需要梯度的 `x` 调用它。
#   GradStep 会问你 `prediction` 是否需要梯度。

# %%
for is_training in (True, False):
    with torch.set_grad_enabled(is_training):
        out = (x**2).sum()
    print(f"is_training={is_training}: out.requires_grad={out.requires_grad}")


@torch.no_grad()
def predict(inputs):
    """A forward pass that never records a graph."""
    return inputs * 3


prediction = predict(x)  # predict: prediction.requires_grad | True | False
print("prediction.requires_grad:", prediction.requires_grad)

# %% [markdown]
# [en]
# ## The decorator wins, and backward() is not recording
# `prediction` does not require grad: `@torch.no_grad()` switches recording off for every
# call of the function, whatever the caller's mode.
#
# `no_grad` is often described as "disabling gradient calculation", so what does a
# `backward()` inside it do? `loss = (w**2).sum()` is recorded *before* the block; the
# block only calls `loss.backward()`. GradStep asks what lands in `w.grad`.
# [zh]
# ## 装饰器说了算，而 backward() 并不是在记录
# `prediction` 不需要梯度：`@torch.no_grad()` 让这个函数的每次调用都不记录运算，
# 不管调用者处于哪种模式。
#
# `no_grad` 常被说成“禁用梯度计算”，那么在它里面调用 `backward()` 会怎样？
# `loss = (w**2).sum()` 是在块*之前*记录的，块里只调用 `loss.backward()`。
# GradStep 会问你 `w.grad` 里是什么。

# %%
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w**2).sum()
with torch.no_grad():
    loss.backward()  # predict: w.grad | None | tensor([2., 4., 6.])
print("backward() inside no_grad, w.grad:", w.grad)

# %% [markdown]
# [en]
# ## backward() under no_grad still fills .grad
# `w.grad` is [2, 4, 6], 2w: `no_grad` decides whether *new operations* are recorded. A
# backward pass through a graph recorded earlier runs all the same and fills `.grad`
# (PyTorch's own optimizers and `clip_grad_norm_` work on `.grad` under `no_grad`).
#
# ## Inference mode: faster, with strings attached
# `torch.inference_mode()` also skips the version counters and view tracking that autograd
# would need later, so it is a little cheaper than `no_grad`. The price: tensors made inside
# it are *inference tensors*, and outside the block autograd limits what they can do.
#
# - After the `with torch.inference_mode():` block, `fast.is_inference()` is True.
# - `fast` may still be an input of a recorded operation: `(fast + x).sum().backward()`
#   works, because an addition saves no tensor for backward (lesson 9). GradStep asks what
#   it puts in `x.grad`.
# - Step over the three `try` blocks; each one fails, and its message is printed:
#   `fast * x` (its `MulBackward0` would have to save `fast` for backward), `fast.add_(1)`
#   (an in-place change) and `fast.requires_grad_()`.
# - `fast.clone()` is an ordinary tensor again: `normal * x` is recorded as usual. Use
#   `no_grad` instead when the results may be used for training later.
# [zh]
# ## 在 no_grad 下 backward() 照样填入 .grad
# `w.grad` 是 [2, 4, 6]，即 2w：`no_grad` 决定的是*新的运算*是否被记录。
# 沿着之前记录好的计算图做反向传播照样进行，并填入 `.grad`（PyTorch 自己的
# 优化器和 `clip_grad_norm_` 都是在 `no_grad` 下处理 `.grad` 的）。
#
# ## 推理模式：更快，但有限制
# `torch.inference_mode()` 还会跳过自动求导以后才需要的版本计数和视图跟踪，
# 因此比 `no_grad` 略省一些。代价是：在其中创建的张量是*推理张量*，离开这个块之后，
# 自动求导会限制它们的用法。
#
# - `with torch.inference_mode():` 块结束后，`fast.is_inference()` 为 True。
# - `fast` 仍然可以作为被记录运算的输入：`(fast + x).sum().backward()` 能够成功，因为加法
#   不需要为反向传播保存张量（见第 9 课）。GradStep 会问你它在 `x.grad` 中填入了什么。
# - 依次单步执行三个 `try` 块，每个都会失败，并打印报错信息：
#   `fast * x`（它的 `MulBackward0` 需要为反向传播保存 `fast`）、
#   `fast.add_(1)`（原地操作）以及 `fast.requires_grad_()`。
# - `fast.clone()` 又是一个普通张量：`normal * x` 会像平常一样被记录。如果结果以后可能
#   用于训练，请改用 `no_grad`。

# %%
with torch.inference_mode():
    fast = x * 2
print("fast.is_inference():", fast.is_inference(), "| fast.requires_grad:", fast.requires_grad)

(fast + x).sum().backward()  # predict: x.grad | None | tensor([1., 1., 1.]) | tensor([2., 4., 6.])
print("fast + x is fine, x.grad:", x.grad)
try:
    product = fast * x
except RuntimeError as err:
    print("fast * x:", err)
try:
    fast.add_(1)
except RuntimeError as err:
    print("fast.add_(1):", err)
try:
    fast.requires_grad_()
except RuntimeError as err:
    print("fast.requires_grad_():", err)

normal = fast.clone()
print("normal.is_inference():", normal.is_inference(), "| (normal * x).grad_fn:", (normal * x).grad_fn.name())

# %% [markdown]
# [en]
# ## Try it
# 1. Add `x.requires_grad_(False)` as the last line of the `no_grad` block: now the input
#    itself changes, not the mode, and `tracked` after the block has no `grad_fn`. The change
#    lasts, so `(fast + x).sum().backward()` further down would stop the lesson with "element
#    0 of tensors does not require grad": add `x.requires_grad_(True)` right after the
#    `print("after the block` line to switch it back.
# 2. Replace `torch.inference_mode()` with `torch.no_grad()`: `fast` is an ordinary tensor
#    that does not require grad, so all three `try` blocks now succeed, and the last one
#    makes `fast` require grad.
# [zh]
# ## 动手试试
# 1. 在 `no_grad` 块的最后加上一行 `x.requires_grad_(False)`：这次改的是输入本身，
#    而不是模式，块之后的 `tracked` 没有 `grad_fn`。这个改动会一直保留，
#    后面的 `(fast + x).sum().backward()` 会让课程停下，报错“element 0 of tensors does not require grad”：
#    请在 `print("after the block` 那一行之后加上 `x.requires_grad_(True)`，把它改回来。
# 2. 把 `torch.inference_mode()` 换成 `torch.no_grad()`：`fast` 成了不需要梯度的普通张量，
#    三个 `try` 块都能成功执行了，最后一个还让 `fast` 需要梯度。
# check: course.before('tracked = x * 2', 'torch.is_grad_enabled() and not x.requires_grad') == [True] and course.after('tracked = x * 2', 'tracked.grad_fn is None') == [True] and course.after('x_required_grad = x.requires_grad', 'x_required_grad') == [False] and x.requires_grad
# check: course.before('fast = x * 2', 'torch.is_grad_enabled() or torch.is_inference_mode_enabled()') == [False] and course.after('fast = x * 2', 'fast.is_inference() or fast.requires_grad') == [False] and course.after('product = fast * x', 'product.grad_fn is not None') == [True] and course.after('fast.requires_grad_()', 'fast.requires_grad') == [True]
