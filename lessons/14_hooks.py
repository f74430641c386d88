"""Lesson 14: hooks, the functions autograd and modules call for you as values pass by.

What it teaches: ``Tensor.register_hook`` to see, and change, the gradient arriving at a
tensor during ``backward()``; ``retain_grad()`` beside such a hook; on a leaf,
``register_hook`` (this pass's gradient, before it is added to ``.grad``) against
``register_post_accumulate_grad_hook`` (after); module hooks (``register_forward_hook``,
``register_full_backward_hook``); and the order in which all of them fire in one forward and
backward pass.
"""

# %% [markdown]
# [en]
# # Hooks: watching gradients on their way
# Hand a function to a tensor or a module, and PyTorch calls it when the output or the gradient passes by.
#
# `backward()` runs inside PyTorch's autograd engine, so there is no line of yours in the
# middle of it where a `print` could go. Hooks are the way in: you register a function, and
# autograd (or the module) calls it with the value passing through at that moment. A hook
# is your own Python code, so in GradStep you can step into it *while backward is running*.
# [zh]
# # 钩子：在梯度流经时观察它
# 把一个函数交给张量或模块，输出或梯度经过时，PyTorch 就会调用它。
#
# `backward()` 在 PyTorch 的自动求导引擎内部运行，中间没有一行属于你的代码，
# 也就没有地方插入 `print`。钩子就是入口：注册一个函数，当值经过那里时，
# 自动求导（或模块）就用这个值调用它。钩子是你自己写的 Python 代码，
# 所以在 GradStep 里可以在*反向传播进行中*单步进入它。

# %%
import torch
from torch import nn

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## A tensor hook sees the gradient, and may change it
# `h = x * 2` is a non-leaf. `loss = sum(h**2)`, so the gradient arriving at `h` is
# 2 * h = [4, 8, 12]. `double_grad` prints the gradient it is given and returns twice as much.
#
# - Step over `handle = h.register_hook(double_grad)`: nothing is printed yet. The hook
#   waits for a backward pass.
# - `h.retain_grad()` asked autograd to keep the gradient of `h` in `h.grad`. Before
#   `loss.backward()` runs, GradStep asks what `h.grad` will hold: the gradient as it
#   arrived at `h`, or as the hook passed it on?
# - To watch the hook at work instead, skip the question (Skip, or Esc) and press F11 (step into) on that
#   line: the debugger stops inside `double_grad` while backward is running, the Call stack
#   shows it was called from that line, and `grad` in the Variables view is [4, 8, 12].
# [zh]
# ## 张量钩子能看到梯度，还能修改它
# `h = x * 2` 不是叶子张量。`loss = sum(h**2)`，所以传到 `h` 的梯度是 2 * h = [4, 8, 12]。
# `double_grad` 打印它收到的梯度，再把两倍的梯度传下去。
#
# - 单步执行 `handle = h.register_hook(double_grad)`：什么都没有打印，
#   钩子要等到反向传播时才会被调用。
# - `h.retain_grad()` 让自动求导把 `h` 的梯度保留在 `h.grad` 里。在 `loss.backward()` 运行之前，
#   GradStep 会问你 `h.grad` 里将是什么：是刚传到 `h` 时的梯度，还是钩子传下去的梯度？
# - 如果想看钩子怎样工作，就跳过这个问题（点“跳过”或按 Esc），在这一行按 F11（单步进入）：反向传播进行中，
#   调试器停在 `double_grad` 里，调用栈显示它是从这一行被调用的，变量视图里的 `grad` 是 [4, 8, 12]。

# %%
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * 2
h.retain_grad()


def double_grad(grad):
    """Tensor hook: show the gradient arriving at h and pass on twice as much."""
    print("gradient arriving at h:", grad)
    return grad * 2


handle = h.register_hook(double_grad)
loss = (h**2).sum()
loss.backward()  # predict: h.grad | [4., 8., 12.] | [8., 16., 24.]

