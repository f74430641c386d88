"""Lesson 11: in-place operations and the version counter that guards saved tensors.

What it teaches: every tensor carries a version counter (``_version``) that in-place
operations bump; autograd remembers the version of each tensor it saves and refuses to
use a tensor that was modified afterwards (the "modified by an inplace operation" error);
an in-place change to a tensor nobody saved is fine; and an in-place change to a leaf
that requires grad is refused unless it happens under ``torch.no_grad()``.
"""

# %% [markdown]
# [en]
# # In-place operations and the version counter
# In-place ops bump a tensor's version; autograd checks versions to catch tensors changed after they were saved.
#
# Methods ending in an underscore (`add_`, `mul_`, `zero_`) and augmented assignment
# (`x += 1`) change a tensor's memory instead of making a new tensor. That saves memory,
# but it can destroy a value the graph saved for backward (lesson 9). PyTorch cannot
# prevent that, but it can notice it.
# [zh]
# # 原地操作与版本计数器
# 原地操作会让张量的版本号加一；自动求导通过检查版本号，发现那些在保存之后又被改动的张量。
#
# 以下划线结尾的方法（`add_`、`mul_`、`zero_`）以及增量赋值（`x += 1`）会直接修改张量的内存，
# 而不是生成新张量。这样能省内存，但可能破坏计算图为反向传播保存的值（见第 9 课）。
# PyTorch 无法阻止这种情况，但能发现它。

# %%
import torch

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)

# %% [markdown]
# [en]
# ## Watching _version
# - Step over `b = x * 2` and look at `b._version` (the `_version` column in the variables
#   view). `b.add_(1)` changes `b` in place: before it runs, GradStep asks what `b._version`
#   will be after it.
# [zh]
# ## 观察 _version
# - 单步执行 `b = x * 2`，看一看 `b._version`（变量视图中的 `_version` 一列）。
#   `b.add_(1)` 对 `b` 做原地操作：在它执行之前，GradStep 会问你之后 `b._version` 是多少。

# %%
b = x * 2
print("b._version after creation:", b._version)
b.add_(1)  # predict: b._version

# %% [markdown]
# [en]
# ## The version counts in-place changes
# - `b._version` started from 0 and counts the in-place changes made to `b`: `add_` made
#   it 1. Step over `b.mul_(3)`, watching the `_version` column; GradStep asks for it again
#   after `c = b + 1`.
# - `b` is a non-leaf, and nothing in the graph saved `b` itself (`mul_` by a number saves
#   only the number), so backward still works. GradStep asks what it puts in `x.grad`.
# [zh]
# ## 版本号记录原地操作
# - `b._version` 从 0 开始，记录 `b` 经历的原地操作次数：`add_` 让它变成 1。
#   单步执行 `b.mul_(3)`，观察 `_version` 一列；在 `c = b + 1` 之后 GradStep 会再问一次。
# - `b` 不是叶子，而且计算图没有保存 `b` 本身（乘以一个数只需保存那个数），所以反向传播
#   仍然正常。GradStep 会问你它在 `x.grad` 中填入了什么。

# %%
print("b._version after add_:", b._version)
b.mul_(3)

c = b + 1  # predict: b._version | 2 | 3
print("b._version after c = b + 1:", b._version)
c.sum().backward()  # predict: x.grad | tensor([2., 2., 2.]) | tensor([6., 6., 6.]) | None
print("x.grad:", x.grad)

# %% [markdown]
# [en]
# ## In-place changes are recorded too
# `c = b + 1` is an ordinary operation that makes a new tensor, so `b._version` stayed 2.
# `x.grad` is 6 everywhere: the in-place `add_` and `mul_` are recorded in the graph like
# any other operation, so the chain rule sees `b = (2x + 1) * 3`.
#
# ## When the graph needs the old value
# `sigmoid` saves its *output*: its derivative is s * (1 - s). The node records that it
# saved `s` at version 0.
#
# - Step over `s.mul_(2)` (GradStep asks for `s._version` first). The node saved `s`
#   itself, not a copy, so the value it saved has been overwritten with twice the sigmoid.
# - Step over `s.sum().backward()` in the `try`: autograd compares versions and raises
#   "one of the variables needed for gradient computation has been modified by an
#   inplace operation", naming the tensor, its version and the one it expected.
# - The fix is the out-of-place form: `s_doubled = s_ok * 2` leaves `s_ok` untouched.
# [zh]
# ## 原地操作同样会被记录
# `c = b + 1` 是普通运算，会生成一个新张量，所以 `b._version` 仍然是 2。
# `x.grad` 处处为 6：原地的 `add_` 和 `mul_` 也像其他运算一样被记录在计算图里，
# 所以链式法则看到的是 `b = (2x + 1) * 3`。
#
# ## 当计算图需要旧值时
# `sigmoid` 保存的是它的*输出*：导数为 s * (1 - s)。节点记下了它保存的 `s` 的版本号是 0。
#
# - 单步执行 `s.mul_(2)`（GradStep 会先问你 `s._version`）。节点保存的是 `s` 本身而不是副本，
#   所以它保存的值已经被覆盖成了 sigmoid 的两倍。
# - 单步执行 `try` 中的 `s.sum().backward()`：自动求导比较版本号后报错
#   “one of the variables needed for gradient computation has been modified by an inplace
#   operation”，并指出是哪个张量、当前版本号以及期望的版本号。
# - 解决办法是改用非原地的写法：`s_doubled = s_ok * 2` 不会改动 `s_ok`。

# %%
s = torch.sigmoid(x)
s.mul_(2)  # predict: s._version
print("s._version:", s._version)
try:
    s.sum().backward()
except RuntimeError as err:
    print("backward after in-place:", err)

