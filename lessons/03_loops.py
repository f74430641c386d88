"""Lesson 3: a Python ``for`` loop unrolls into the graph, one piece per iteration.

What it teaches: a hand-written RNN cell ``h = tanh(x_t @ W_xh + h @ W_hh + b)`` run over a
few time steps; the graph grows by the same few nodes on every iteration; one
``backward()`` sends gradients back through every step (backpropagation through time);
and ``nn.RNN`` computes exactly the same thing with the same weights.
"""

# %% [markdown]
# [en]
# # Control flow: loops
# Each pass of a loop adds its own copy of the computation to the graph, and backward walks all of them.
#
# A recurrent network applies the same cell to a sequence, carrying a hidden state `h`
# from one step to the next. Written as a Python loop, every iteration records new nodes
# that use the same weight tensors, so the graph is the loop *unrolled*.
# [zh]
# # 控制流：循环
# 循环每执行一次，就把一份计算追加到图里；反向传播会经过其中的每一份。
#
# 循环神经网络把同一个单元依次作用在序列上，并把隐藏状态 `h` 从一步传到下一步。
# 用 Python 循环来写时，每次迭代都会记录一批新节点，它们共用同样的权重张量，
# 所以这张图就是把循环*展开*之后的样子。

# %%
import torch
from torch import nn

from course import count_nodes

torch.manual_seed(0)
INPUT_SIZE, HIDDEN_SIZE, NUM_STEPS = 3, 4, 5

W_xh = (torch.randn(INPUT_SIZE, HIDDEN_SIZE) * 0.5).requires_grad_()
W_hh = (torch.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 0.5).requires_grad_()
b_h = torch.zeros(HIDDEN_SIZE, requires_grad=True)
inputs = torch.randn(NUM_STEPS, INPUT_SIZE, requires_grad=True)

# %% [markdown]
# [en]
# ## The graph grows by one piece per step
# - Stop at the `h_t = torch.tanh(...)` line and step over it several times. The first
#   time, GradStep asks which node `h_t.grad_fn` will be: the line has two `@`, two `+` and
#   a `tanh`. Each later pass makes a fresh node of the same kind.
# - Before the `nodes = ...` line of step 0, GradStep asks how many nodes `count_nodes(h_t)`
#   finds behind `h_t`. Count every node the walk meets on its way back to the leaves, and
#   use Alt+F11 (below) to see what the line made.
# - `hidden_states` keeps every `h_t`. We call `retain_grad()` on each one so that, after
#   backward, we can see that the gradient reached every step.
# - The count comes from `count_nodes` in `course.py`, the helper module beside the lessons:
#   it follows `next_functions` back from `h_t`, and F11 does not step inside it.
#
# ### Inside the line: one `@` made three nodes
# Press Alt+F11 (Run > Step Into Expression) on the `h_t = torch.tanh(...)` line instead of
# F10: it runs one PyTorch operation at a time. After the first, `x_t @ W_xh` is highlighted,
# its result is the variable `⟨x_t @ W_xh⟩`, and the graph marks in amber the nodes it made:
# `UnsqueezeBackward0`, `MmBackward0` and `SqueezeBackward4`. One `@` made three nodes,
# because a vector @ matrix product is computed as a matrix product of the vector made a
# 1-row matrix (unsqueeze), then squeezed back.
# - Press Alt+F11 again for `h_t @ W_hh`. On the first pass it makes only two nodes:
#   `h_t` is still the zeros we started from, which do not require grad, so autograd records
#   nothing for its unsqueeze. From the second pass on `h_t` requires grad, and this `@`
#   makes three nodes too.
# - Click a node to select the sub-expression that made it; hover a `+` in the code to
#   outline the nodes of that addition. F10 finishes the line.
# [zh]
# ## 图每一步长出一块
# - 停在 `h_t = torch.tanh(...)` 这一行，反复单步执行。
#   第一次执行前，GradStep 会问你 `h_t.grad_fn` 是哪个节点：这一行有两个 `@`、两个 `+` 和一个 `tanh`。之后每一轮都会生成
#   一个同类的新节点。
# - 在第 0 步的 `nodes = ...` 那一行之前，GradStep 会问你 `count_nodes(h_t)` 在 `h_t` 背后
#   找到多少个节点。把遍历回到叶子的路上遇到的每个节点都数上，可以用 Alt+F11（见下文）
#   看这一行生成了什么。
# - `hidden_states` 保存了每一步的 `h_t`。我们对每个 `h_t` 调用 `retain_grad()`，
#   这样反向传播之后就能看到梯度到达了每一步。
# - 节点数由课程目录里的辅助模块 `course.py` 中的 `count_nodes` 算出：
#   它从 `h_t` 出发沿着 `next_functions` 往回数，按 F11 也不会单步进入它。
#
# ### 深入一行之内：一个 `@` 生成了三个节点
# 在 `h_t = torch.tanh(...)` 这一行按 Alt+F11（运行 > 单步进入表达式）而不是 F10：
# 它每次只执行一个 PyTorch 运算。第一个运算之后，`x_t @ W_xh` 被高亮，
# 它的结果显示为变量 `⟨x_t @ W_xh⟩`，图中用琥珀色标出它生成的节点：
# `UnsqueezeBackward0`、`MmBackward0` 和 `SqueezeBackward4`。一个 `@` 生成了三个节点，
# 因为“向量 @ 矩阵”是先把向量变成一行的矩阵（unsqueeze），做矩阵乘法，再压缩回去（squeeze）。
# - 再按一次 Alt+F11 执行 `h_t @ W_hh`。第一次循环时它只生成两个节点：
#   `h_t` 还是一开始的全零张量，不需要梯度，所以自动求导不为它的 unsqueeze 记录任何节点。
#   从第二次循环起 `h_t` 需要梯度，这个 `@` 也会生成三个节点。
# - 点击一个节点，代码中会选中生成它的子表达式；把鼠标移到代码里的 `+` 上，
#   会标出这次加法生成的节点。按 F10 执行完这一行。

