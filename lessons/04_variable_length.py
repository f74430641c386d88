"""Lesson 4: batching sequences of different lengths with padding, masks and packing.

What it teaches: ``pad_sequence`` to make one rectangular batch; a boolean mask that marks
the real time steps; ``pack_padded_sequence`` -> ``nn.GRU`` -> ``pad_packed_sequence``;
what ``batch_sizes`` in a ``PackedSequence`` means; and what packing does with the padding,
in the final states and in the gradients.
"""

# %% [markdown]
# [en]
# # Variable-length sequences
# Pad sequences into one batch, mark the real steps with a mask, and pack them so the RNN skips the padding.
#
# Sentences, audio clips and sensor logs rarely have the same length. A batch must be a
# rectangle, so shorter sequences are filled up with padding. The dynamic graph does not
# mind different lengths, but the *model* must be told which steps are real.
# [zh]
# # 变长序列
# 把序列填充成一个批量，用掩码标出真实的时间步，再打包，让 RNN 跳过填充部分。
#
# 句子、音频片段、传感器日志的长度很少一致。一个批量必须是规整的矩形，所以较短的序列
# 要用填充值补齐。动态图并不在乎长度不同，但*模型*需要知道哪些时间步是真实的。

# %%
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
FEATURES, HIDDEN = 3, 4

sequences = [torch.randn(4, FEATURES), torch.randn(2, FEATURES), torch.randn(5, FEATURES)]
lengths = torch.tensor([len(seq) for seq in sequences])

# %% [markdown]
# [en]
# ## Padding and the mask
# - Step over `padded = pad_sequence(...)` and look at its shape (GradStep asks for it
#   first): (batch, longest length, features), in that order because of `batch_first=True`.
#   Row 1 had only two steps; the rest of its row is zeros.
# - `mask` is True at real steps and False at padding. `masked_mean` uses it so the
#   padding zeros do not pull the average toward 0; compare it with `padded.mean(dim=1)`.
# [zh]
# ## 填充与掩码
# - 单步执行 `padded = pad_sequence(...)`，查看它的形状（GradStep 会先问你）：
#   因为 `batch_first=True`，三个维度依次是（批量大小，最长长度，特征数）。
#   第 1 行原本只有两步，其余部分都是零。
# - `mask` 在真实时间步为 True，在填充处为 False。`masked_mean` 借助它，使填充的零不会
#   把平均值拉向 0；把它和 `padded.mean(dim=1)` 比较一下。

# %%
padded = pad_sequence(sequences, batch_first=True, padding_value=0.0).requires_grad_()  # predict: padded.shape
mask = torch.arange(padded.size(1))[None, :] < lengths[:, None]
print("padded shape:", tuple(padded.shape))
print("mask:\n", mask)

masked_mean = (padded * mask[..., None]).sum(dim=1) / lengths[:, None]
naive_mean = padded.mean(dim=1)
print("row 1, masked mean:", masked_mean[1])
print("row 1, naive mean: ", naive_mean[1])

# %% [markdown]
# [en]
# ## Packing and batch_sizes
# `pack_padded_sequence` stores only the real steps, laid out time step by time step.
# `enforce_sorted=False` lets it sort the batch by length itself (and undo that later).
#
# - `packed.batch_sizes` says, for each time step, how many sequences are still running
#   then: the number of rows the GRU processes at that step. GradStep asks for the list
#   before `packed = ...` runs; the lengths are 4, 2 and 5.
# - `packed.data` has one row per real step, 4 + 2 + 5 = 11; no padding is stored.
# [zh]
# ## 打包与 batch_sizes
# `pack_padded_sequence` 只保存真实的时间步，并按时间步依次排列。
# `enforce_sorted=False` 让它自己按长度给批量排序（之后再还原顺序）。
#
# - `packed.batch_sizes` 给出每个时间步还有几条序列没有结束，
#   也就是 GRU 在这一步要处理的行数。在 `packed = ...` 执行之前，GradStep 会问你这个列表；
#   三条序列的长度分别是 4、2 和 5。
# - `packed.data` 每个真实时间步一行，共 4 + 2 + 5 = 11 行，没有存任何填充。

# %%
packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)  # predict: packed.batch_sizes
print("batch_sizes:", packed.batch_sizes.tolist())
print("packed.data rows:", packed.data.shape[0])