# %% [markdown]
# [en]
# ## What the hook did
# - `double_grad` was given [4, 8, 12], as the output shows, and returned `grad * 2`.
#   Autograd carries on with whatever a hook returns, so `x.grad` ends up [16, 32, 48],
#   twice what the chain rule alone gives.
# - `h.grad` holds the doubled [8, 16, 24] (the `.grad` column of `h`), although
#     `h.retain_grad()` came *before* the hook: the gradient that `retain_grad()` keeps is
#   stored after the tensor's other hooks have run, whatever the order they were added in.
# - `handle.remove()` takes the hook off; a later backward would not call it.
# [zh]
# ## 钩子做了什么
# - `double_grad` 收到的是 [4, 8, 12]（输出里能看到），返回的是 `grad * 2`。
#   自动求导接着使用钩子返回的值，所以 `x.grad` 最后是 [16, 32, 48]，是单靠链式法则得到的两倍。
# - `h.grad` 里是加倍后的 [8, 16, 24]（看 `h` 的 `.grad` 列），尽管 `h.retain_grad()` 写在注册钩子*之前*：
#   `retain_grad()` 保留的梯度总是在这个张量的其他钩子都运行完之后才存下来，与注册的先后无关。
# - `handle.remove()` 把钩子取下来，之后的反向传播就不会再调用它。

# %%
handle.remove()
print("h.grad (stored after the hook):", h.grad)
print("x.grad:", x.grad)

# %% [markdown]
# [en]
# ## On a leaf: before and after `.grad` is updated
# A leaf's gradient is *added* into its `.grad` (lesson 7). A leaf offers two moments:
# `register_hook` runs before the addition and sees only this pass's gradient;
# `register_post_accumulate_grad_hook` runs after it and is given the leaf itself, so it
# reads the sum in `.grad`.
#
# - `w.grad` starts at [100, 100], as if left over from an earlier step.
# - Step into `backward()`: `before_adding` prints [1, 2], the new gradient, while
#   `w.grad` is still [100, 100]; then `after_adding` prints [101, 102].
# - The post-accumulate hook is where an optimizer can update a parameter as soon as its
#   gradient is complete, without waiting for the rest of the backward pass.
# [zh]
# ## 在叶子张量上：`.grad` 更新之前与之后
# 叶子张量的梯度会*累加*到它的 `.grad` 上（见第 7 课）。叶子张量提供了两个时机：
# `register_hook` 在累加之前运行，只看到这一次的梯度；
# `register_post_accumulate_grad_hook` 在累加之后运行，拿到的是叶子张量本身，
# 所以读到的是 `.grad` 里的总和。
#
# - `w.grad` 一开始是 [100, 100]，就像上一步留下来的一样。
# - 单步进入 `backward()`：`before_adding` 打印 [1, 2]，即新的梯度，
#   此时 `w.grad` 仍是 [100, 100]；接着 `after_adding` 打印 [101, 102]。
# - 累加后钩子是优化器的一个切入点：参数的梯度一算完就更新参数，
#   不必等整个反向传播结束。

# %%
w = torch.tensor([0.5, -1.0], requires_grad=True)
w.grad = torch.tensor([100.0, 100.0])
sums_seen = []  # what after_adding found in w.grad, pass by pass


def before_adding(grad):
    """Leaf tensor hook: this pass's gradient, not yet added to w.grad."""
    print("tensor hook sees:", grad, "| w.grad is still", w.grad)


def after_adding(param):
    """Post-accumulate hook: called with the leaf once its .grad holds the sum."""
    sums_seen.append(param.grad.clone())
    print("post-accumulate hook sees w.grad:", param.grad)


w.register_hook(before_adding)
w.register_post_accumulate_grad_hook(after_adding)
(w * torch.tensor([1.0, 2.0])).sum().backward()

# %% [markdown]
# [en]
# ## Module hooks: the output on the way forward, gradients on the way back
# - `register_forward_hook(fn)` calls `fn(module, args, output)` right after the module's
#   forward: the usual way to keep activations without editing the model.
# - `register_full_backward_hook(fn)` calls `fn(module, grad_input, grad_output)` with
#   tuples: the gradients at the module's inputs and at its outputs.
# - The loss is `sum(act(z) * weights)`. Before its `backward()` line runs, GradStep asks
#   whether the `grad_output` the backward hook receives is exactly `weights`.
# [zh]
# ## 模块钩子：前向传播时看输出，反向传播时看梯度
# - `register_forward_hook(fn)` 在模块的前向计算刚结束时调用 `fn(module, args, output)`：
#   这是不改模型代码就能保留中间激活值的常用办法。
# - `register_full_backward_hook(fn)` 调用 `fn(module, grad_input, grad_output)`，
#   参数都是元组：模块输入处的梯度和输出处的梯度。
# - 损失是 `sum(act(z) * weights)`。在它的 `backward()` 那一行运行之前，
#   GradStep 会问你：反向钩子收到的 `grad_output` 是否恰好就是 `weights`？

