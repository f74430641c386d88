"""Lesson 15: model.eval() against torch.no_grad() against torch.inference_mode().

What it teaches: what ``model.eval()`` changes (layers such as Dropout and BatchNorm, or
autograd) and what ``torch.no_grad()`` changes, each tried on a model with both layers; and
why for prediction the two go together, usually as ``model.eval()`` with
``torch.inference_mode()``.
"""

# %% [markdown]
# [en]
# # eval(), no_grad() and inference_mode()
# Three switches that sound alike: which one changes how layers behave, and which what autograd records?
#
# Every `nn.Module` has a `training` flag. A few layers read it: Dropout only drops in
# training mode, BatchNorm normalises with the batch's own statistics and updates its
# running averages only in training mode. `model.eval()` and `model.train()` set that
# flag. Grad mode (lesson 6) is a switch of its own, one per thread. Does either kind of switch
# touch the other's job? The lesson asks before it tells.
# [zh]
# # eval()、no_grad() 与 inference_mode()
# 三个听起来相似的开关：哪个改变层的行为，哪个改变自动求导记录什么？
#
# 每个 `nn.Module` 都有一个 `training` 标志，只有少数层会读它：Dropout 只在训练模式下丢弃元素；
# BatchNorm 只在训练模式下用当前批量的统计量做归一化，并更新它的滑动统计量。
# `model.eval()` 和 `model.train()` 设置的就是这个标志。梯度模式（见第 6 课）是另一个开关，每个线程各有一个。
# 一种开关会不会插手另一种开关管的事？本课先提问，再揭晓答案。

# %%
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(p=0.5), nn.Linear(8, 1))
norm = model[1]
batch = torch.randn(16, 4)

# %% [markdown]
# [en]
# ## Training mode: Dropout drops, BatchNorm counts
# A new module starts in training mode: the `training` field of `model` in the Variables
# view is True.
#
# - `nn.Dropout(p=0.5)` on eight ones: about half become 0 and the others 2. The survivors
#   are scaled by 1 / (1 - p) so that the expected value stays 1.
# - `first` and `second` come from the same model on the same batch. Before `same_twice`
#   is set, GradStep asks whether the two outputs are equal.
# [zh]
# ## 训练模式：Dropout 丢弃元素，BatchNorm 累计统计
# 新建的模块处于训练模式：变量视图中 `model` 的 `training` 字段为 True。
#
# - 对八个 1 做 `nn.Dropout(p=0.5)`：大约一半变成 0，其余变成 2。
#   保留下来的元素乘以 1 / (1 - p)，使期望值仍为 1。
# - `first` 和 `second` 是同一个模型在同一个批量上的输出。在给 `same_twice` 赋值之前，
#   GradStep 会问你这两个输出是否相等。

# %%
print("dropout in training mode:", nn.Dropout(p=0.5)(torch.ones(8)))
first = model(batch)
second = model(batch)
same_twice = torch.equal(first, second)  # predict: same_twice | True | False

# %% [markdown]
# [en]
# ## A new mask on every call
# - `same_twice` is False: Dropout draws a new random mask on every call, so one batch gives
#   a different output each time.
# - `norm.num_batches_tracked` counts the batches BatchNorm has folded into its running
#   mean and variance: 2 after the two calls.
# [zh]
# ## 每次调用都换一个掩码
# - `same_twice` 为 False：Dropout 每次调用都会重新随机生成掩码，所以同一个批量每次的输出都不同。
# - `norm.num_batches_tracked` 记录 BatchNorm 已经计入滑动统计量（均值和方差）的批量数：
#   两次调用之后是 2。

# %%
print("training mode, same output twice:", same_twice)
print("batches BatchNorm has counted:", norm.num_batches_tracked.item())

