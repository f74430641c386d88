"""Lesson 21: views, and in-place operations made through them.

What it teaches: what a view (a slice, ``view``, ``t()``) shares with the tensor it was made
from, its base; what an in-place operation on a view of a non-leaf does to the base's place in
the graph, and to the gradient; what happens when the view belongs to a leaf that requires
grad, and how an optimizer-style update gets past it; and ``.data`` beside ``.detach()`` when a
change is made through them.
"""

# %% [markdown]
# [en]
# # Views and in-place operations
# What a view shares with its base, and what an in-place change through it does to autograd.
#
# Slicing, `view`, `reshape` (when it can), `t()` and `expand` make a *view*: a new tensor
# object over the memory of another tensor, its *base*, with no copy. Lesson 11 showed that
# autograd watches in-place operations through a version counter. This lesson makes the same
# changes through views.
# [zh]
# # 视图与原地操作
# 视图和它的基张量共享了什么，以及通过视图做原地操作对自动求导有什么影响。
#
# 切片、`view`、`reshape`（能不复制时）、`t()` 和 `expand` 得到的是一个*视图*：
# 它是一个新的张量对象，直接使用另一个张量（它的*基张量*）的内存，不做任何复制。
# 第 11 课讲过，自动求导通过版本计数器留意原地操作。这一课通过视图来做同样的修改。

# %%
import torch

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## A view and its base
# - Step over `view = base[1:4]`: `view._base` is `base`, and the two share memory (the
#   print compares the addresses of their storage).
# - `base.add_(1)` changes the base in place. Before it runs, GradStep asks what
#   `view._version` will be after it, although `view` itself is not touched.
# [zh]
# ## 视图与它的基张量
# - 单步执行 `view = base[1:4]`：`view._base` 就是 `base`，两者共享内存（打印的是它们存储的地址比较）。
# - `base.add_(1)` 对基张量做原地操作。在它执行之前，GradStep 会问你：之后 `view._version` 是多少？
#   虽然 `view` 本身并没有被改动。

# %%
base = torch.zeros(6)
view = base[1:4]
print("view._base is base:", view._base is base)
print("same storage:", view.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())
base.add_(1)  # predict: view._version | 0 | 1

# %% [markdown]
# [en]
# ## One version counter for both
# `view._version` is 1: a view shares its base's version counter, as well as its memory. An
# in-place operation on either bumps the one counter and shows in both, which is how
# autograd notices a saved tensor changed through any of its views. Step over
# `view.mul_(3)` and look at both rows in the Variables view: `base` holds the 3s in the
# middle, and both `_version` columns read 2.
# [zh]
# ## 两者共用一个版本计数器
# `view._version` 是 1：视图与基张量共享内存，也共享同一个版本计数器。
# 对其中任何一个做原地操作，都会让这一个计数器加一，两边都看得到；
# 自动求导正是这样发现一个保存的张量通过它的某个视图被改动了。单步执行 `view.mul_(3)`，
# 在变量视图里看这两行：`base` 中间是 3，两者的 `_version` 列都是 2。

# %%
view.mul_(3)
print("base:", base, "| versions:", base._version, view._version)

# %% [markdown]
# [en]
# ## In-place on a view of a non-leaf
# `y = x * 2` is recorded as a `MulBackward0`. `scale_head` takes its first two entries as a
# view, `head = t[:2]`, and multiplies that view by 10 in place. The view's new history
# (times 10) has to reach `y` too, since the two share memory.
#
# - Before `y = scale_head(x * 2)` runs, GradStep asks which node `y.grad_fn` will be. Press
#   F11 on it instead to watch `head` change inside the function.
# [zh]
# ## 对非叶子张量的视图做原地操作
# `y = x * 2` 被记录为一个 `MulBackward0`。`scale_head` 把它的前两个元素取成视图 `head = t[:2]`，
# 再对这个视图原地乘以 10。因为两者共享内存，视图的新历史（乘以 10）也必须传到 `y` 那里。
#
# - 在 `y = scale_head(x * 2)` 执行之前，GradStep 会问你：`y.grad_fn` 会是哪个节点？
#   也可以在这一行按 F11，在函数里看 `head` 怎样变化。

# %%
x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)


def scale_head(t):
    """``t`` with its first two entries multiplied by 10."""
    head = t[:2]
    head.mul_(10)
    return t


y = scale_head(x * 2)  # predict: y.grad_fn | MulBackward0 | CopySlices | SliceBackward0

