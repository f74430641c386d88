"""Lesson 18: accumulating gradients on purpose, clipping them, and two losses on one graph.

What it teaches: micro-batches whose losses are divided by their number, with an optimizer
step every N of them, against the full batch; ``torch.nn.utils.clip_grad_norm_``, which
rescales all gradients together and returns the norm they had; ``backward(inputs=...)``;
and two
losses that share a graph, backpropagated one after the other with ``retain_graph=True``,
give the same gradients as ``(loss_a + loss_b).backward()``, while ``create_graph=True``
keeps the graph as well.
"""

# %% [markdown]
# [en]
# # Gradient accumulation and two losses
# .grad adds up (lesson 7): put that to work with micro-batches, clip the sum, and send two losses through one graph.
#
# A batch too big for memory can be cut into micro-batches: run backward on each and let
# the gradients accumulate in `.grad`, then take one optimizer step. Done right, the step is
# the same as the one the full batch would have given.
# [zh]
# # 梯度累积与两个损失
# .grad 会累加（见第 7 课）：用它来处理微批次，对累加结果做裁剪，再让两个损失经过同一张计算图。
#
# 一个大到放不进内存的批量可以切成若干微批次：每个微批次各做一次反向传播，
# 让梯度在 `.grad` 里累加，然后只做一次优化器更新。做得对的话，这一步与用整个批量
# 做的那一步完全相同。

# %%
import copy
import warnings

import torch
from torch import nn
from torch.nn.functional import mse_loss

torch.manual_seed(0)
inputs, targets = torch.randn(16, 3), torch.randn(16, 1)
ACCUMULATE = 4  # micro-batches per optimizer step
full_model = nn.Linear(3, 1)
micro_model = copy.deepcopy(full_model)  # the same starting weights

# %% [markdown]
# [en]
# ## Four micro-batches, one gradient
# `full_model` takes the mean loss over the first 8 samples in one backward. `micro_model`
# (the same starting weights) cuts them into four micro-batches of 2 and divides each
# micro-batch loss by `ACCUMULATE` before its backward.
#
# - Step through the loop and watch the `.grad` column of `micro_model`'s weight (expand
#   `micro_model` in the Variables view): every pass adds to what is there.
# - Before `accumulated_grad` is taken, GradStep asks whether it equals `full_grad` up to
#   float rounding (`torch.allclose`).
# [zh]
# ## 四个微批次，一个梯度
# `full_model` 对前 8 个样本的平均损失做一次反向传播。`micro_model`（起始权重相同）
# 把它们切成四个每批 2 个样本的微批次，每个微批次的损失在反向传播之前先除以 `ACCUMULATE`。
#
# - 单步执行这个循环，观察 `micro_model` 权重的 `.grad` 列（在变量视图里展开 `micro_model`）：
#   每一轮都在已有的值上继续累加。
# - 在取出 `accumulated_grad` 之前，GradStep 会问你：在浮点舍入误差之内
#   （`torch.allclose`），它是否等于 `full_grad`？

# %%
mse_loss(full_model(inputs[:8]), targets[:8]).backward()
full_grad = full_model.weight.grad.clone()
for micro_x, micro_y in zip(inputs[:8].chunk(ACCUMULATE), targets[:8].chunk(ACCUMULATE), strict=True):
    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()
accumulated_grad = micro_model.weight.grad.clone()  # predict: accumulated_grad.allclose(full_grad) | True | False

# %% [markdown]
# [en]
# ## The average of the means is the mean
# The loss is a mean. The mean over 8 samples is the average of the means over four
# micro-batches of 2, so micro-batches whose losses are divided by `ACCUMULATE` give the
# full-batch gradient in the accumulated `.grad`: every pass added a quarter of that
# micro-batch's gradient. The two are equal up to float rounding; the sums are done in a
# different order, so `torch.equal` would be too strict.
# [zh]
# ## 平均值的平均就是平均值
# 损失是平均值。8 个样本的平均等于四个（每个 2 个样本的）微批次平均值的平均，
# 所以把每个微批次的损失除以 `ACCUMULATE`，累加起来的 `.grad` 就是整个批量的梯度：
# 每一轮都加上了这个微批次梯度的四分之一。两者在浮点舍入误差之内相等；
# 求和的顺序不同，所以用 `torch.equal` 就太严格了。