# %% [markdown]
# [en]
# ## no_grad() and the layers
# Step over the `with torch.no_grad():` block. `quiet` has no `grad_fn` and does not
# require grad, and the graph panel has no new node for it: nothing was recorded. BatchNorm
# had counted 2 batches before the block; GradStep asks how many it has counted after
# `quiet = model(batch)`.
# [zh]
# ## no_grad() 与各层
# 单步执行 `with torch.no_grad():` 块。`quiet` 没有 `grad_fn`，也不需要梯度，
# 计算图面板上也没有为它新增节点：什么都没有记录。进入这个块之前 BatchNorm 计入了 2 个批量；
# GradStep 会问你，`quiet = model(batch)` 之后它计入了多少个。

# %%
mean_before = norm.running_mean.clone()
with torch.no_grad():
    quiet = model(batch)  # predict: norm.num_batches_tracked.item() | 2 | 3

# %% [markdown]
# [en]
# ## no_grad() changes no layer
# The model is still in training mode: Dropout still dropped, and BatchNorm still updates
# its running statistics: it counted the batch (`num_batches_tracked` is now 3) and moved
# its running mean (`mean_moved` is True). "Evaluating" under `no_grad()` alone quietly
# changes the model you evaluate.
# [zh]
# ## no_grad() 不改变任何层
# 模型仍处于训练模式：Dropout 照样丢弃元素，BatchNorm 也计入了这个批量
# （`num_batches_tracked` 变成 3），还改变了滑动统计量中的均值（`mean_moved` 为 True）。
# 只用 `no_grad()` 做“评估”，会悄悄改动被评估的模型。

# %%
mean_moved = not torch.equal(norm.running_mean, mean_before)
print("under no_grad: requires_grad =", quiet.requires_grad, "| grad_fn =", quiet.grad_fn)
print("batches counted:", norm.num_batches_tracked.item(), "| running mean moved:", mean_moved)

# %% [markdown]
# [en]
# ## What eval() changes
# Step over `model.eval()`: `training` turns False for `model` and for each of its layers
# (eval() works through every submodule). Then `evaluated = model(batch)` runs the model
# in evaluation mode; before it does, GradStep asks whether `evaluated` requires grad.
# [zh]
# ## eval() 改变了什么
# 单步执行 `model.eval()`：`model` 及其每一层的 `training` 都变成 False（eval() 会作用到所有子模块）。
# 接着 `evaluated = model(batch)` 在评估模式下运行模型；运行之前，
# GradStep 会问你 `evaluated` 是否需要梯度。

# %%
model.eval()
print("model.training:", model.training, "| BatchNorm:", norm.training, "| Dropout:", model[3].training)
evaluated = model(batch)  # predict: evaluated.requires_grad | True | False

# %% [markdown]
# [en]
# ## eval() changes the layers, not autograd
# - The output still requires grad: `evaluated` has a `grad_fn`, and the graph panel shows the
#   `AddmmBackward0` of the last Linear and the nodes behind it. `eval()` is not a way to
#   save memory.
# - Dropout now passes values through and BatchNorm uses its running statistics without
#   updating them, so the output is the same every time (`repeatable` is True) and
#   `num_batches_tracked` stays at 3.
# - `backward()` works in evaluation mode: look at the `.grad` column of the first
#   Linear's weight (expand `model`). That is how a gradient with respect to the input of
#   a frozen model is taken, for example.
# - A batch of one sample works too. In training mode BatchNorm would refuse it with
#   "Expected more than 1 value per channel when training": one sample has no variance.
# [zh]
# ## eval() 改变的是层，而不是自动求导
# - `evaluated` 仍然需要梯度，也有 `grad_fn`：
#   计算图面板上是最后一个 Linear 的 `AddmmBackward0` 以及它后面的节点。`eval()` 并不能节省内存。
# - Dropout 现在原样传递数值，BatchNorm 使用滑动统计量而不再更新它，
#   所以每次输出都相同（`repeatable` 为 True），`num_batches_tracked` 仍是 3。
# - 评估模式下 `backward()` 照常可用：展开 `model`，看第一个 Linear 的权重的 `.grad` 列。
#   例如，对冻结的模型求关于输入的梯度，就是这样做的。
# - 只有一个样本的批量也能运行。在训练模式下，BatchNorm 会报错
#   “Expected more than 1 value per channel when training”，因为一个样本算不出方差。

