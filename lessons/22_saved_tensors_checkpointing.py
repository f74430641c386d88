"""Lesson 22: what the graph saves for backward, and trading recomputation for that memory.

What it teaches: the tensors a node keeps for its backward (``_saved_self``, ``_saved_result``,
and the Saved list of a node in the graph panel); ``torch.autograd.graph.saved_tensors_hooks``
to see every tensor as it is saved, measure it, or keep it in another form (as
``save_on_cpu`` moves it off the GPU); and ``torch.utils.checkpoint``, which keeps a block's
input instead and runs the block again during backward, with the saved memory measured
before and after.
"""

# %% [markdown]
# [en]
# # Saved tensors and checkpointing
# Every node keeps what its backward needs; checkpointing keeps less and computes it again.
#
# Lesson 9 showed that saved tensors are what a second backward misses. They are also most
# of a network's memory in training: the activations of every layer wait, saved, for the
# backward pass. This lesson looks at what is saved, measures it, and cuts it down.
# [zh]
# # 保存的张量与检查点
# 每个节点都保存着它的反向传播需要的东西；检查点少保存一些，到时候再算一遍。
#
# 第 9 课讲过，第二次反向传播缺的正是保存的张量。训练时它们也占了网络的大部分内存：
# 每一层的激活值都被保存下来，等着反向传播。这一课看看保存了什么，量一量，再把它减下来。

# %%
import torch
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## What a node saves
# A node saves what its derivative needs, and nothing else. The derivative of exp(a) is
# exp(a) itself, so `ExpBackward0` keeps its *output*; the derivative of sin(a) is cos(a),
# so `SinBackward0` keeps its *input*. Click either node in the graph panel: its details list
# what it saved. The prints compare them with the tensors.
# [zh]
# ## 节点保存了什么
# 节点只保存它求导所需要的东西。exp(a) 的导数就是 exp(a) 本身，所以 `ExpBackward0` 保存的是它的*输出*；
# sin(a) 的导数是 cos(a)，所以 `SinBackward0` 保存的是它的*输入*。
# 在计算图面板上点击这两个节点之一：详情里列出了它保存的张量。打印的结果把它们和对应的张量做了比较。

# %%
a = torch.randn(3, requires_grad=True)
e = a.exp()
s = a.sin()
print("ExpBackward0 saved its output:", torch.equal(e.grad_fn._saved_result, e))
print("SinBackward0 saved its input:", torch.equal(s.grad_fn._saved_self, a))

# %% [markdown]
# [en]
# ## Watching every save
# `saved_tensors_hooks(pack, unpack)` calls `pack` with every tensor a node saves while the
# `with` block records, and keeps whatever `pack` returns; backward later calls `unpack` on
# it to get a tensor back. Here `pack` only notes each tensor's shape.
#
# One layer: `inputs` (a batch of data, which does not require grad) times a weight that
# does, then `tanh`. Before the line in the `with` block runs, GradStep asks how many
# tensors its two nodes save. Think of what each derivative needs: the weight's gradient
# comes from `inputs`, and `inputs` needs no gradient at all.
# [zh]
# ## 看着每一次保存
# `saved_tensors_hooks(pack, unpack)` 在 `with` 块记录计算图期间，对节点保存的每个张量调用 `pack`，
# 并保存 `pack` 返回的东西；之后反向传播对它调用 `unpack`，取回一个张量。这里的 `pack` 只记下每个张量的形状。
#
# 一层：`inputs`（一批数据，不需要梯度）乘以一个需要梯度的权重，再做 `tanh`。
# 在 `with` 块里那一行执行之前，GradStep 会问你：它的两个节点一共保存几个张量？
# 想一想每个导数需要什么：权重的梯度来自 `inputs`，而 `inputs` 根本不需要梯度。

# %%
inputs = torch.randn(256, 256)
weights = [(torch.randn(256, 256) / 16).requires_grad_() for _ in range(2)]
shapes = []
with torch.autograd.graph.saved_tensors_hooks(lambda t: shapes.append(tuple(t.shape)) or t, lambda t: t):
    one_layer = torch.tanh(inputs @ weights[0])  # predict: len(shapes) | 1 | 2 | 3 | 4

