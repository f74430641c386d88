"""Lesson 1: PyTorch builds the autograd graph while your code runs, so you debug it like Python.

What it teaches: static versus dynamic (eager) graphs; watching ``grad_fn`` appear line by
line; printing intermediate tensors; what ``torch.log`` does with a negative number, and how
to find the first intermediate that holds a NaN; and what a real error (a shape mismatch)
looks like and how its traceback points at the line that caused it.
"""

# %% [markdown]
# [en]
# # Dynamic graphs and debugging
# The graph is recorded as each line runs, so you can inspect and debug it like any Python code.
#
# In a *static* graph framework (TensorFlow 1.x is the classic example) you first describe
# the whole computation, the framework compiles it, and only then do you feed data through
# it. That makes whole-graph optimisation easy, but loops, branches and changing input
# shapes become awkward, and you cannot simply print a value in the middle.
#
# PyTorch is *eager*: every operation runs immediately and, if one of its inputs requires
# a gradient, appends a node to the autograd graph at the same moment. The graph is a
# record of what actually ran. The price is fewer whole-graph optimisations; lesson 10
# shows how to get a static graph back when you need one.
# [zh]
# # 动态图与调试
# 计算图随着每一行代码的执行而记录下来，因此可以像调试普通 Python 程序一样查看和调试它。
#
# 在*静态图*框架里（典型代表是 TensorFlow 1.x），要先把整个计算描述出来，由框架编译，
# 然后才能把数据送进去运行。这样便于对整张图做优化，但循环、分支和变化的输入形状写起来
# 很别扭，也没法在计算中途直接打印一个值。
#
# PyTorch 采用*即时执行*（eager）：每个运算立刻执行；只要某个输入需要梯度，就在同一时刻
# 往计算图里追加一个节点。这张图记录的正是实际执行过的运算。代价是整图优化的机会
# 较少；第 10 课会介绍在需要时如何重新得到静态图。

# %%
import traceback
import warnings

import torch

from course import graph_nodes

torch.manual_seed(0)

# %% [markdown]
# [en]
# ## Watch the graph grow
# `a` and `w` are leaves we create ourselves with `requires_grad=True`; their `grad_fn` is None.
#
# - Before `b = a * w` runs, GradStep asks what `b.grad_fn` will be. The leaves have none:
#   does their product have one, and if so, which?
# [zh]
# ## 观察计算图的生长
# `a` 和 `w` 是我们自己创建的叶子张量，设置了 `requires_grad=True`，它们的 `grad_fn` 为 None。
#
# - 在 `b = a * w` 执行之前，GradStep 会先问你 `b.grad_fn` 将是什么。叶子没有 `grad_fn`：
#   它们的乘积有没有？如果有，是哪一个？