# %%
act = nn.Tanh()
seen = {}
act.register_forward_hook(lambda module, args, output: seen.update(output=output.detach()))
act.register_full_backward_hook(
    lambda module, grad_input, grad_output: seen.update(grad_input=grad_input[0], grad_output=grad_output[0])
)
z = torch.randn(2, 3, requires_grad=True)
weights = torch.arange(6.0).reshape(2, 3)
(act(z) * weights).sum().backward()  # predict: torch.equal(seen["grad_output"], weights) | True | False

# %% [markdown]
# [en]
# ## What the module hooks saw
# Look at `seen` in the Variables view.
#
# - `grad_output` is the gradient of the loss with respect to the output of `act`. The loss
#   is `sum(act(z) * weights)`, so that gradient is `weights` itself, entry by entry.
# - For `nn.Tanh`, grad_input = grad_output * (1 - output**2), the derivative of tanh. The
#   next lines check it with the `output` that the forward hook kept.
# [zh]
# ## 模块钩子看到了什么
# 在变量视图里查看 `seen`。
#
# - `grad_output` 是损失对 `act` 输出的梯度。损失是 `sum(act(z) * weights)`，
#   所以这个梯度逐个元素地就是 `weights` 本身。
# - 对 `nn.Tanh` 来说，grad_input = grad_output * (1 - output**2)，也就是 tanh 的导数。
#   接下来的几行用前向钩子保留的 `output` 验证这一点。

# %%
local = seen["grad_output"] * (1 - seen["output"] ** 2)
print("grad_output equals weights:", torch.equal(seen["grad_output"], weights))
print("grad_input == grad_output * (1 - tanh**2):", torch.allclose(seen["grad_input"], local))

# %% [markdown]
# [en]
# ## The order they fire in
# One `nn.Linear` with every kind of hook; each one appends its name to `fired`.
#
# - Forward: the pre-hook, the layer's forward, then the forward hook.
# - Before `out = layer(inputs)` runs, GradStep asks which node `out.grad_fn` will be.
# - Before the `backward()` line runs, it asks for `fired[3]`: the first name that the
#   backward pass adds after `"backward() starts"`.
# - To stop in every hook in turn instead, skip that question (Skip, or Esc) and press F11 on the
#   `backward()` line, then keep stepping into: every hook is a lambda of this file, and
#   `fired` grows by one name at a time.
# [zh]
# ## 钩子触发的顺序
# 一个 `nn.Linear` 挂上每一种钩子，每个钩子都把自己的名字追加到 `fired` 里。
#
# - 前向传播：先是前置钩子，然后是这一层的前向计算，最后是前向钩子。
# - 在 `out = layer(inputs)` 运行之前，GradStep 会问你 `out.grad_fn` 将是哪个节点。
# - 在 `backward()` 那一行运行之前，它会问你 `fired[3]` 是什么，
#   也就是反向传播在 `"backward() starts"` 之后追加的第一个名字。
# - 如果想依次停在每个钩子里，就跳过这个问题（点“跳过”或按 Esc），在 `backward()` 那一行按 F11，
#   然后继续单步进入：每个钩子都是本文件里的 lambda，`fired` 每次多一个名字。

# %%
fired = []
layer = nn.Linear(3, 2)
inputs = torch.randn(4, 3, requires_grad=True)
inputs.register_hook(lambda grad: fired.append("inputs: tensor hook"))
layer.weight.register_hook(lambda grad: fired.append("weight: tensor hook"))
layer.weight.register_post_accumulate_grad_hook(lambda param: fired.append("weight: post-accumulate hook"))
layer.register_forward_pre_hook(lambda module, args: fired.append("layer: forward pre-hook"))
layer.register_forward_hook(lambda module, args, output: fired.append("layer: forward hook"))
layer.register_full_backward_pre_hook(lambda module, grad_output: fired.append("layer: backward pre-hook"))
layer.register_full_backward_hook(lambda module, grad_input, grad_output: fired.append("layer: backward hook"))
out = layer(inputs)  # predict: out.grad_fn | AddmmBackward0 | BackwardHookFunctionBackward
out.register_hook(lambda grad: fired.append("out: tensor hook"))
fired.append("backward() starts")
(out**2).sum().backward()  # predict: fired[3] | out: tensor hook | layer: backward pre-hook | inputs: tensor hook