# %%
print("full-batch gradient: ", full_grad)
print("accumulated gradient:", accumulated_grad)
print("equal up to rounding:", torch.allclose(full_grad, accumulated_grad))

# %% [markdown]
# [en]
# ## An optimizer step every N micro-batches
# The same idea in a training loop over 16 samples: eight micro-batches of 2 and a step
# after every fourth, against two full batches of 8 with a step after each.
#
# - The `if step % ACCUMULATE == 0:` line is where accumulation ends: `micro_opt.step()`
#   uses the sum in `.grad`, and `micro_opt.zero_grad()` starts the next sum.
# - After both loops the two models have the same weights (`same_weights` is True).
# [zh]
# ## 每 N 个微批次更新一次
# 在 16 个样本的训练循环里做同样的事：八个每批 2 个样本的微批次，每四个之后更新一次；
# 对照组是两个每批 8 个样本的完整批量，每批之后更新一次。
#
# - `if step % ACCUMULATE == 0:` 这一行就是梯度累积结束的地方：
#   `micro_opt.step()` 使用 `.grad` 里的累加和，`micro_opt.zero_grad()` 开始下一轮累加。
# - 两个循环结束后，两个模型的权重相同（`same_weights` 为 True）。

# %%
full_opt = torch.optim.SGD(full_model.parameters(), lr=0.1)
micro_opt = torch.optim.SGD(micro_model.parameters(), lr=0.1)
full_opt.zero_grad()
micro_opt.zero_grad()
for batch_x, batch_y in zip(inputs.chunk(2), targets.chunk(2), strict=True):
    mse_loss(full_model(batch_x), batch_y).backward()
    full_opt.step()
    full_opt.zero_grad()
micro_batches = list(zip(inputs.chunk(8), targets.chunk(8), strict=True))
for step, (micro_x, micro_y) in enumerate(micro_batches, 1):
    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()
    if step % ACCUMULATE == 0:
        micro_opt.step()
        micro_opt.zero_grad()
same_weights = torch.allclose(full_model.weight, micro_model.weight)
print("same weights after two steps:", same_weights)

# %% [markdown]
# [en]
# ## Clipping the gradient norm
# `clip_grad_norm_(parameters, max_norm)` treats the gradients of all the parameters as
# one long vector and returns that vector's length, `norm_before`. Step over the
# `clip_grad_norm_` line and compare `weight.grad` before and after in the Variables view.
# Then `norm_after` measures the length of that vector again; before its line runs,
# GradStep asks what it will be.
# [zh]
# ## 按范数裁剪梯度
# `clip_grad_norm_(parameters, max_norm)` 把所有参数的梯度看成一个长向量，
# 返回这个向量的长度 `norm_before`。单步执行 `clip_grad_norm_` 这一行，
# 在变量视图里比较前后的 `weight.grad`。接着 `norm_after` 再量一次这个向量的长度；
# 在它那一行运行之前，GradStep 会问你结果是多少。

# %%
mse_loss(full_model(inputs), targets * 10).backward()
grad_before = full_model.weight.grad.clone()
norm_before = nn.utils.clip_grad_norm_(full_model.parameters(), max_norm=0.5)
grads = [p.grad.flatten() for p in full_model.parameters()]
norm_after = torch.linalg.vector_norm(torch.cat(grads))  # predict: norm_after.item()

# %% [markdown]
# [en]
# ## Same direction, length max_norm
# `norm_before` was above `max_norm`, so `clip_grad_norm_` scaled every `.grad` in place by
# max_norm / (norm_before + 1e-6), a factor clamped at 1: every entry shrank by the same
# factor, the length became `max_norm` (0.5, short of it by a hair for the 1e-6) and the
# direction stayed. The clamp means a gradient already shorter than `max_norm` is left as it
# is: `clip_grad_norm_` never lengthens one, as clipping again with `max_norm=100` shows
# (`unchanged`). With accumulation, clip after the last micro-batch's backward, just before
# the step.
# [zh]
# ## 方向不变，长度变成 max_norm
# `norm_before` 超过了 `max_norm`，
# 所以 `clip_grad_norm_` 把每个 `.grad` 原地乘以 max_norm / (norm_before + 1e-6)，这个比例最大取 1：
# 每个元素都按同一个比例缩小，长度变成 `max_norm`（0.5，因为那个 1e-6 还差一点点），方向不变。
# 比例最大取 1，意味着本来就比 `max_norm` 短的梯度保持原样：`clip_grad_norm_` 从不把梯度拉长，
# 用 `max_norm=100` 再裁剪一次就能看到（`unchanged`）。
# 配合梯度累积时，在最后一个微批次反向传播之后、更新之前裁剪。

