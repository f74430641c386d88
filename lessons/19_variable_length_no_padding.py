"""Lesson 19: sequences of different lengths without padding, and breakpoint() beside GradStep.

What it teaches: the article's own point about dynamic graphs, that a plain Python loop over
sequences of different lengths builds, for each one, a graph exactly as long as the sequence
(the nodes are counted per sequence), so no padding is needed; the same batch run at once
with ``pack_padded_sequence`` and ``nn.RNN``, beside the loop; and what the article's
``breakpoint()`` / ``pdb`` session shows, next to what GradStep adds (the graph, every
tensor's grad state, stepping back).
"""

# %% [markdown]
# [en]
# # Variable length without padding
# A loop builds a graph as long as each sequence; packing does it for a whole batch; pdb next to GradStep.
#
# With a static graph, every input must fit one shape decided in advance, so short
# sequences are padded to the longest. A dynamic graph is recorded while the code runs:
# loop over the real steps of each sequence, and the graph has exactly that many steps.
# Lesson 4 padded and packed a batch; here we start with no padding at all.
# [zh]
# # 不用填充的变长序列
# 循环为每条序列构建与它等长的计算图；打包对整个批量做同样的事；再把 pdb 与 GradStep 对比一下。
#
# 使用静态图时，所有输入都要符合事先定好的形状，所以短序列要填充到最长序列的长度。
# 动态图是在代码运行时记录下来的：对每条序列的真实时间步做循环，计算图就正好有那么多步。
# 第 4 课对一个批量做了填充和打包；这里我们从完全不填充开始。

# %%
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from course import count_nodes

torch.manual_seed(0)
USE_PDB = False  # True stops in pdb after each sequence: run it in a terminal, never in a test

w_x = torch.tensor(0.8, requires_grad=True)
w_h = torch.tensor(-0.5, requires_grad=True)
sequences = [torch.randn(2), torch.randn(5), torch.randn(3)]

# %% [markdown]
# [en]
# ## One loop, one graph per sequence, each its own length
# The cell is a one-number RNN: h = tanh(w_x * x_t + w_h * h), starting from h = 0. The
# three sequences have 2, 5 and 3 steps.
#
# - Step over the `h = torch.tanh(...)` line a few times: each pass adds the nodes of one
#   time step to the graph panel, four of them (two `MulBackward0`, `AddBackward0`,
#   `TanhBackward0`).
# - At the end of each sequence the lesson prints how many nodes lie behind its final `h`
#   (`count_nodes` in `course.py`, the helper module beside the lessons, walks the graph
#   back from `h.grad_fn`; F11 does not step inside it). Before the first sequence's
#   count is printed, GradStep asks for it.
# [zh]
# ## 一个循环，每条序列一张计算图，长度各不相同
# 这个单元是只有一个数的 RNN：h = tanh(w_x * x_t + w_h * h)，从 h = 0 开始。
# 三条序列分别有 2、5、3 步。
#
# - 反复单步执行 `h = torch.tanh(...)` 这一行：每执行一次，计算图面板上就多出一个时间步的节点，
#   共四个（两个 `MulBackward0`、`AddBackward0`、`TanhBackward0`）。
# - 每条序列结束时，本课打印它最后的 `h` 后面有多少个节点
#   （`course.py` 这个课程辅助模块中的 `count_nodes` 从 `h.grad_fn` 出发反向遍历计算图，
#   按 F11 也不会单步进入它）。
#   在打印第一条序列的节点数之前，GradStep 会先问你这个数。

# %%
finals = []
for seq in sequences:
    h = torch.zeros(())
    for x_t in seq:
        h = torch.tanh(w_x * x_t + w_h * h)
    if USE_PDB:
        breakpoint()  # pdb stops at the next line
    finals.append(h)
    print(f"length {len(seq)}: {count_nodes(h)} nodes behind the final h")  # predict: count_nodes(h) | 8 | 10 | 22

# %% [markdown]
# [en]
# ## As long as the data
# The counts are 10 for the 2 steps of the first sequence, 22 for 5 steps, 14 for 3. That
# is 4 per step plus the two `AccumulateGrad` nodes of `w_x` and `w_h`: the graph is as
# long as the data, and no step is padding.
#
# `finals` keeps every sequence's last `h`, each with its own graph. `total.backward()`
# goes through all three: `w_x.grad` sums what the 10 real steps contributed.
# [zh]
# ## 与数据一样长
# 节点数分别是：第一条 2 步，10 个；5 步的 22 个；3 步的 14 个。
# 也就是每步 4 个，再加上 `w_x` 和 `w_h` 各自的 `AccumulateGrad` 节点：
# 计算图与数据一样长，没有一步是填充。
#
# `finals` 保存每条序列最后的 `h`，各自带着自己的计算图。
# `total.backward()` 会经过全部三张图：`w_x.grad` 是 10 个真实时间步的贡献之和。