# %% [markdown]
# [en]
# ## From the output back to the input
# - Backward starts at the loss and works back towards the inputs: first `out`'s tensor
#   hook (the gradient at the output), then the layer's backward pre-hook, which receives
#   that same `grad_output`.
# - Next the weight: its tensor hook, then its post-accumulate hook once `.grad` is written.
# - The layer's backward hook runs when the gradient at its *input* is known, and the
#   tensor hook of `inputs`, the tensor furthest from the loss, comes last.
# - The weight's gradient and the input's gradient are separate branches of the graph:
#   PyTorch does not promise which of them is finished first. This run prints the order
#   shown; do not build code on it.
# - `out.grad_fn` is `BackwardHookFunctionBackward`, not the `AddmmBackward0` of a plain
#   Linear. A full backward hook makes the module wrap its input and its output in an extra
#   node of that name (the graph panel shows one on each side of `AddmmBackward0`), and the
#   layer's backward hooks are called from those two nodes.
# [zh]
# ## 从输出一路回到输入
# - 反向传播从损失出发，一路向输入方向推进：先是 `out` 的张量钩子（输出处的梯度），
#   然后是这一层的反向前置钩子，它拿到的是同一个 `grad_output`。
# - 接下来是权重：先是它的张量钩子，`.grad` 写好之后是它的累加后钩子。
# - 这一层的反向钩子在其*输入*处的梯度算出之后运行；
#   离损失最远的 `inputs` 的张量钩子排在最后。
# - 权重的梯度和输入的梯度属于计算图的两个分支，PyTorch 并不保证哪一个先算完。
#   这次运行打印出的就是上面的顺序，但不要让代码依赖它。
# - `out.grad_fn` 是 `BackwardHookFunctionBackward`，而不是普通 Linear 的 `AddmmBackward0`。
#   注册完整的反向钩子后，模块会用一个这样的额外节点把它的输入和输出分别包起来
#   （计算图面板上 `AddmmBackward0` 两边各有一个），这一层的反向钩子就是从这两个节点里调用的。

# %%
print("hooks fired in this order:", *fired, sep="\n  ")

# %% [markdown]
# [en]
# ## Try it
# 1. Make `double_grad` return None instead of `grad * 2`: a hook that returns nothing
#    leaves the gradient unchanged, and `x.grad` becomes [8, 16, 24].
# 2. In `after_adding`, set `param.grad = None` after printing: the next backward starts
#    from an empty `.grad`. To see it, write the leaf's `backward()` line a second time:
#    the second pass prints that `w.grad` is still None, then [1, 2].
# [zh]
# ## 动手试试
# 1. 让 `double_grad` 返回 None，而不是 `grad * 2`：不返回值的钩子不会改变梯度，
#    `x.grad` 变成 [8, 16, 24]。
# 2. 在 `after_adding` 里打印之后加上 `param.grad = None`：下一次反向传播就从空的 `.grad` 开始。
#    把叶子张量那一节的 `backward()` 再写一遍就能看到：第二次打印出 `w.grad` 仍是 None，然后是 [1, 2]。
# check: course.returned('double_grad') == [None] and course.after('loss.backward()', 'x.grad.tolist(), h.grad.tolist()') == [([8.0, 16.0, 24.0], [4.0, 8.0, 12.0])]
# check: course.before('print("tensor hook sees:"', 'w.grad if w.grad is None else w.grad.tolist()') == [[100.0, 100.0], None] and course.after('sums_seen.append(', 'sums_seen[-1].tolist()') == [[101.0, 102.0], [1.0, 2.0]] and course.after('(w * torch.tensor([1.0, 2.0])).sum().backward()', 'w.grad') == [None, None]