# %%
print(f"norm before: {norm_before:.3f}, after: {norm_after:.3f}")
print("same direction:", torch.allclose(full_model.weight.grad * norm_before / 0.5, grad_before))
grad_clipped = full_model.weight.grad.clone()
nn.utils.clip_grad_norm_(full_model.parameters(), max_norm=100.0)
unchanged = torch.equal(full_model.weight.grad, grad_clipped)
print("clipped again with max_norm=100, unchanged:", unchanged)

# %% [markdown]
# [en]
# ## backward(inputs=...): only the leaves you name
# `backward(inputs=[micro_model.bias])` names one leaf of the model. Before that line runs,
# GradStep asks what `micro_model.weight.grad` will be after it.
# [zh]
# ## backward(inputs=...)：只算你点名的叶子张量
# `backward(inputs=[micro_model.bias])` 只点名了模型的一个叶子张量。
# 在这一行运行之前，GradStep 会问你：运行之后 `micro_model.weight.grad` 是什么？

# %%
loss = mse_loss(micro_model(inputs), targets)
loss.backward(inputs=[micro_model.bias])  # predict: micro_model.weight.grad | None | [[0., 0., 0.]]

# %% [markdown]
# [en]
# ## Nothing for the weight
# `backward(inputs=...)` fills `.grad` of the listed leaves only. The backward computed and
# accumulated the gradient of the bias and of nothing else:
# `micro_model.weight.grad` is still None (the optimizer's `zero_grad()` above set it so)
# while `bias.grad` is filled. Useful when only part of a model should learn from a loss.
# [zh]
# ## 权重什么也没得到
# 这次反向传播只计算并累加了偏置的梯度，其他的一概不管：`micro_model.weight.grad` 仍是 None
# （上面优化器的 `zero_grad()` 把它设成了 None），而 `bias.grad` 有了值。
# 当一个损失只应该训练模型的一部分时，这很有用。

# %%
print("weight.grad:", micro_model.weight.grad, "| bias.grad:", micro_model.bias.grad)

# %% [markdown]
# [en]
# ## Two losses that share a graph
# `loss_a` and `loss_b` both start from `features`, so the `TanhBackward0` node (and
# what lies behind it) belongs to both graphs; look at the graph panel after `loss_b`.
#
# - `loss_a.backward()` frees what `TanhBackward0` saved, so a plain `loss_b.backward()`
#   after it fails, as in lesson 9 (the `try` prints the error).
# - `loss_a.backward(retain_graph=True)` then `loss_b.backward()` works, and `w.grad`
#   holds the sum of both gradients: `one_after_the_other`.
# - `(loss_a + loss_b).backward()` goes through the shared part once and gives the same
#   gradient, `summed`, in one pass and without keeping the graph.
# - `create_graph=True` keeps the graph too (`retain_graph` defaults to the value of
#   `create_graph`): a graph of the backward pass needs the saved tensors. Before
#   `loss_a.backward(create_graph=True)` runs, GradStep asks whether `w.grad` will
#   require grad.
# [zh]
# ## 共用一张计算图的两个损失
# `loss_a` 和 `loss_b` 都从 `features` 出发，所以 `TanhBackward0` 节点（以及它后面的部分）
# 同时属于两张图；算出 `loss_b` 之后看看计算图面板。
#
# - `loss_a.backward()` 释放了 `TanhBackward0` 保存的张量，
#   所以紧接着普通地调用 `loss_b.backward()` 会失败，和第 9 课一样（`try` 会打印报错）。
# - 先 `loss_a.backward(retain_graph=True)` 再 `loss_b.backward()` 就能成功，
#   `w.grad` 中是两个梯度之和：`one_after_the_other`。
# - `(loss_a + loss_b).backward()` 只经过共用部分一次，就得到同样的梯度 `summed`，
#   而且不必保留计算图。
# - `create_graph=True` 同样会保留计算图（`retain_graph` 的默认值就是 `create_graph` 的值）：
#   为反向传播本身构建的计算图需要那些保存的张量。
#   在 `loss_a.backward(create_graph=True)` 运行之前，GradStep 会问你 `w.grad` 是否需要梯度。