# %% [markdown]
# [en]
# ## Only what the derivatives need
# Two: the matrix product saved `inputs`, which the weight's gradient needs, but not the
# weight, since only the gradient of `inputs` would need it; and `tanh` saved its output
# (its derivative is 1 - tanh²).
#
# ## Measuring a stack of layers
# `layers` runs `h = tanh(h @ weight)` for each weight; `stack` runs both. `measure`
# records the stack under a pair of hooks and adds up the KiB of what is saved, each tensor
# once however many nodes save it, the weights left out (they are parameters, kept anyway).
# It also returns the weights' gradients, computed through what was saved.
#
# Every activation here is 256 × 256 float32 numbers: 256 KiB. From the second layer on,
# `h` requires grad, so the product saves both `h` and the weight. Before `measure(stack,
# inputs)` runs, GradStep asks how many KiB it finds.
# [zh]
# ## 只保存导数需要的东西
# 两个：矩阵乘法保存了 `inputs`，因为权重的梯度需要它；但没有保存权重，因为只有 `inputs` 的梯度才需要权重。
# `tanh` 保存了它的输出（它的导数是 1 - tanh²）。
#
# ## 量一量一叠网络层
# `layers` 对每个权重执行 `h = tanh(h @ weight)`；`stack` 把两层都跑一遍。
# `measure` 在一对钩子下记录这叠网络层，把保存下来的东西按 KiB 加起来：每个张量只算一次，
# 不管有几个节点保存它；权重不算在内（它们是参数，本来就一直在）。它还返回权重的梯度，
# 这些梯度是用保存下来的东西算出来的。
#
# 这里每个激活值都是 256 × 256 个 float32 数：256 KiB。从第二层开始 `h` 需要梯度，
# 所以矩阵乘法既保存 `h`，也保存权重。在 `measure(stack, inputs)` 执行之前，
# GradStep 会问你它量出多少 KiB。

# %%


def layers(h, chosen):
    """``tanh(h @ weight)`` for each weight of ``chosen`` in turn."""
    for weight in chosen:
        h = torch.tanh(h @ weight)
    return h


def stack(x):
    """Both layers, every activation saved."""
    return layers(x, weights)


def keep(tensor):
    """The unpack hook ``measure`` uses unless told another: the saved tensor as it was kept."""
    return tensor


def measure(fn, x, pack=None, unpack=keep):
    """KiB that the graph of ``fn(x)`` saves (as ``pack`` keeps it), and the weights' gradients (None if backward fails)."""
    kept = {}
    parameters = set(map(torch.Tensor.data_ptr, weights))

    def noting(tensor):
        stored = tensor if pack is None else pack(tensor)
        if tensor.data_ptr() not in parameters:
            kept[tensor.data_ptr()] = stored.numel() * stored.element_size()
        return stored

    with torch.autograd.graph.saved_tensors_hooks(noting, unpack):
        out = fn(x)
    try:
        gradients = torch.autograd.grad(out.sum(), weights)
    except RuntimeError:
        gradients = None
    return sum(kept.values()) / 1024, gradients


plain_kib, plain_grads = measure(stack, inputs)  # predict: plain_kib

# %% [markdown]
# [en]
# ## Checkpointing: keep the input, run again
# 768 KiB: `inputs` and the two outputs. Each layer's output is the next one's `h`, saved
# by two nodes and counted once.
#
# `checkpoint(fn, *args, use_reentrant=False)` runs `fn` without keeping what its nodes save:
# it keeps the arguments, and during backward it runs `fn` again on them to get the saved
# tensors back, just in time. `checkpointed` cuts the stack into two blocks: the first
# layer, then the second. Before its `measure` runs, GradStep asks how many KiB it finds.
# (F11 on that line shows the layers' lines run twice: forward, then again inside the
# backward that `measure` runs.)
# [zh]
# ## 检查点：保存输入，再跑一遍
# 768 KiB：`inputs` 和两个输出。每一层的输出就是下一层的 `h`，有两个节点保存它，只算一次。
#
# `checkpoint(fn, *args, use_reentrant=False)` 运行 `fn` 时不保留它的节点要保存的东西：
# 它只保存参数，到反向传播时再对这些参数把 `fn` 跑一遍，及时取回那些保存的张量。
# `checkpointed` 把这叠网络层切成两块：第一层，然后是第二层。在它的 `measure` 执行之前，
# GradStep 会问你它量出多少 KiB。
# （在那一行按 F11，会看到网络层的代码运行了两次：一次是前向计算，一次是在 `measure` 做的反向传播里。）

# %%


def checkpointed(x):
    """The two layers in two checkpointed blocks: layer 1, then layer 2."""
    h = checkpoint(layers, x, weights[:1], use_reentrant=False)
    return checkpoint(layers, h, weights[1:], use_reentrant=False)


checkpointed_kib, checkpointed_grads = measure(checkpointed, inputs)  # predict: checkpointed_kib | 0.0 | 256.0 | 512.0 | 768.0
same = checkpointed_grads is not None and all(
    torch.allclose(p, c) for p, c in zip(plain_grads, checkpointed_grads, strict=True))