# %%
total = sum(finals)
total.backward()
print("w_x.grad:", w_x.grad.item(), "| w_h.grad:", w_h.grad.item())

# %% [markdown]
# [en]
# ## The same batch at once: pack_padded_sequence and nn.RNN
# A loop per sequence is simple but runs one sequence at a time. To batch them, pad them
# into one tensor and *pack* it, so the RNN still runs only the real steps (lesson 4).
# `nn.RNN(1, 1, bias=False)` with `w_x` and `w_h` copied in is the same cell.
#
# - `packed.batch_sizes` is [3, 3, 2, 1, 1]: three sequences are running at steps 0 and 1,
#   two at step 2, and only the longest at steps 3 and 4.
# - `rnn(packed)` returns the outputs and `h_n`, the final hidden states. Before that line
#   runs, GradStep asks for the shape of `h_n`; before the next, whether `h_n` holds the
#   same states as `finals` from the loop (`same_states`).
# [zh]
# ## 一次处理整个批量：pack_padded_sequence 与 nn.RNN
# 每条序列一个循环虽然简单，但一次只能处理一条序列。要组成批量，就把它们填充成一个张量再*打包*，
# 这样 RNN 仍然只运行真实的时间步（见第 4 课）。
# 拷入了 `w_x` 和 `w_h` 的 `nn.RNN(1, 1, bias=False)` 就是同一个单元。
#
# - `packed.batch_sizes` 是 [3, 3, 2, 1, 1]：第 0、1 步三条序列都在运行，
#   第 2 步剩两条，第 3、4 步只剩最长的那一条。
# - `rnn(packed)` 返回各步的输出和最终隐藏状态 `h_n`。在这一行运行之前，
#   GradStep 会问你 `h_n` 的形状；在下一行之前，
#   会问你 `h_n` 里的状态是否与循环得到的 `finals` 相同（`same_states`）。

# %%
rnn = nn.RNN(1, 1, bias=False, batch_first=True)
with torch.no_grad():
    rnn.weight_ih_l0.fill_(w_x.item())
    rnn.weight_hh_l0.fill_(w_h.item())
lengths = torch.tensor([len(seq) for seq in sequences])
padded = pad_sequence([seq[:, None] for seq in sequences], batch_first=True)
packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
print("batch_sizes:", packed.batch_sizes.tolist())
_, h_n = rnn(packed)  # predict: h_n.shape | [1, 3, 1] | [1, 5, 1] | [3, 5, 1]
same_states = torch.allclose(h_n.flatten(), torch.stack(finals))  # predict: same_states | True | False

# %% [markdown]
# [en]
# ## Each sequence stops at its own end
# `h_n` is 1 x 3 x 1 (layers, sequences, hidden size): one final state per sequence, and
# each is the state after that sequence's own last step, not after step 4 of the padded
# tensor. So it equals `finals` from the loop (`same_states` is True): packing with `nn.RNN`
# gives the same final states as the loop.
#
# After `h_n.sum().backward()`, the RNN's weight gradients equal `w_x.grad` and `w_h.grad`
# (`same_grads`): packing changes how the work is batched, not what is computed.
# [zh]
# ## 每条序列在自己的终点停下
# `h_n` 的形状是 1 x 3 x 1（层数、序列数、隐藏维度）：每条序列一个最终状态，
# 而且是这条序列自己最后一步之后的状态，而不是填充后张量第 4 步之后的状态。
# 所以它与循环得到的 `finals` 相等（`same_states` 为 True）。
#
# `h_n.sum().backward()` 之后，RNN 权重的梯度与 `w_x.grad`、`w_h.grad` 相等（`same_grads`）：
# 打包改变的是如何成批地做计算，而不是算什么。

# %%
h_n.sum().backward()
same_grads = torch.allclose(rnn.weight_ih_l0.grad, w_x.grad) and torch.allclose(rnn.weight_hh_l0.grad, w_h.grad)
print("same final states as the loop:", same_states, "| same gradients:", same_grads)