# %%
h_t = torch.zeros(HIDDEN_SIZE)
hidden_states = []
for t in range(NUM_STEPS):
    x_t = inputs[t]
    h_t = torch.tanh(x_t @ W_xh + h_t @ W_hh + b_h)  # predict: h_t.grad_fn | AddBackward0 | TanhBackward0 | MmBackward0
    h_t.retain_grad()
    hidden_states.append(h_t)
    nodes = count_nodes(h_t)  # predict: nodes | 9 | 10 | 13
    print(f"step {t}: {h_t.grad_fn.name()}, nodes in graph so far: {nodes}")

# %% [markdown]
# [en]
# ## What the loop built
# - `h_t.grad_fn` was `TanhBackward0` each time: the node of the *last* operation that made
#   `h_t`. Each pass added the same ten nodes: `SelectBackward0` for `inputs[t]`, three for
#   each vector @ matrix product (unsqueeze, `MmBackward0`, squeeze), two `AddBackward0` and
#   one `TanhBackward0`.
# - Step 0 found 13: nine nodes of its own (`h₀`, the zeros we start from, needs no grad, so
#   `h_t @ W_hh` made two) and one `AccumulateGrad` node for each leaf that requires grad
#   (`inputs`, `W_xh`, `W_hh`, `b_h`). Every later step reuses those four, so from step 1 on
#   each step adds exactly ten.
#
# ## Backpropagation through time
# The loss uses only the *last* hidden state. After `loss.backward()`, look at
# `inputs.grad`; GradStep asks first whether row 0, used five steps before the loss, gets
# any gradient at all.
# [zh]
# ## 循环构建了什么
# - 每一次 `h_t.grad_fn` 都是 `TanhBackward0`：生成 `h_t` 的*最后*一个运算的节点。每一轮都
#   增加同样的十个节点：取出 `inputs[t]` 的 `SelectBackward0`，每个“向量 @ 矩阵”乘积三个
#   （unsqueeze、`MmBackward0`、squeeze），两个 `AddBackward0`，以及一个 `TanhBackward0`。
# - 第 0 步数出 13 个：它自己的九个节点（起始的 `h₀` 是全零张量，不需要梯度，
#   所以 `h_t @ W_hh` 只生成两个），加上每个需要梯度的叶子各一个 `AccumulateGrad` 节点（`inputs`、`W_xh`、
#   `W_hh`、`b_h`）。后面的每一步都复用这四个，因此从第 1 步起每步正好增加十个。
#
# ## 通过时间反向传播
# 损失只用到了*最后*一个隐藏状态。`loss.backward()` 之后查看 `inputs.grad`；GradStep 会先问你：
# 第 0 行在计算损失之前五步就用过了，它还能得到梯度吗？