# %% [markdown]
# [en]
# ## CopySlices: the base's history rewritten
# `y.grad_fn` is `CopySlices`, no longer the `MulBackward0` that made it. Autograd rewrote
# the base's history: `CopySlices` takes the gradient of `y`, sends the part for the slice
# back through the view's own nodes (the multiplication by 10) and the rest unchanged, and
# then on to the old `MulBackward0`. The graph panel shows the chain.
#
# - Before `y.sum().backward()` runs, GradStep asks what lands in `x.grad`.
# [zh]
# ## CopySlices：基张量的历史被改写了
# `y.grad_fn` 是 `CopySlices`，不再是生成它的那个 `MulBackward0`。自动求导改写了基张量的历史：
# `CopySlices` 接过 `y` 的梯度，把属于切片的那部分送回视图自己的节点（乘以 10），
# 其余部分原样传递，然后再传给原来的 `MulBackward0`。计算图面板上能看到这条链。
#
# - 在 `y.sum().backward()` 执行之前，GradStep 会问你：`x.grad` 里会是什么？

# %%
y.sum().backward()  # predict: x.grad | tensor([2., 2., 2., 2.]) | tensor([20., 20., 2., 2.])
print("y.grad_fn:", type(y.grad_fn).__name__, "| x.grad:", x.grad)

# %% [markdown]
# [en]
# ## A view of a leaf that requires grad
# `x.grad` is [20, 20, 2, 2]: the head went through ×2 and then ×10, the tail through ×2
# only. The in-place change was recorded, so the gradient is right.
#
# A leaf has no history to rewrite: it is where the graph starts. So an in-place operation
# on a view of a leaf that requires grad is refused. `bump_head` adds to the first two
# entries of `w` in place; step over the `try` and read the message.
#
# An optimizer changes its leaves in place all the time, inside `torch.no_grad()`, where
# nothing is recorded (lessons 11 and 13). Step over the `with` block: there the same change
# works, and `w._version` goes up by one.
# [zh]
# ## 需要梯度的叶子张量的视图
# `x.grad` 是 [20, 20, 2, 2]：前两个元素先乘 2 再乘 10，其余的只乘了 2。原地操作被记录了下来，
# 所以梯度是对的。
#
# 叶子张量没有可以改写的历史：计算图从它开始。所以对需要梯度的叶子张量的视图做原地操作会被拒绝。
# `bump_head` 对 `w` 的前两个元素做原地加法；单步执行 `try`，读一读报错信息。
#
# 优化器总在对叶子张量做原地操作，不过是在不记录任何东西的 `torch.no_grad()` 中（见第 11、13 课）。
# 单步执行 `with` 块：在那里同样的修改可以进行，`w._version` 增加 1。

# %%
w = torch.ones(3, requires_grad=True)


def bump_head(leaf, amount):
    """Add ``amount`` to the first two entries of ``leaf``, in place."""
    leaf[:2].add_(amount)


try:
    bump_head(w, 0.5)
except RuntimeError as err:
    print("in-place on a view of a leaf:", err)
with torch.no_grad():
    w[:2].add_(0.5)
print("w:", w, "| w._version:", w._version, "| still a leaf:", w.is_leaf)

# %% [markdown]
# [en]
# ## `.detach()` and `.data` through a view
# Both give a tensor outside the graph over the same memory, and a change made through
# either, or through a view of either, reaches the tensor autograd saved: `sigmoid` saves its
# output (lesson 11).
#
# - `shown.detach()[:2].mul_(2)` doubles the first two entries of a sigmoid output through a
#   view of its detached alias. The print reads `shown._version` after it.
# - `hidden.data[:2].mul_(2)` makes the same change to another sigmoid output. Before it
#   runs, GradStep asks what `hidden._version` will be after it.
# [zh]
# ## 通过 `.detach()` 与 `.data` 做修改
# 两者得到的都是计算图之外、使用同一块内存的张量，通过其中任何一个（或它的视图）做修改，
# 都会改到自动求导保存的张量：`sigmoid` 保存的是它的输出（见第 11 课）。
#
# - `shown.detach()[:2].mul_(2)` 通过分离出来的别名的一个视图，把一个 sigmoid 输出的前两个元素加倍。
#   打印的是之后的 `shown._version`。
# - `hidden.data[:2].mul_(2)` 对另一个 sigmoid 的输出做了同样的修改。在它执行之前，
#   GradStep 会问你：之后 `hidden._version` 是多少？