# %%
a = torch.randn(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
b = a * w  # predict: b.grad_fn | None | MulBackward0

# %% [markdown]
# [en]
# ## One line, one node
# - `b.grad_fn` is `MulBackward0`: a node named after the operation, the one that knows how
#   to send gradients back to `a` and `w`.
# - Step over `c = torch.exp(b)` and `loss = c.sum()`: each line adds exactly one node
#   (`ExpBackward0`, then `SumBackward0`). Nothing was declared in advance.
# - The `print("nodes behind loss:"` line walks the graph backwards from `loss`, following
#   each node's `next_functions`. It ends at two `AccumulateGrad` nodes, one per leaf:
#   during backward each one *adds* the gradient that reaches it into its leaf's `.grad`
#   (lesson 7 shows the adding up). The walk is `graph_nodes` in `course.py`, the helper
#   module beside the lessons; GradStep does not step inside it, so F11 on this line is one step.
# [zh]
# ## 一行代码，一个节点
# - `b.grad_fn` 是 `MulBackward0`：一个以运算命名的节点，负责把梯度传回 `a` 和 `w`。
# - 再单步执行 `c = torch.exp(b)` 和 `loss = c.sum()`：每一行正好新增一个节点
#   （`ExpBackward0`，然后是 `SumBackward0`），事先没有声明任何东西。
# - `print("nodes behind loss:"` 这一行从 `loss` 出发反向遍历计算图，
#   每一步都沿着节点的 `next_functions` 往回走，
#   最后到达两个 `AccumulateGrad` 节点，每个叶子一个：反向传播时，它把传到自己这里的梯度*累加*到
#   对应叶子的 `.grad` 上（第 7 课会演示这种累加）。遍历由 `course.py` 中的 `graph_nodes` 完成，
#   这是课程目录里的辅助模块；GradStep 不会单步进入它，所以在这一行按 F11 只算一步。

# %%
c = torch.exp(b)
loss = c.sum()
print("b.grad_fn:", b.grad_fn.name())
print("c.grad_fn:", c.grad_fn.name())
print("nodes behind loss:", graph_nodes(loss))
print("intermediate c (print it like any value):", c)

# %% [markdown]
# [en]
# ## The log of a negative number
# `data - 1.0` has two negative entries, and the next line takes its `torch.log`. Will that
# line raise, or will the program carry on with something in those entries?
#
# - Step over the lines one by one and watch the Variables view; nothing else stops you.
# - `first_with_nan` checks each intermediate with `torch.isnan` ("not a number") in the
#   order they were computed and returns the name of the first one that holds NaN. Before
#   `first_nan = first_with_nan(steps)` runs, GradStep asks which one it finds.
# [zh]
# ## 对负数取对数
# `data - 1.0` 里有两个负数，下一行对它取 `torch.log`。这一行会抛出异常，
# 还是程序会带着那两个位置上的某个值继续运行？
#
# - 逐行单步执行，同时观察变量视图；没有别的东西会拦住你。
# - `first_with_nan` 按计算顺序用 `torch.isnan`（NaN 即 Not a Number，非数值）检查每个中间结果，
#   返回第一个含有 NaN 的结果的名字。在 `first_nan = first_with_nan(steps)` 执行之前，
#   GradStep 会问你它找到的是哪一个。

# %%
data = torch.tensor([2.0, 0.5, 3.0, -1.0])
shifted = data - 1.0
logged = torch.log(shifted)
scaled = logged * 10
result = scaled.sum()
print("logged:", logged)
print("result:", result)

steps = [("shifted", shifted), ("logged", logged), ("scaled", scaled), ("result", result)]


def first_with_nan(named):
    """The name of the first (name, tensor) pair of ``named`` whose tensor holds a NaN, or None."""
    for name, value in named:
        if torch.isnan(value).any():
            return name
    return None


first_nan = first_with_nan(steps)  # predict: first_nan | shifted | logged | scaled | result

# %% [markdown]
# [en]
# ## NaN is not an error
# `torch.log` of a negative number does **not** raise: it gives NaN without any error, and
# NaN then spreads through every later result. (Some tutorials claim it raises an error; it
# does not.) `shifted` is negative but still a number; `logged` is the first result with
# `nan` in it, and `scaled` and `result` inherit it. Looking only at `result`, you could not
# tell where it came from; checking the intermediates in order could.
# [zh]
# ## NaN 不是错误
# 对负数取 `torch.log` **不会**抛出异常，而是悄悄返回 NaN，之后所有依赖它的结果都会变成 NaN。
# （有些教程说这里会报错，其实不会。）`shifted` 虽然是负数，但仍然是数；`logged` 是第一个
# 含有 `nan` 的结果，`scaled` 和 `result` 继承了它。只看 `result` 无法知道 NaN 从哪里来，
# 按顺序检查中间结果就能找到。

# %%
print("NaN first appears in:", first_nan)

# %% [markdown]
# [en]
# ## NaN that appears only in the backward pass
# `safe_root` uses `torch.where` to keep `sqrt` away from negative numbers, and indeed it
# has no NaN. But `torch.sqrt(leaf)` was still computed for *every* entry, and its
# gradient at -1 is NaN; multiplying by the zero that `where` sends back keeps it NaN.
#
# `torch.autograd.detect_anomaly()` makes `backward()` check every node's output and raise
# at the first NaN, naming the node and the forward line that created it.
#
# - Step over `safe_root.sum().backward()` inside the `try`: the error names `SqrtBackward0`,
#   and the captured warning points at the `safe_root = torch.where(...)` line.
# - Anomaly mode is slow: turn it on only while hunting a bug. Its messages are warnings,
#   which this lesson records and prints instead of letting them go to stderr.
# [zh]
# ## 只在反向传播中出现的 NaN
# `safe_root` 用 `torch.where` 让 `sqrt` 避开负数，它本身确实没有 NaN。
# 但 `torch.sqrt(leaf)` 仍然对*每个*元素都算了一遍，它在 -1 处的梯度是 NaN；
# `where` 传回来的 0 乘上 NaN 还是 NaN。
#
# `torch.autograd.detect_anomaly()` 会让 `backward()` 检查每个节点的输出，
# 遇到第一个 NaN 就报错，并指出是哪个节点、由哪一行前向代码创建的。
#
# - 单步执行 `try` 里的 `safe_root.sum().backward()`：错误信息点名 `SqrtBackward0`，
#   捕获到的警告指向 `safe_root = torch.where(...)` 这一行。
# - 异常检测模式很慢，只在排查问题时打开。它的提示是警告，本课把警告记录下来再打印，
#   而不是让它们输出到 stderr。

# %%
leaf = torch.tensor([4.0, -1.0], requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.autograd.detect_anomaly():
        safe_root = torch.where(leaf > 0, torch.sqrt(leaf), torch.zeros_like(leaf))
        print("NaN in safe_root?", bool(torch.isnan(safe_root).any()))
        try:
            safe_root.sum().backward()
        except RuntimeError as err:
            print("backward stopped:", err)
for warning in caught:
    message = str(warning.message).splitlines()
    print("anomaly mode said:", message[0])
    for number, line in enumerate(message):
        if "safe_root = " in line:
            print("   ", message[number - 1].strip(), "->", line.strip())

# %% [markdown]
# [en]
# ## A real error: shapes that do not fit
# Unlike NaN, multiplying matrices whose inner sizes differ is an error.
#
# - Step over the matrix product inside the `try`: `left` is 2x3 and `right` is 2x3,
#   so the inner sizes (3 and 2) do not match. Read PyTorch's message in the output: it
#   gives the two shapes.
# - The `except` block takes the last entry of the traceback, `where`, and prints its line
#   number and text. GradStep asks which line it names: the line that raised the error, or
#   the `try:` that caught it?
# [zh]
# ## 真正的错误：形状对不上
# 与 NaN 不同，内侧维度不一致的矩阵相乘会直接报错。
#
# - 单步执行 `try` 中的矩阵乘法：`left` 是 2x3，`right` 也是 2x3，
#   内侧维度（3 和 2）不相等。请在输出中阅读 PyTorch 的报错信息：里面带着两个形状。
# - `except` 块取出回溯的最后一项 `where`，打印它的行号和代码。GradStep 会问你它指向哪一行：
#   是抛出错误的那一行，还是捕获它的 `try:`？

# %%
left = torch.randn(2, 3)
right = torch.randn(2, 3)
try:
    product = left @ right
except RuntimeError as err:
    where = traceback.extract_tb(err.__traceback__)[-1]  # predict: where.line | product = left @ right | try:
    print("shape error:", err)
    print(f"raised at line {where.lineno}: {where.line}")

# %% [markdown]
# [en]
# ## The traceback names the line that raised
# `where` is the multiplication itself, not the `try:`. Because PyTorch runs each line at
# once, the error is raised by the very line whose shapes do not fit, and the traceback
# points there, with the shapes in the message.
# [zh]
# ## 回溯指向抛出错误的那一行
# `where` 指向的是乘法那一行本身，而不是 `try:`。因为 PyTorch 逐行立即执行，
# 错误正是由形状对不上的那一行抛出的，回溯就指向那里，错误信息里还带着两个形状。

# %%
product = left @ right.T
print("fixed with right.T, product shape:", tuple(product.shape))

# %% [markdown]
# [en]
# ## Try it
# 1. Change `data` so that every entry is greater than 1: `first_nan` becomes None.
# 2. Make the product in the `try` work: change `right = torch.randn(2, 3)` to
#    `torch.randn(3, 2)`. The `except` block no longer runs, so `where` is never set. The fix
#    line must change too, because `right.T` is now 2x3 and no longer fits: make it
#    `product = left @ right`.
# [zh]
# ## 动手试试
# 1. 把 `data` 改成所有元素都大于 1：`first_nan` 会变成 None。
# 2. 让 `try` 里的乘法成功：把 `right = torch.randn(2, 3)` 改成 `torch.randn(3, 2)`。
#    这样 `except` 块不再执行，`where` 也就不会被赋值。修正的那一行也要跟着改，
#    因为 `right.T` 现在是 2x3，对不上了：把它改成 `product = left @ right`。
# check: course.before('first_nan = ', 'bool((data > 1).all())') == [True] and course.after('first_nan = ', 'first_nan') == [None]
# check: course.after('product = left @ right', 'tuple(right.shape), torch.equal(product, left @ right)') == [((3, 2), True)] * 2 and 'where' not in globals()
