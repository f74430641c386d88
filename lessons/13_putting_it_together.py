"""Lesson 13: a tiny regression trained twice, by hand and with torch.optim.

What it teaches: the training loop as forward, loss, ``backward()``, update; a manual
gradient-descent update done under ``torch.no_grad()`` (in place on leaves, lesson 11);
zeroing gradients every step and what goes wrong when you forget (lesson 7); and the same
loop with ``nn.Linear`` and ``torch.optim.SGD``, where ``zero_grad()`` and ``step()`` do
those two jobs.
"""

# %% [markdown]
# [en]
# # Putting it together: a training loop
# Fit a line by hand with no_grad updates, see what forgetting to zero gradients does, then let torch.optim do it.
#
# The data are points on the line y = 2x - 1 with a little noise. We learn a weight `w`
# and a bias `b` by gradient descent: compute the loss, call `backward()`, move each
# parameter a small step against its gradient, repeat.
# [zh]
# # 融会贯通：训练循环
# 先用 no_grad 手动更新参数来拟合一条直线，看看忘记清零梯度会怎样，再交给 torch.optim 来做。
#
# 数据是直线 y = 2x - 1 上带少量噪声的点。我们用梯度下降学习权重 `w` 和偏置 `b`：
# 计算损失，调用 `backward()`，让每个参数沿梯度的反方向移动一小步，如此反复。

# %%
import torch
from torch import nn

from course import count_nodes

torch.manual_seed(0)
inputs = torch.randn(64, 1)
targets = 2 * inputs - 1 + 0.05 * torch.randn(64, 1)
LEARNING_RATE, STEPS = 0.2, 10

# %% [markdown]
# [en]
# ## The manual loop
# - Step through one pass of the loop. After `loss.backward()`, `w.grad` and `b.grad`
#   hold this step's gradients.
# - The update `w -= LEARNING_RATE * w.grad` is an in-place change of a leaf that requires
#   grad, so it must be inside `torch.no_grad()` (lesson 11). GradStep asks for `w.grad_fn`
#   after it: `w` started as a leaf, and the update computes a new value for it.
# - `w.grad.zero_()` clears the gradients for the next step; without it, they would add up.
#   GradStep asks what it leaves in `w.grad`.
# - Set a breakpoint on the `if step % 3 == 0` line and continue a few times: `w` moves
#   towards 2 and `b` towards -1.
# - `STEPS` is 10, few enough to step through every pass of each loop. With more steps,
#   a breakpoint and Continue take you from pass to pass.
# [zh]
# ## 手写训练循环
# - 单步执行循环的一轮。`loss.backward()` 之后，`w.grad` 和 `b.grad` 中是这一步的梯度。
# - 更新语句 `w -= LEARNING_RATE * w.grad` 是对需要梯度的叶子做原地操作，
#   所以必须放在 `torch.no_grad()` 中（见第 11 课）。GradStep 会问你这一行之后的 `w.grad_fn`：
#   `w` 一开始是叶子，而更新为它算出了一个新值。
# - `w.grad.zero_()` 为下一步清空梯度；不清空的话，梯度会不断累加。
#   GradStep 会问你它在 `w.grad` 里留下了什么。
# - 在 `if step % 3 == 0` 这一行设置断点并多次继续运行：`w` 逐渐接近 2，`b` 逐渐接近 -1。
# - `STEPS` 为 10，少到可以把每个循环的每一轮都单步走完。步数更多时，
#   用断点加“继续运行”从一轮跳到下一轮。