# %% [markdown]
# [en]
# ## breakpoint() and pdb, the article's debugger
# Because the graph is built by ordinary Python, the article debugs it with Python's own
# debugger: put `breakpoint()` in the code (or `import pdb; pdb.set_trace()`) and run the
# script in a terminal. This lesson has one in the loop above, behind `USE_PDB`. With
# `USE_PDB = True`, a session looks like this:
#
# ```
# > .../19_variable_length_no_padding.py(75)<module>()
# -> finals.append(h)
# (Pdb) p h, h.requires_grad
# (tensor(-0.5760, grad_fn=<TanhBackward0>), True)
# (Pdb) p h.grad_fn.next_functions
# ((<AddBackward0 object at 0x7f...>, 0),)
# (Pdb) p count_nodes(h)
# 10
# (Pdb) c
# ```
#
# pdb shows the line it stopped at and evaluates what you type: `p` prints, `n` and `s`
# go on by one line, `w` shows the stack, `b` sets a breakpoint, `c` continues. You see
# one value at a time, the graph only by walking `next_functions` by hand (as the code
# below does), and you can only go forwards. `PYTHONBREAKPOINT=0 python ...` turns every
# `breakpoint()` into a no-op.
#
# GradStep stops at the same places without editing the code (F9 on a line, with an
# optional condition), and at every pause shows every tensor with its `requires_grad`,
# `is_leaf`, `grad_fn` and `.grad` columns, draws the graph as it grows, and lets you step
# back (Shift+F10) to a pause you have already passed.
# [zh]
# ## breakpoint() 与 pdb：文章里用的调试器
# 因为计算图是由普通的 Python 代码构建的，文章就用 Python 自带的调试器来调试它：
# 在代码里写上 `breakpoint()`（或 `import pdb; pdb.set_trace()`），然后在终端里运行脚本。
# 本课在上面的循环里放了一个，由 `USE_PDB` 控制。设成 `USE_PDB = True` 时，
# 一次调试过程大致如下：
#
# ```
# > .../19_variable_length_no_padding.py(75)<module>()
# -> finals.append(h)
# (Pdb) p h, h.requires_grad
# (tensor(-0.5760, grad_fn=<TanhBackward0>), True)
# (Pdb) p h.grad_fn.next_functions
# ((<AddBackward0 object at 0x7f...>, 0),)
# (Pdb) p count_nodes(h)
# 10
# (Pdb) c
# ```
#
# pdb 显示它停下的那一行，并对你输入的内容求值：`p` 打印，`n` 和 `s` 前进一行，
# `w` 显示调用栈，`b` 设置断点，`c` 继续运行。你一次只能看一个值，
# 计算图只能靠手动遍历 `next_functions` 来查看（就像下面的代码这样），而且只能往前走。
# 用 `PYTHONBREAKPOINT=0 python ...` 运行，所有的 `breakpoint()` 都不起作用。
#
# GradStep 不用改代码就能停在同样的地方（在某一行按 F9，还可以加条件）；
# 每次暂停时都会列出所有张量及其 `requires_grad`、`is_leaf`、`grad_fn` 和 `.grad` 列，
# 随着计算图的生长把它画出来，还能单步后退（Shift+F10），回到已经经过的暂停点。

# %%
node = finals[0].grad_fn
print("walking by hand:", node.name(), "->", [parent.name() for parent, _ in node.next_functions])
node = node.next_functions[0][0]
print("one level further:", node.name(), "->", [parent.name() for parent, _ in node.next_functions])

# %% [markdown]
# [en]
# ## Try it
# 1. Add a fourth sequence, `torch.randn(1)`: its graph has 6 nodes, and `batch_sizes`
#    becomes [4, 3, 2, 1, 1].
# 2. Walk on to a leaf by hand, as you would at a `(Pdb)` prompt: after the last line, add
#    `node = node.next_functions[0][0]` twice. The first takes you to the `MulBackward0`
#    of `w_x * x_t`, the second to an `AccumulateGrad` node whose `node.variable` is `w_x`
#    itself: the node that writes `w_x.grad`. The graph panel shows the same path at once.
# [zh]
# ## 动手试试
# 1. 再加一条序列 `torch.randn(1)`：它的计算图有 6 个节点，`batch_sizes` 变成 [4, 3, 2, 1, 1]。
# 2. 像在 `(Pdb)` 提示符后那样，手动一路走到叶子：
#    在最后一行之后加上两次 `node = node.next_functions[0][0]`。第一次走到 `w_x * x_t` 的 `MulBackward0`，
#    第二次走到一个 `AccumulateGrad` 节点，它的 `node.variable` 就是 `w_x` 本身：
#    正是这个节点写入 `w_x.grad`。计算图面板一眼就能显示同一条路径。
# check: course.after('packed = ', 'packed.batch_sizes.tolist(), lengths.tolist() == [len(s) for s in sequences]') == [([4, 3, 2, 1, 1], True)] and course.after('same_states = ', 'same_states and torch.allclose(h_n.flatten(), torch.stack(finals)) and 6 in [count_nodes(h) for h in finals]') == [True]
# check: course.after('node = ', "node.name().rsplit('::', 1)[-1], getattr(node, 'variable', None) is w_x") == [('TanhBackward0', False), ('AddBackward0', False), ('MulBackward0', False), ('AccumulateGrad', True)]
