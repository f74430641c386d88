"""Lesson 9: why a second backward() fails, and what retain_graph=True costs.

What it teaches: nodes keep "saved tensors" needed for their derivative; what happens to
them, and to their memory, at a second backward through the same graph (PyTorch's message
printed), with and without ``retain_graph=True``; and a graph whose nodes saved nothing.
"""

# %% [markdown]
# [en]
# # retain_graph
# Backward frees the tensors the graph saved; retain_graph keeps them, and their memory, for another pass.
#
# To differentiate `exp(x)` autograd needs `exp(x)` itself, and to differentiate `a * b`
# it needs `a` and `b`. Nodes therefore *save* some tensors from the forward pass. As soon
# as `backward()` has used them, it frees them to give the memory back, since a normal
# training step never goes back through the same graph twice.
# [zh]
# # retain_graph
# backward 会释放计算图保存的张量；retain_graph 则把它们连同所占内存一起保留下来，供下一次使用。
#
# 要对 `exp(x)` 求导，自动求导需要 `exp(x)` 本身；要对 `a * b` 求导，需要 `a` 和 `b`。
# 因此节点会在前向计算时*保存*一些张量。`backward()` 一用完它们就立即释放，把内存还回去，
# 因为正常的训练步骤不会两次经过同一张图。

# %%
import torch

from course import SavedTensors

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)

# %% [markdown]
# [en]
# ## The second backward fails
# - Before `loss.backward()`, look at the printed `y.grad_fn._saved_result`: `ExpBackward0`
#   holds on to its own output, the tensor it needs to compute the gradient.
# - Step over `loss.backward()` (GradStep asks first whether `y.grad_fn` is gone after it),
#   then over the first `try`: reading the saved tensor now raises, because backward freed
#   it.
# - Step over the second `try`: `loss.backward()` a second time fails with "Trying to
#   backward through the graph a second time". The message itself suggests `retain_graph=True`.
# [zh]
# ## 第二次 backward 失败
# - 在 `loss.backward()` 之前，查看打印出的 `y.grad_fn._saved_result`：
#   `ExpBackward0` 保留了自己的输出，这正是它计算梯度时需要的张量。
# - 单步执行 `loss.backward()`（GradStep 会先问你：执行之后 `y.grad_fn` 是否没有了？），
#   再执行第一个 `try`：此时读取保存的张量会报错，因为 backward 已经把它释放了。
# - 单步执行第二个 `try`：再次调用 `loss.backward()` 会失败，提示
#   “Trying to backward through the graph a second time”。报错信息本身就建议使用 `retain_graph=True`。

# %%
y = torch.exp(x)
loss = y.sum()
print("saved before backward:", y.grad_fn._saved_result)
loss.backward()  # predict: y.grad_fn is None | True | False
try:
    print(y.grad_fn._saved_result)
except RuntimeError as err:
    print("saved tensor after backward:", str(err).split(".")[0])
try:
    loss.backward()
except RuntimeError as err:
    print("second backward:", err)

# %% [markdown]
# [en]
# ## retain_graph=True
# Step over `loss.backward(retain_graph=True)` and then the plain `loss.backward()` after
# it: both work. `x.grad` is now twice exp(x), since the two passes accumulate (lesson 7).
# The last call has no `retain_graph`, so it frees the graph as usual.
#
# "Frees the graph" means what its nodes saved, not the nodes: after the first cell's
# `loss.backward()`, `y.grad_fn` was still there, and the error spoke of saved tensors.
# [zh]
# ## retain_graph=True
# 单步执行 `loss.backward(retain_graph=True)`，再执行其后的普通 `loss.backward()`：
# 两次都成功。此时 `x.grad` 是 exp(x) 的两倍，因为两次结果会累加（见第 7 课）。
# 最后一次调用没有 `retain_graph`，所以会照常释放计算图。
#
# “释放计算图”指的是释放节点保存的张量，而不是节点本身：
# 第一段代码的 `loss.backward()` 之后，`y.grad_fn` 仍然存在，报错说的也是保存的张量。

# %%
x.grad = None
y = torch.exp(x)
loss = y.sum()
loss.backward(retain_graph=True)
loss.backward()
print("x.grad:", x.grad, "| 2 * exp(x):", 2 * torch.exp(x.detach()))