# %%
shown = torch.sigmoid(x)
shown.detach()[:2].mul_(2)
print("shown._version after a change through shown.detach():", shown._version)
hidden = torch.sigmoid(x)
hidden.data[:2].mul_(2)  # predict: hidden._version | 0 | 1

# %% [markdown]
# [en]
# ## Unseen, so silently wrong
# `hidden._version` is still 0: `.data` gives a tensor with a version counter of its own, so
# autograd never learns of the change, and a backward through `hidden` would use the doubled
# values without a word, where one through `shown` raises (lesson 11). Make changes that autograd must see through `.detach()` or inside
# `torch.no_grad()`, never through `.data`.
#
# The checks of the Try it below call `scale_head` and `bump_head` on fresh tensors of their
# own (`scales_out_of_place` and `bumps_in_place`), so they judge the functions, not the
# numbers this run left behind.
# [zh]
# ## 看不见，所以悄悄算错
# `hidden._version` 仍然是 0：`.data` 得到的张量有自己的版本计数器，所以自动求导根本不知道发生了改动，
# 经过 `hidden` 的反向传播会一声不响地使用加倍后的值，而经过 `shown` 的反向传播会报错（见第 11 课）。需要让自动求导看到的修改，
# 请通过 `.detach()` 或在 `torch.no_grad()` 中进行，不要通过 `.data`。
#
# 下面“动手试试”的检查会用它们自己新建的张量调用 `scale_head` 和 `bump_head`
# （`scales_out_of_place` 和 `bumps_in_place`），所以评判的是函数本身，而不是这次运行留下的数。

# %%
print("hidden._version after a change through hidden.data:", hidden._version)


def scales_out_of_place(fn):
    """Whether ``fn`` multiplies the first two entries of fresh tensors by 10 with no in-place operation.

    Its input, a non-leaf as ``x * 2`` is, must come back unchanged (values and version), the
    result must not come from ``CopySlices``, and the gradient must be right.
    """
    for values in ([1.0, 2.0, 3.0, 4.0], [-0.5, 3.0, 7.0]):
        leaf = torch.tensor(values, requires_grad=True)
        given = leaf * 1
        factors = torch.tensor([10.0, 10.0] + [1.0] * (len(values) - 2))
        try:
            out = fn(given)
            (grad,) = torch.autograd.grad(out.sum(), leaf)
        except (RuntimeError, TypeError, AttributeError):
            return False
        if not (torch.equal(out.detach(), torch.tensor(values) * factors) and torch.equal(grad, factors)
                and torch.equal(given.detach(), torch.tensor(values)) and given._version == 0
                and type(out.grad_fn).__name__ != "CopySlices"):
            return False
    return True


def bumps_in_place(fn):
    """Whether ``fn`` adds its amount to the first two entries of a fresh leaf that requires grad.

    The leaf itself must change, stay a leaf that requires grad, and count the change in its
    version counter, so autograd would see it.
    """
    for amount in (0.5, -2.0):
        leaf = torch.ones(3, requires_grad=True)
        try:
            fn(leaf, amount)
        except RuntimeError:
            return False
        if not (torch.equal(leaf.detach(), torch.tensor([1 + amount, 1 + amount, 1.0])) and leaf._version == 1
                and leaf.is_leaf and leaf.requires_grad):
            return False
    return True

# %% [markdown]
# [en]
# ## Try it
# 1. Rewrite `scale_head` without any in-place operation: return a new tensor, for example
#    `torch.cat([t[:2] * 10, t[2:]])`. `y.grad_fn` becomes a `CatBackward0`, `x.grad` stays
#    [20, 20, 2, 2], and the tensor passed in is left as it was.
# 2. Make `bump_head` work on a leaf that requires grad the way an optimizer step does: put
#    its in-place addition inside `with torch.no_grad():`. The `try` no longer prints an
#    error, and the leaf changes where autograd can see it.
# [zh]
# ## 动手试试
# 1. 不用任何原地操作重写 `scale_head`：返回一个新张量，例如 `torch.cat([t[:2] * 10, t[2:]])`。
#    `y.grad_fn` 变成 `CatBackward0`，`x.grad` 仍是 [20, 20, 2, 2]，传进来的张量保持原样。
# 2. 像优化器的一步更新那样，让 `bump_head` 能作用在需要梯度的叶子张量上：
#    把它的原地加法放进 `with torch.no_grad():` 中。`try` 不再打印报错，
#    叶子张量在自动求导看得到的地方被修改。
# check: scales_out_of_place(scale_head)
# check: bumps_in_place(bump_head)
