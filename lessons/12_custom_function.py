"""Lesson 12: writing your own autograd Function with forward and backward.

What it teaches: subclassing ``torch.autograd.Function`` with static ``forward`` and
``backward``; ``ctx.save_for_backward`` and ``ctx.saved_tensors``; the node the Function
adds to the graph; ``torch.autograd.gradcheck``
compares your backward with finite differences and catches a wrong formula.
"""

# %% [markdown]
# [en]
# # Custom autograd Functions
# Write forward and backward yourself, see your node in the graph, and let gradcheck verify the math.
#
# Autograd knows the derivative of every built-in operation. When you need an operation
# it does not know, or a different backward (a numerically safer formula, a
# straight-through estimator), you write a `torch.autograd.Function`: `forward` computes
# the result from plain tensors, `backward` receives the gradient of the output and
# returns the gradient of each input.
# [zh]
# # 自定义 autograd.Function
# 自己编写 forward 和 backward，在计算图中看到自己的节点，并用 gradcheck 验证数学推导。
#
# 自动求导知道每个内置运算的导数。当你需要一个它不认识的运算，或者想换一种反向计算方式
# （数值更稳定的公式、直通估计器等）时，就写一个 `torch.autograd.Function`：
# `forward` 用普通张量计算结果，`backward` 接收输出的梯度，返回每个输入的梯度。

# %%
import torch
from torch.autograd.gradcheck import GradcheckError

torch.manual_seed(0)


class Cube(torch.autograd.Function):
    """y = x**3, with the derivative 3 * x**2 written by hand."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x**2


# %% [markdown]
# [en]
# ## Your own node in the graph
# Always call a Function through `.apply`, never by constructing it.
#
# - `forward` computes `x**3`, a tensor operation. Before `y = Cube.apply(x)` runs, GradStep
#   asks which node `y.grad_fn` will be.
# [zh]
# ## 计算图里你自己的节点
# 调用 Function 时总是用 `.apply`，不要直接构造它的实例。
#
# - `forward` 计算的 `x**3` 是一个张量运算。在 `y = Cube.apply(x)` 执行之前，
#   GradStep 会问你 `y.grad_fn` 是哪个节点。

# %%
x = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
y = Cube.apply(x)  # predict: y.grad_fn

# %% [markdown]
# [en]
# ## Named after your class
# `y.grad_fn` is `CubeBackward`, named after your class, not `PowBackward0`. Inside
# `forward`, autograd is off, so the `x**3` there is not recorded; your `backward`
# replaces it.
#
# - Step into `loss.backward()` with "step into": the debugger stops in `Cube.backward`,
#   where `grad_output` is all ones (from the sum) and `x` comes from `ctx.saved_tensors`.
# - GradStep asks what backward puts in `x.grad`.
# [zh]
# ## 以你的类命名
# `y.grad_fn` 是 `CubeBackward`，以你的类命名，而不是 `PowBackward0`。在 `forward` 内部
# 自动求导是关闭的，所以那里的 `x**3` 不会被记录，由你写的 `backward` 来代替它。
#
# - 对 `loss.backward()` 使用“单步进入”：调试器会停在 `Cube.backward` 中，
#   这时 `grad_output` 全为 1（来自求和），`x` 来自 `ctx.saved_tensors`。
# - GradStep 会问你反向传播在 `x.grad` 中填入了什么。

# %%
print("y.grad_fn:", y.grad_fn.name())
loss = y.sum()
loss.backward()  # predict: x.grad | tensor([3., 12., 0.75]) | tensor([1., -8., 0.125]) | None
print("x.grad:", x.grad, "| 3x^2:", 3 * x.detach() ** 2)

# %% [markdown]
# [en]
# ## A backward with a mistake
# `x.grad` is 3x² = [3, 12, 0.75]: whatever your `backward` returns.
#
# `WrongCube` forgets a factor of `x` in its derivative: its `backward` returns 3x instead
# of 3x². Before `wrong_out.sum().backward()` runs, GradStep asks what it puts in
# `unchecked.grad`: does autograd notice the mistake?
# [zh]
# ## 写错了的 backward
# `x.grad` 是 3x² = [3, 12, 0.75]：就是你的 `backward` 返回的值。
#
# `WrongCube` 的导数漏掉了一个 `x` 因子：它的 `backward` 返回 3x 而不是 3x²。
# 在 `wrong_out.sum().backward()` 执行之前，GradStep 会问你
# 它在 `unchecked.grad` 中填入了什么：自动求导会发现这个错误吗？


# %%
class WrongCube(torch.autograd.Function):
    """Like Cube, but backward returns 3 * x instead of 3 * x**2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x