# %% [markdown]
# [en]
# ## The memory cost
# `saved_tensors_hooks` lets us watch every tensor the graph saves: `SavedTensors` in
# `course.py`, the helper module beside the lessons, notes each one and measures those still
# alive (F11 does not step inside it). `big` has half a
# million float32 entries (2 MB). `exp`, `sin` and `tanh` each save a tensor of that size;
# the output of `exp` is also the input `sin` saves, and the meter counts it once.
#
# - GradStep asks what `saved_megabytes()` reports after `deep.backward(retain_graph=True)`,
#   and again after the final `deep.backward()`.
# [zh]
# ## 内存代价
# `saved_tensors_hooks` 让我们能看到计算图保存的每一个张量：
# 课程辅助模块 `course.py` 中的 `SavedTensors` 记下每一个，并统计其中仍然存活的（按 F11 也不会单步进入它）。
# `big` 有五十万个 float32 元素（2 MB）。`exp`、`sin` 和 `tanh` 各保存一个同样大小的张量；
# `exp` 的输出恰好就是 `sin` 保存的输入，统计时只算一次。
#
# - GradStep 会问你：`deep.backward(retain_graph=True)` 之后，`saved_megabytes()` 报告多少？
#   最后一次 `deep.backward()` 之后又是多少？

# %%
saved = SavedTensors()
saved_megabytes = saved.megabytes

big = torch.randn(500, 1000, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(saved.pack, saved.unpack):
    deep = big.exp().sin().tanh().sum()
print(f"saved by the graph: {saved_megabytes():.1f} MB")
deep.backward(retain_graph=True)  # predict: saved_megabytes() | 0.0 | 2.0 | 4.0
print(f"after backward(retain_graph=True): {saved_megabytes():.1f} MB")
deep.backward()  # predict: saved_megabytes() | 0.0 | 2.0 | 4.0
print(f"after a plain backward: {saved_megabytes():.1f} MB")

# %% [markdown]
# [en]
# ## What retaining costs
# 4 MB after `backward(retain_graph=True)`, 0 after the plain one: a retained graph keeps
# its saved tensors, and their memory, alive as long as `deep` exists; a plain backward
# frees them. In a training loop, retaining the graph every step would hold on to every
# batch's activations.
#
# ## When a second backward works anyway
# Adding a constant or summing needs no saved tensors: the derivative of `x + 1` is 1
# whatever `x` is. Step over the two `simple.backward()` calls: both succeed, with no
# `retain_graph`; GradStep asks what `x.grad` holds after the second. Do not rely on this:
# multiplying by 2 already saves a tensor, the 2 itself as a 0-d tensor (try it).
# [zh]
# ## 保留计算图的代价
# `backward(retain_graph=True)` 之后是 4 MB，普通的 backward 之后是 0：只要 `deep` 还在，
# 被保留的计算图就一直保留着它保存的张量和这块内存；普通的 backward 则会释放它们。
# 如果训练循环每一步都保留计算图，每个批量的中间结果都会一直占着内存。
#
# ## 第二次 backward 也能成功的情况
# 加一个常数或者求和都不需要保存张量：无论 `x` 是多少，`x + 1` 的导数都是 1。
# 单步执行两次 `simple.backward()`：都能成功，并不需要 `retain_graph`；
# GradStep 会问你第二次之后 `x.grad` 是什么。
# 但别依赖这一点：只要乘以 2 就已经会保存张量了，保存的是作为 0 维张量的 2 本身（动手试试）。

# %%
x.grad = None
simple = (x + 1).sum()
simple.backward()
simple.backward()  # predict: x.grad | tensor([1., 1., 1.]) | tensor([2., 2., 2.])
print("two passes without retain_graph, x.grad:", x.grad)

# %% [markdown]
# [en]
# ## Try it
# 1. Change `simple = (x + 1).sum()` to `(x * 2).sum()`: the second backward now fails.
#    Give the first `simple.backward()` `retain_graph=True` and both passes work again:
#    `x.grad` ends up 4 everywhere.
# 2. Give the final `deep.backward()` `retain_graph=True` too: once the lesson has ended,
#    `saved_megabytes()` still reports 4 MB, because `deep` and its graph still exist.
# [zh]
# ## 动手试试
# 1. 把 `simple = (x + 1).sum()` 改成 `(x * 2).sum()`：第二次 backward 就会失败。
#    给第一次 `simple.backward()` 加上 `retain_graph=True`，两次就又都能成功了：
#    `x.grad` 最终处处为 4。
# 2. 给最后一次 `deep.backward()` 也加上 `retain_graph=True`：课程结束之后，
#    `saved_megabytes()` 仍然报告 4 MB，因为 `deep` 和它的计算图都还在。
# check: course.after('simple.backward(', 'x.grad.tolist()') == [[2.0] * 3, [4.0] * 3] and (lambda nodes: len(nodes) == 2 and nodes[0] is nodes[1] and nodes[0].next_functions[0][0].name() == 'MulBackward0')(course.before('simple.backward(', 'simple.grad_fn'))
# check: course.after('deep.backward(', 'round(saved_megabytes())') == [4, 4] and course.after('deep.backward(', 'big.grad.grad_fn is None and round((big.grad.norm() / torch.autograd.grad(deep, big, retain_graph=True)[0].norm()).item())') == [1, 2]