# %%
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(STEPS):
    predictions = inputs * w + b
    loss = ((predictions - targets) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= LEARNING_RATE * w.grad  # predict: w.grad_fn | None | SubBackward0
        b -= LEARNING_RATE * b.grad
    w.grad.zero_()  # predict: w.grad | None | tensor([0.])
    b.grad.zero_()
    if step % 3 == 0:
        print(f"step {step:2d}: loss={loss.item():.4f} w={w.item():.3f} b={b.item():.3f}")
manual_w, manual_b = w.item(), b.item()
print(f"manual loop learned w={manual_w:.3f}, b={manual_b:.3f}")

# %% [markdown]
# [en]
# ## What the update left
# - `w.grad_fn` stayed None: under `no_grad` the update is not recorded, and it should not
#   be, since it is not part of the model. `w` is still a leaf.
# - `w.grad` is `tensor([0.])`, not None: `zero_()` changes the gradient tensor in place and
#   keeps it.
#
# ## Forgetting to zero the gradients
# The same loop without the two `zero_()` lines: every `backward()` adds onto the previous
# gradients, so each update uses the sum of all past gradients. The steps overshoot, and
# after the same number of steps the loss is far higher (watch `forgetful_loss`).
# [zh]
# ## 更新留下了什么
# - `w.grad_fn` 仍然是 None：在 `no_grad` 下更新不会被记录，而且它本来就不属于模型，
#   不应被记录。`w` 仍然是叶子。
# - `w.grad` 是 `tensor([0.])` 而不是 None：`zero_()` 用原地操作清零梯度张量，并把它保留下来。
#
# ## 忘记清零梯度
# 同样的循环去掉两行 `zero_()`：每次 `backward()` 都累加到之前的梯度上，于是每次更新用的是
# 过去所有梯度之和。步子迈得过大，同样的步数之后损失要高得多（观察 `forgetful_loss`）。

# %%
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for _ in range(STEPS):
    loss = ((inputs * w + b - targets) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= LEARNING_RATE * w.grad
        b -= LEARNING_RATE * b.grad
forgetful_loss = ((inputs * w + b - targets) ** 2).mean().item()
print(f"without zeroing: loss={forgetful_loss:.4f} w={w.item():.3f} b={b.item():.3f}")

# %% [markdown]
# [en]
# ## The same with nn.Linear and torch.optim
# `nn.Linear(1, 1)` holds `w` and `b` as parameters; `torch.optim.SGD` holds the learning
# rate and performs the update.
#
# - `optimizer.zero_grad()` replaces the `zero_()` lines (by default it sets `.grad` to None).
# - `optimizer.step()` replaces the `no_grad` block: it updates every parameter in place,
#   without recording.
# - After the loop, compare `model.weight` and `model.bias` with `manual_w` and `manual_b`:
#   GradStep asks whether they are the same, up to 1e-5.
# [zh]
# ## 用 nn.Linear 和 torch.optim 实现同样的事
# `nn.Linear(1, 1)` 把 `w` 和 `b` 作为参数保存；`torch.optim.SGD` 保存学习率并执行更新。
#
# - `optimizer.zero_grad()` 代替了那两行 `zero_()`（默认把 `.grad` 设为 None）。
# - `optimizer.step()` 代替了 `no_grad` 块：它原地更新每个参数，并且不做记录。
# - 循环结束后，把 `model.weight` 和 `model.bias` 与 `manual_w`、`manual_b` 比较：
#   GradStep 会问你二者在 1e-5 以内是否相同。

# %%
model = nn.Linear(1, 1)
with torch.no_grad():
    model.weight.zero_()
    model.bias.zero_()
optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
for _ in range(STEPS):
    optimizer.zero_grad()
    loss = ((model(inputs) - targets) ** 2).mean()
    loss.backward()
    optimizer.step()
print(f"torch.optim learned w={model.weight.item():.3f}, b={model.bias.item():.3f}")
same = abs(model.weight.item() - manual_w) < 1e-5 and abs(model.bias.item() - manual_b) < 1e-5  # predict: same

# %% [markdown]
# [en]
# ## The same rule, and a loss kept for the log
# `same` is True: same data, same starting point, same rule. `torch.optim.SGD` is the
# manual loop written once for every parameter.
#
# Adding up the losses for a log line looks harmless. But `running = running + step_loss` adds
# *tensors*: `running` gets a `grad_fn`, and its graph reaches back through every
# iteration's graph, so none of them, nor the activations they saved, can be freed while
# `running` lives (the printed node count grows with each iteration). `step_loss.item()` is a
# Python number, so `logged = logged + step_loss.item()` keeps nothing.
# [zh]
# ## 同样的规则，以及为记录而累加的损失
# `same` 为 True：数据相同、起点相同、规则相同。`torch.optim.SGD` 就是为每个参数统一写好的
# 手写循环。
#
# 为了打印日志而把损失加起来，看上去无害。但 `running = running + step_loss` 加的是*张量*：
# `running` 有了 `grad_fn`，它的计算图一直连到每一轮迭代的计算图，所以只要 `running` 还在，
# 这些计算图以及它们保存的中间结果就都不能释放（打印出的节点数随迭代增长）。
# `step_loss.item()` 是 Python 数，所以 `logged = logged + step_loss.item()` 什么都不保留。

# %%
print("same result as the manual loop:", same)
running, logged = 0.0, 0.0
for _ in range(3):
    step_loss = nn.functional.mse_loss(model(inputs), targets)
    running = running + step_loss
    logged = logged + step_loss.item()
    print(f"running: {running.grad_fn.name()} with {count_nodes(running)} nodes behind it | logged: {logged:.4f}")

# %% [markdown]
# [en]
# ## Try it
# 1. Set `LEARNING_RATE = 1.5`: the manual loop overshoots and the loss grows instead of
#    shrinking, so the line it learns (`manual_w`, `manual_b`) fits the data worse than the
#    starting line `w = b = 0`.
# 2. Replace `torch.optim.SGD` with `torch.optim.Adam(model.parameters(), lr=0.1)`: a
#    different update rule, so the result no longer matches the manual loop exactly.
# [zh]
# ## 动手试试
# 1. 把 `LEARNING_RATE` 改成 1.5：手写循环步子过大，损失不降反升，
#    学到的直线（`manual_w`、`manual_b`）拟合得比起点 `w = b = 0` 还差。
# 2. 把 `torch.optim.SGD` 换成 `torch.optim.Adam(model.parameters(), lr=0.1)`：更新规则不同，
#    结果不再与手写循环完全一致。
# check: set(course.before('w -= LEARNING_RATE * w.grad', 'LEARNING_RATE')) == {1.5} and course.after('manual_w, manual_b = ', '((inputs * manual_w + manual_b - targets) ** 2).mean() > (targets ** 2).mean()') == [True]
# check: course.after('optimizer.step()', 'type(optimizer).__name__, optimizer.param_groups[0]["lr"]') == [('Adam', 0.1)] * STEPS and course.after('same = ', 'same') == [False]