print(f"saved: {plain_kib:.0f} KiB plain, {checkpointed_kib:.0f} KiB checkpointed | same gradients: {same}")

# %% [markdown]
# [en]
# ## Memory for time
# 512 KiB: each block kept only its input, `inputs` and the output of layer 1. The
# gradients are the same, because backward ran each block again to get what it had not kept:
# a checkpointed block costs one more forward pass. That is the trade: on a deep network,
# checkpointing every few layers saves most of the activation memory for about a third more
# compute.
#
# ## Keeping a saved tensor in another form
# The `pack` hook may keep anything, as long as `unpack` turns it back into a tensor of the
# right shape and dtype. `torch.autograd.graph.save_on_cpu()` is such a pair: on a GPU it
# moves each saved tensor to the CPU's memory and back. `store` and `load` below are a pair
# of your own that keeps each tensor as it is, for now: `measure` with them finds the same
# 768 KiB.
# [zh]
# ## 用时间换内存
# 512 KiB：每一块只保存了自己的输入，也就是 `inputs` 和第 1 层的输出。梯度是一样的，
# 因为反向传播把每一块重新跑了一遍，取回它没有保存的东西：一个做了检查点的块要多付一次前向计算。
# 这就是交换：在很深的网络上，每隔几层做一次检查点，可以省下大部分激活值的内存，代价是大约多三分之一的计算。
#
# ## 换一种形式保存
# `pack` 钩子可以保存任何东西，只要 `unpack` 能把它变回形状和数据类型都对的张量。
# `torch.autograd.graph.save_on_cpu()` 就是这样一对钩子：在 GPU 上它把每个保存的张量挪到 CPU 内存里，
# 用的时候再挪回来。下面的 `store` 和 `load` 是你自己的一对钩子，目前原样保存每个张量：
# 用它们做 `measure`，量出的同样是 768 KiB。

# %%


def store(tensor):
    """The pack hook of the Try it: what the graph keeps of a saved tensor."""
    return tensor


def load(stored):
    """The unpack hook of the Try it: the tensor backward gets back from what ``store`` kept."""
    return stored


stored_kib, stored_grads = measure(stack, inputs, store, load)
print(f"with store and load: {stored_kib:.0f} KiB")


def keeps_only_its_input(fn):
    """Whether ``fn`` on fresh batches saves nothing but its input, with the plain stack's gradients."""
    for rows in (64, 32):
        x = torch.randn(rows, 256)
        kib, grads = measure(fn, x)
        _, expected = measure(stack, x)
        if not (kib == rows and grads is not None
                and all(torch.allclose(g, e, atol=1e-6) for g, e in zip(grads, expected, strict=True))):
            return False
    return True


def halves_the_saved_memory(pack, unpack):
    """Whether the hook pair keeps the stack's saved tensors in half the bytes, gradients still within 2 %."""
    for rows in (64, 32):
        x = torch.randn(rows, 256)
        kib, grads = measure(stack, x, pack, unpack)
        full_kib, expected = measure(stack, x)
        if not (kib == full_kib / 2 and grads is not None and all(
                g.dtype == e.dtype and torch.allclose(g, e, rtol=0.02, atol=0.02 * e.abs().max().item())
                for g, e in zip(grads, expected, strict=True))):
            return False
    return True

# %% [markdown]
# [en]
# ## Try it
# 1. Checkpoint the whole stack as one block: make `checkpointed` return
#    `checkpoint(layers, x, weights, use_reentrant=False)`. It then keeps only `inputs`,
#    256 KiB, and backward runs both layers again.
# 2. Keep saved tensors in half precision: make `store` return `tensor.half()` and `load`
#    return `stored.float()`. `measure` with them finds half the KiB (it counts a tensor
#    saved by two nodes once, though `store` copies it for each), and the gradients move
#    only by rounding.
# [zh]
# ## 动手试试
# 1. 把整叠网络层作为一块做检查点：
#    让 `checkpointed` 返回 `checkpoint(layers, x, weights, use_reentrant=False)`。
#    这样它只保存 `inputs`，也就是 256 KiB，反向传播时两层都会再跑一遍。
# 2. 用半精度保存张量：让 `store` 返回 `tensor.half()`，让 `load` 返回 `stored.float()`。
#    用它们做 `measure`，量出的 KiB 减半（被两个节点保存的张量只算一次，虽然 `store` 为每个节点各复制了一份），
#    梯度只因舍入而略有变化。
# check: keeps_only_its_input(checkpointed)
# check: halves_the_saved_memory(store, load)