unchecked = x.detach().requires_grad_()
wrong_out = WrongCube.apply(unchecked)
wrong_out.sum().backward()  # predict: unchecked.grad | tensor([3., -6., 1.5]) | tensor([3., 12., 0.75]) | None
print("WrongCube's gradient:", unchecked.grad)

# %% [markdown]
# [en]
# ## Checking backward with gradcheck
# `unchecked.grad` is 3x = [3, -6, 1.5], with no error or warning: autograd runs your
# `backward` and trusts what it returns. Nothing checks it unless you ask.
#
# `torch.autograd.gradcheck` nudges each input by a tiny amount, measures how the output
# moves (finite differences), and compares that with your `backward`. Use float64 inputs:
# in float32 the nudges drown in rounding error.
#
# - Step *over* (F10) the two gradcheck lines. Stepping into one (F11) stops in your `forward`
#   and `backward` every time gradcheck calls them, about ten times each: it runs `forward` on
#   the input nudged up and down, `backward` for each element of the output, and some of that
#   again for its other checks. Shift+F11 takes you back to the lesson's next line.
# - `gradcheck(Cube.apply, ...)` returns True for your `Cube`. For `WrongCube`, step over
#   the `try`: gradcheck raises `GradcheckError`, and its message lists the numerical
#   Jacobian and then the analytical one (yours). So `wrong_ok` stays False.
# [zh]
# ## 用 gradcheck 检查 backward
# `unchecked.grad` 是 3x = [3, -6, 1.5]，没有任何报错或警告：自动求导运行你的 `backward`，
# 并相信它返回的值。除非你要求，没有任何东西会检查它。
#
# `torch.autograd.gradcheck` 把每个输入微调一点点，测量输出的变化（有限差分），
# 再与你的 `backward` 比较。请使用 float64 输入：在 float32 下，微调量会被舍入误差淹没。
#
# - 请单步跳过（F10）这两行 gradcheck。单步进入（F11）的话，
#   gradcheck 每次调用你的 `forward` 和 `backward` 时调试器都会停下，各十次左右：
#   它对上下微调过的输入运行 `forward`，对输出的每个元素运行一次 `backward`，
#   其他检查还会再调用一些。按 Shift+F11 回到课程的下一行。
# - 对你写的 `Cube`，`gradcheck(Cube.apply, ...)` 返回 True。对 `WrongCube`，单步执行 `try`：
#   gradcheck 抛出 `GradcheckError`，报错信息先列出数值雅可比矩阵，
#   再列出解析雅可比矩阵（即你写的那个），所以 `wrong_ok` 仍然是 False。


# %%
probe = torch.randn(4, dtype=torch.float64, requires_grad=True)
cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))
print("gradcheck(Cube):", cube_ok)
wrong_ok = False
try:
    wrong_ok = torch.autograd.gradcheck(WrongCube.apply, (probe,))
except GradcheckError as err:
    print("gradcheck(WrongCube) failed:", err)
print("gradcheck(WrongCube):", wrong_ok)

# %% [markdown]
# [en]
# ## Try it
# 1. Fix `WrongCube.backward` to return `grad_output * 3 * x**2` and rerun: both checks
#    pass, and `wrong_ok` is True.
# 2. Change `probe` to `dtype=torch.float32`, and add `raise_exception=False` to the
#    `cube_ok` line so that gradcheck returns False instead of raising: it warns that the
#    input is not double precision, and `cube_ok` is False even for the correct `Cube`.
# [zh]
# ## 动手试试
# 1. 把 `WrongCube.backward` 改成返回 `grad_output * 3 * x**2` 再运行：两个检查都通过，
#    `wrong_ok` 为 True。
# 2. 把 `probe` 改成 `dtype=torch.float32`，并给 `cube_ok` 那一行加上 `raise_exception=False`，
#    让 gradcheck 返回 False 而不是抛出异常：它会警告输入不是双精度，
#    即使对正确的 `Cube`，`cube_ok` 也是 False。
# check: course.after('wrong_out = WrongCube.apply(unchecked)', 'type(wrong_out.grad_fn).__name__ == "WrongCubeBackward" and torch.allclose(wrong_out, unchecked.detach() ** 3)') == [True] and course.after('wrong_out.sum().backward()', 'torch.allclose(unchecked.grad, 3 * unchecked.detach() ** 2)') == [True] and torch.autograd.gradcheck(WrongCube.apply, (torch.randn(3, dtype=torch.double, requires_grad=True),), raise_exception=False)
# check: course.after('cube_ok = torch.autograd.gradcheck(Cube.apply', 'probe.dtype == torch.float32 and cube_ok is False') == [True] and torch.autograd.gradcheck(Cube.apply, (torch.randn(3, dtype=torch.double, requires_grad=True),), raise_exception=False)