# %%
loss = h_t.sum()
loss.backward()  # predict: bool(inputs.grad[0].any()) | True | False
print("every input step got a gradient:", bool((inputs.grad.abs().sum(dim=1) > 0).all()))
for t, h in enumerate(hidden_states):
    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")

# %% [markdown]
# [en]
# ## One backward, five steps back
# Row 0 got a gradient: one `loss.backward()` walked back through all five iterations,
# because the graph holds every one of them.
#
# - `W_hh.grad` is the sum of the contributions of every step, because the same tensor
#   was used in each iteration.
# - The printed norms show how much gradient reaches each hidden state. With five steps
#   the early ones are still large; over long sequences they fade towards zero (the
#   "vanishing gradient" of plain RNNs, see Try it).
#
# ## The same cell with nn.RNN
# `nn.RNN` runs this loop for you (in optimised code). It stores its weights transposed
# (`weight_ih_l0` is hidden x input) and has two biases; we copy our tensors in and set the
# second bias to zero.
#
# - After `out, h_n = rnn(...)`, compare `h_n` with our last `h_t`: they match.
# - The gradients match too: `rnn.weight_hh_l0.grad` equals `W_hh.grad` transposed.
# [zh]
# ## 一次反向传播，回溯五步
# 第 0 行得到了梯度：一次 `loss.backward()` 回溯了全部五次迭代，因为计算图里记录着每一次迭代。
#
# - `W_hh.grad` 是每一步贡献之和，因为每次迭代用的都是同一个张量。
# - 打印出的范数表示到达每个隐藏状态的梯度大小。只有五步时，早期的梯度仍然不小；
#   序列很长时它们会逐渐趋近于零（普通 RNN 的“梯度消失”，见“动手试试”）。
#
# ## 用 nn.RNN 做同样的事
# `nn.RNN` 替你运行这个循环（用的是优化过的代码）。它把权重转置存放：`weight_ih_l0` 的形状是
# “隐藏维度 x 输入维度”。它还有两个偏置；我们把自己的张量拷进去，并把第二个偏置设为零。
#
# - 执行 `out, h_n = rnn(...)` 之后，把 `h_n` 与我们最后的 `h_t` 比较：二者一致。
# - 梯度也一致：`rnn.weight_hh_l0.grad` 等于 `W_hh.grad` 的转置。

# %%
rnn = nn.RNN(INPUT_SIZE, HIDDEN_SIZE, nonlinearity="tanh")
with torch.no_grad():
    rnn.weight_ih_l0.copy_(W_xh.T)
    rnn.weight_hh_l0.copy_(W_hh.T)
    rnn.bias_ih_l0.copy_(b_h)
    rnn.bias_hh_l0.zero_()

out, h_n = rnn(inputs.detach().unsqueeze(1))
h_n.sum().backward()
same_state = torch.allclose(h_n.reshape(-1), h_t, atol=1e-6)
same_grad = torch.allclose(rnn.weight_hh_l0.grad, W_hh.grad.T, atol=1e-6)
print("nn.RNN final state matches the loop:", same_state)
print("nn.RNN weight gradient matches the loop:", same_grad)

# %% [markdown]
# [en]
# ## Try it
# 1. Set `NUM_STEPS = 20` and rerun: `|dloss/dh_0|` falls below 1% of the last one.
# 2. Keep five steps and multiply `W_hh` by 3 instead of 0.5: the tanh units saturate and
#    the early gradients shrink even faster: `|dloss/dh_0|` falls below a thousandth of the
#    last one.
# [zh]
# ## 动手试试
# 1. 把 `NUM_STEPS` 改成 20 再运行：`|dloss/dh_0|` 还不到最后一步的百分之一。
# 2. 保持五步不变，把 `W_hh` 的系数从 0.5 改成 3：tanh 单元趋于饱和，早期步骤的梯度衰减得更快，
#    `|dloss/dh_0|` 不到最后一步的千分之一。
# check: course.after('loss.backward()', 'len(hidden_states)') == [20] and course.after('loss.backward()', 'hidden_states[0].grad.norm() < 0.01 * hidden_states[-1].grad.norm()') == [True]
# check: course.after('loss.backward()', 'W_hh.detach().abs().mean() > 2') == [True] and course.after('loss.backward()', 'hidden_states[0].grad.norm() < 0.001 * hidden_states[-1].grad.norm()') == [True]