# %%
w = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)
features = torch.tanh(inputs @ w)
loss_a = features.mean()
loss_b = (features**2).mean()
loss_a.backward()
try:
    loss_b.backward()
except RuntimeError as err:
    print("second loss without retain_graph:", str(err).split(" (")[0])

w.grad = None
features = torch.tanh(inputs @ w)
loss_a, loss_b = features.mean(), (features**2).mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
one_after_the_other = w.grad.clone()

w.grad = None
features = torch.tanh(inputs @ w)
(features.mean() + (features**2).mean()).backward()
summed = w.grad.clone()
print("one after the other:", one_after_the_other, "| summed:", summed)
print("same gradients:", torch.allclose(one_after_the_other, summed))

w.grad = None
features = torch.tanh(inputs @ w)
loss_a, loss_b = features.mean(), (features**2).mean()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    loss_a.backward(create_graph=True)  # predict: w.grad.requires_grad | True | False

# %% [markdown]
# [en]
# ## A gradient with a graph of its own
# With `create_graph=True` the backward pass is recorded like any other computation: the
# `.grad` column of `w` shows a `grad_fn`, and `w.grad` requires grad, so it could be
# differentiated again. `loss_b.backward()` after it works, since the graph was kept.
# PyTorch warns that `w` and its `.grad` now hold on to each other; the lesson prints the
# first sentence. To build on a gradient, `torch.autograd.grad(..., create_graph=True)`
# is the better call (lesson 16).
# [zh]
# ## 自带计算图的梯度
# 带上 `create_graph=True`，反向传播就像其他计算一样被记录下来：`w` 的 `.grad` 列显示出 `grad_fn`，
# `w.grad` 需要梯度，因此还可以再求一次导。之后的 `loss_b.backward()` 能成功，因为计算图保留了下来。
# PyTorch 会警告 `w` 与它的 `.grad` 互相引用；本课打印出警告的第一句。
# 如果要在梯度的基础上继续求导，更好的做法是 `torch.autograd.grad(..., create_graph=True)`（见第 16 课）。

# %%
loss_b.backward()
print("after create_graph=True the second backward worked; w.grad.grad_fn:", w.grad.grad_fn.name().split("::")[-1])
for warning in caught:
    print("PyTorch warned:", str(warning.message).split(" which")[0])
w.grad = None  # breaks the cycle between w and its gradient

# %% [markdown]
# [en]
# ## Try it
# 1. Remove `/ ACCUMULATE` from the first loop: `accumulated_grad` becomes four times
#    `full_grad`, which is what a learning rate four times too large would do.
# 2. Cut the training loop's micro-batches unevenly: where `micro_batches` is made, write
#    `inputs.split([3, 1, 2, 2, 3, 1, 2, 2])` and `targets.split([3, 1, 2, 2, 3, 1, 2, 2])`
#    instead of the two `chunk(8)`. Each optimizer step still sees 8 samples, but the average
#    of four means over 3, 1, 2 and 2 samples is not the mean over 8: `same_weights` turns
#    False.
# [zh]
# ## 动手试试
# 1. 去掉第一个循环里的 `/ ACCUMULATE`：`accumulated_grad` 变成 `full_grad` 的四倍，
#    效果相当于学习率大了四倍。
# 2. 把训练循环的微批次切得大小不等：在生成 `micro_batches` 的那一行，
#    用 `inputs.split([3, 1, 2, 2, 3, 1, 2, 2])` 和 `targets.split([3, 1, 2, 2, 3, 1, 2, 2])`
#    代替两处 `chunk(8)`。每次优化器更新仍然用到 8 个样本，但分别含 3、1、2、2 个样本的
#    四个平均值再取平均，并不等于 8 个样本的平均：`same_weights` 变成 False。
# check: course.after('accumulated_grad = ', 'ACCUMULATE == 4 and torch.allclose(micro_model.weight.grad, 4 * torch.autograd.grad(mse_loss(full_model(inputs[:8]), targets[:8]), full_model.weight)[0])', hidden=True) == [True]
# check: course.before('micro_opt.step()', 'step, [len(mx) for mx, _ in micro_batches]', hidden=True) == [(4, [3, 1, 2, 2, 3, 1, 2, 2]), (8, [3, 1, 2, 2, 3, 1, 2, 2])] and course.after('same_weights = ', 'same_weights or torch.allclose(full_model.weight, micro_model.weight)', hidden=True) == [False]