gru = nn.GRU(FEATURES, HIDDEN, batch_first=True)
packed_out, h_n = gru(packed)
out, out_lengths = pad_packed_sequence(packed_out, batch_first=True)
print("unpacked output shape:", tuple(out.shape), "lengths:", out_lengths.tolist())

# %% [markdown]
# [en]
# ## The packed output and its gradient
# - `h_n` holds each sequence's state after its *own* last real step:
#   `last_real` picks `out[i, length_i - 1]` and the comparison prints True.
# - Running the GRU on `padded` directly (`h_unpacked`) feeds the zeros through the cell
#   too, so the final state of the two shorter sequences is different: it has been
#   pushed around by padding.
# - After `out.sum().backward()`, look at `padded.grad[1]`: the two real steps have a
#   gradient. GradStep asks first whether any of the three padded steps gets one.
# [zh]
# ## 打包后的输出及其梯度
# - `h_n` 保存的是每条序列在*自己*最后一个真实时间步之后的状态：
#   `last_real` 取出 `out[i, length_i - 1]`，比较结果打印为 True。
# - 直接把 `padded` 送进 GRU（得到 `h_unpacked`）时，填充的零也会经过循环单元，
#   于是两条较短序列的最终状态不同了：它们被填充值带偏了。
# - `out.sum().backward()` 之后查看 `padded.grad[1]`：两个真实时间步有梯度。
#   GradStep 会先问你：三个填充时间步中有没有得到梯度的？

# %%
last_real = out[torch.arange(len(sequences)), lengths - 1]
print("h_n equals the output at each last real step:", torch.allclose(last_real, h_n[0]))

_, h_unpacked = gru(padded)
print("final state changed by padding:", (h_unpacked[0] - h_n[0]).abs().sum(dim=1))

out.sum().backward()  # predict: bool(padded.grad[1, 2:].any()) | True | False

# %% [markdown]
# [en]
# ## Why packing skips the padding
# The padded steps of row 1 got no gradient at all (no gradient reaches the pads): the
# packed sequence never fed them to the GRU, so the graph has no path from `out` back to
# them. `pad_packed_sequence` filled `out` there with zeros that depend on nothing.
# [zh]
# ## 为什么打包能跳过填充
# 第 1 行的填充时间步完全没有得到梯度：打包后的序列从来没有把它们送进 GRU，
# 所以计算图里没有从 `out` 回到它们的路径。`pad_packed_sequence` 在那些位置填的零不依赖任何东西。

# %%
print("gradient per step of sequence 1:", padded.grad[1].abs().sum(dim=1))

# %% [markdown]
# [en]
# ## Try it
# 1. Make all three sequences length 5: `batch_sizes` becomes `[3, 3, 3, 3, 3]` and the
#    packed and unpacked final states agree.
# 2. Replace `nn.GRU` with `nn.LSTM`. An LSTM also carries a cell state, so where the GRU
#    returned `h_n` it returns the pair `(h_n, c_n)`: unpack it in the two calls, as
#    `packed_out, (h_n, c_n) = gru(packed)` and `_, (h_unpacked, _) = gru(padded)`.
# [zh]
# ## 动手试试
# 1. 让三条序列的长度都为 5：`batch_sizes` 变成 `[3, 3, 3, 3, 3]`，打包与不打包得到的
#    最终状态一致。
# 2. 把 `nn.GRU` 换成 `nn.LSTM`。LSTM 还带着一个细胞状态，所以 GRU 返回 `h_n` 的地方，
#    它返回的是 `(h_n, c_n)` 这一对。在两次调用处把它拆开：
#    `packed_out, (h_n, c_n) = gru(packed)`，以及 `_, (h_unpacked, _) = gru(padded)`。
# check: course.after('packed = ', 'packed.batch_sizes.tolist()', hidden=True) == [[3, 3, 3, 3, 3]] and course.after('packed = ', 'lengths.tolist() == [len(s) for s in sequences] and all(s.abs().sum(1).all() for s in sequences)', hidden=True) == [True] and course.after('_, ', 'torch.allclose(h_unpacked, h_n)', hidden=True) == [True]
# check: course.after('packed_out, ', 'isinstance(gru, nn.LSTM) and c_n.shape == h_n.shape', hidden=True) == [True] and course.after('last_real = ', 'torch.allclose(out[torch.arange(len(sequences)), lengths - 1], h_n[0])', hidden=True) == [True] and course.after('_, ', 'torch.is_tensor(h_unpacked) and h_unpacked.shape == h_n.shape', hidden=True) == [True]