x.grad = None
s_ok = torch.sigmoid(x)
s_doubled = s_ok * 2
s_doubled.sum().backward()
expected = 2 * s_ok.detach() * (1 - s_ok.detach())
print("out-of-place gradient is right:", torch.allclose(x.grad, expected))

# %% [markdown]
# [en]
# ## `.data` hides the change, `detach()` does not
# Some older code changes a tensor through `.data` instead of `detach()`. Both give a
# tensor outside the graph that shares the memory, so both change the value the sigmoid
# node saved.
#
# - Step over the `try`: `s_det.detach().mul_(2)` bumped the shared version, and backward
#   raises as above.
# - `s_data.data.mul_(2)` does the same to `s_data`. Before `s_data.sum().backward()` runs,
#   GradStep asks whether `x.grad` is still None after it, as it would be if backward raised.
# [zh]
# ## `.data` 把改动藏了起来，`detach()` 不会
# 有些旧代码通过 `.data` 而不是 `detach()` 来修改张量。两者得到的都是计算图之外、
# 共享内存的张量，所以都会改动 sigmoid 节点保存的值。
#
# - 单步执行 `try`：`s_det.detach().mul_(2)` 让共享的版本号加一，反向传播像上面一样报错。
# - `s_data.data.mul_(2)` 对 `s_data` 做了同样的事。在 `s_data.sum().backward()` 执行之前，
#   GradStep 会问你：之后 `x.grad` 是否仍然是 None（反向传播报错时就会这样）？

# %%
x.grad = None
s_det = torch.sigmoid(x)
s_det.detach().mul_(2)
try:
    s_det.sum().backward()
except RuntimeError as err:
    print("after detach().mul_(2):", str(err).split(":")[0])
s_data = torch.sigmoid(x)
s_data.data.mul_(2)
s_data.sum().backward()  # predict: x.grad is None | True | False
right = s_data.detach() / 2 * (1 - s_data.detach() / 2)
print("after .data.mul_(2), x.grad:", x.grad, "| the right gradient:", right)

# %% [markdown]
# [en]
# ## Silently wrong
# The difference is the version counter: `detach()` shares it with the original tensor,
# `.data` does not, so autograd never learns of the change. Backward ran without a word
# and filled `x.grad`, but with the wrong numbers: the node
# computed s * (1 - s) from the doubled value it found, 2s * (1 - 2s), instead of the
# sigmoid's own derivative (`right`). `detach()` raises where `.data` gives a wrong
# gradient, so use `detach()` (or `torch.no_grad()`) and never `.data`.
#
# ## In-place on a leaf that requires grad
# Changing a leaf in place while recording would rewrite the start of the graph, so it is
# refused: step over `w.add_(1)` in the `try` and read the message.
#
# Updating weights is exactly such a change, which is why optimisers (and lesson 13) do it
# inside `torch.no_grad()`. Step over the `with torch.no_grad():` block: it works, and
# `w._version` goes up by one.
# [zh]
# ## 悄无声息地算错
# 区别在版本计数器：`detach()` 与原张量共享它，`.data` 不共享，所以自动求导根本不知道发生了改动。
# 反向传播一声不响地运行完，填入了 `x.grad`，但数值是错的：节点用它找到的加倍后的值
# 计算 s * (1 - s)，得到 2s * (1 - 2s)，而不是 sigmoid 自己的导数（`right`）。
# `.data` 会给出错误的梯度，而 `detach()` 会报错，所以请用 `detach()`（或 `torch.no_grad()`），
# 不要用 `.data`。
#
# ## 对需要梯度的叶子做原地操作
# 在记录计算图时对叶子做原地操作，相当于改写图的起点，所以会被拒绝：
# 单步执行 `try` 中的 `w.add_(1)`，读一读报错信息。
#
# 更新权重恰恰就是这样的修改，因此优化器（以及第 13 课）都在 `torch.no_grad()` 中进行。
# 单步执行 `with torch.no_grad():` 块：修改成功，`w._version` 增加 1。

# %%
w = torch.ones(3, requires_grad=True)
try:
    w.add_(1)
except RuntimeError as err:
    print("in-place on a leaf:", err)
version_before = w._version
with torch.no_grad():
    w.add_(1)
print("w:", w, "| version", version_before, "->", w._version)

# %% [markdown]
# [en]
# ## Try it
# 1. Replace `torch.sigmoid(x)` with `x * 2` in the failing example (`s = ...`):
#    `x * 2` saves the constant 2 (as a 0-d tensor), not its output, so the in-place `mul_`
#    no longer breaks backward, and `s` ends up 4 * x.
# 2. Replace `s.mul_(2)` with `s = s * 2`: the version stays 0 and backward succeeds.
# [zh]
# ## 动手试试
# 1. 在出错的例子里（`s = ...` 那一行）把 `torch.sigmoid(x)` 换成 `x * 2`：
#    `x * 2` 保存的是常数 2（一个 0 维张量），而不是它的输出，所以原地的 `mul_` 不再破坏反向传播，
#    `s` 最终等于 4 * x。
# 2. 把 `s.mul_(2)` 换成 `s = s * 2`：版本号保持为 0，反向传播成功。
# check: course.before('s.sum().backward()', 's.grad_fn is not None and torch.allclose(s.detach(), 4 * x.detach())', hidden=True) == [True] and course.after('s.sum().backward()', 'x.grad.tolist()', hidden=True) == [[10.0, 10.0, 10.0]]
# check: course.before('s.sum().backward()', 's._version == 0 and s.grad_fn.name() == "MulBackward0" and (torch.allclose(s, 2 * torch.sigmoid(x)) or torch.allclose(s, 4 * x))', hidden=True) == [True] and course.after('print("backward after in-place:"', 'err', hidden=True) == []