# %%
repeatable = torch.equal(evaluated, model(batch))
print("eval output requires_grad:", evaluated.requires_grad, "| grad_fn:", evaluated.grad_fn.name())
print("same output twice:", repeatable, "| batches counted:", norm.num_batches_tracked.item())
evaluated.sum().backward()
print("backward in eval mode filled weight.grad:", model[0].weight.grad is not None)
single = model(batch[:1])
print("one sample in eval mode, output shape:", tuple(single.shape))

# %% [markdown]
# [en]
# ## For prediction: eval() and inference mode together
# `eval()` picks the layers' behaviour, `inference_mode()` (or `no_grad()`) turns recording
# off: prediction code wants both. `prediction` has the same values as `evaluated`, but
# it does not require grad and is an inference tensor (lesson 6).
#
# | | Dropout, BatchNorm | records a graph | the output |
# |---|---|---|---|
# | `model.train()` (the default) | training behaviour | yes | requires grad |
# | `model.eval()` | evaluation behaviour | yes | requires grad |
# | `torch.no_grad()` | unchanged | no | a plain tensor |
# | `torch.inference_mode()` | unchanged | no | an inference tensor |
# [zh]
# ## 用于预测：eval() 与推理模式一起用
# `eval()` 决定层的行为，`inference_mode()`（或 `no_grad()`）关闭记录：预测代码两者都需要。
# `prediction` 的数值与 `evaluated` 相同，但它不需要梯度，而且是推理张量（见第 6 课）。
#
# | | Dropout、BatchNorm | 是否记录计算图 | 输出 |
# |---|---|---|---|
# | `model.train()`（默认） | 训练时的行为 | 是 | 需要梯度 |
# | `model.eval()` | 评估时的行为 | 是 | 需要梯度 |
# | `torch.no_grad()` | 不变 | 否 | 普通张量 |
# | `torch.inference_mode()` | 不变 | 否 | 推理张量 |

# %%
with torch.inference_mode():
    prediction = model(batch)
print("inference_mode: requires_grad =", prediction.requires_grad, "| is_inference =", prediction.is_inference())
print("same values as the eval output:", torch.equal(prediction, evaluated))
model.train()
print("model.train() switches back:", model.training)

# %% [markdown]
# [en]
# ## Try it
# 1. Make the `no_grad()` section a real evaluation: put `model.eval()` just before
#    `with torch.no_grad():`. BatchNorm then uses its running statistics without updating
#    them: `mean_moved` turns False and the count stays at 2.
# 2. Predict under `torch.no_grad()` instead of `torch.inference_mode()` in the last cell:
#    `prediction` still does not require grad, but `prediction.is_inference()` turns False.
#    It is a plain tensor, which later code may use in autograd like any other.
# [zh]
# ## 动手试试
# 1. 让 `no_grad()` 那一节成为真正的评估：在 `with torch.no_grad():` 之前加上 `model.eval()`。
#    这样 BatchNorm 使用滑动统计量而不更新它：`mean_moved` 变成 False，计数停在 2。
# 2. 在最后一个单元里用 `torch.no_grad()` 代替 `torch.inference_mode()` 来预测：
#    `prediction` 仍然不需要梯度，但 `prediction.is_inference()` 变成 False。
#    它是一个普通张量，之后的代码可以像使用其他张量一样把它用在自动求导里。
# check: course.before('quiet = model(batch)', 'model.training or torch.is_grad_enabled()', hidden=True) == [False] and course.after('quiet = model(batch)', 'norm.num_batches_tracked.item() == 2 and torch.equal(norm.running_mean, mean_before)', hidden=True) == [True] and course.after('evaluated = model(batch)', 'torch.equal(quiet, evaluated)', hidden=True) == [True]
# check: course.before('prediction = model(batch)', 'torch.is_grad_enabled() or torch.is_inference_mode_enabled()', hidden=True) == [False] and course.after('prediction = model(batch)', 'prediction.is_inference() or prediction.requires_grad', hidden=True) == [False]
