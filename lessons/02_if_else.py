"""Lesson 2: a Python ``if`` on tensor values decides which graph gets recorded.

What it teaches: ordinary ``if``/``else`` works on tensors; the branch is chosen by
``torch.mean(x) > threshold`` at run time; only the branch that ran appears in the
autograd graph, so two inputs can give two different graphs and two different gradients.
"""

# %% [markdown]
# [en]
# # Control flow: if/else
# A branch that depends on the data records a different graph for each input.
#
# Because PyTorch runs your code line by line, a plain Python `if` can look at tensor
# values. There is no special "conditional node": the graph simply contains whatever the
# chosen branch computed, and nothing from the branch that was skipped.
# [zh]
# # 控制流：if/else
# 依赖数据的分支，会为不同的输入记录下不同的计算图。
#
# PyTorch 逐行执行代码，所以普通的 Python `if` 可以直接根据张量的值做判断。这里没有专门的
# “条件节点”：图中只包含被选中的那个分支算出的东西，没有执行的分支不会留下任何痕迹。

# %%
import torch

torch.manual_seed(0)
THRESHOLD = 0.5


def branchy(x):
    """sin(x) when the mean of x is above THRESHOLD, otherwise cos(x)."""
    if torch.mean(x) > THRESHOLD:
        y = torch.sin(x)
    else:
        y = torch.cos(x)
    return y


# %% [markdown]
# [en]
# ## Two inputs, two branches
# `base` is random; `x_high` and `x_low` are the same values shifted so their means are
# exactly 1.0 and -1.0, on either side of `THRESHOLD`.
#
# - Step into `branchy(x_high)` and watch which line of the `if` runs; step out and look
#   at `y_high.grad_fn`, the node of the last operation that made `y`.
# - GradStep asks for `y_high.grad_fn` before its line runs: does the graph hold the `if`,
#   or only the branch that ran? Then do the same for `branchy(x_low)`.
# - Is the comparison in the graph? `x_high` requires grad; GradStep asks whether
#   `decision`, computed from it, does too. Look at it after its line.
# [zh]
# ## 两个输入，两个分支
# `base` 是随机数；`x_high` 和 `x_low` 是把同样的数值平移后得到的，均值恰好为 1.0 和 -1.0，
# 分别位于 `THRESHOLD` 的两侧。
#
# - 单步进入 `branchy(x_high)`，看 `if` 的哪一行被执行；跳出后查看 `y_high.grad_fn`，
#   也就是生成 `y` 的最后一个运算的节点。
# - 在 `y_high` 那一行执行之前，GradStep 会问你它的 `grad_fn`：计算图里记录的是 `if` 本身，
#   还是只有实际执行的那个分支？然后对 `branchy(x_low)` 做同样的操作。
# - 比较运算在图中吗？`x_high` 需要梯度，GradStep 会问你由它算出的 `decision` 是否也需要梯度。
#   执行完它那一行后查看它。

# %%
base = torch.randn(5)
x_high = (base - base.mean() + 1.0).requires_grad_()
x_low = (base - base.mean() - 1.0).requires_grad_()

y_high = branchy(x_high)  # predict: y_high.grad_fn | SinBackward0 | CosBackward0 | IfBackward0
y_low = branchy(x_low)
print("mean of x_high:", x_high.mean().item(), "->", y_high.grad_fn.name())
print("mean of x_low: ", x_low.mean().item(), "->", y_low.grad_fn.name())

decision = torch.mean(x_high) > THRESHOLD  # predict: decision.requires_grad | True | False
print("decision:", decision, "| requires_grad:", decision.requires_grad, "| grad_fn:", decision.grad_fn)
print("bool(decision):", bool(decision))

# %% [markdown]
# [en]
# ## Only the branch that ran is in the graph
# - `y_high.grad_fn` is `SinBackward0` and `y_low.grad_fn` is `CosBackward0`: the graph holds
#   the operations the chosen branch ran, and there is no node for the `if`.
# - `decision` is a one-element bool tensor that does not require grad. A comparison has no
#   useful derivative, so autograd never tracks its result, whether or not an `if` reads it.
# - What `if` adds is the call `bool(decision)`: that is where Python makes the choice,
#   outside every tensor operation. A tracer (lesson 10) notices that conversion and warns
#   about it, but it records only the branch that ran: the choice itself is not in the trace.
#
# ## The gradient follows the branch that ran
# The derivative of sin is cos, and the derivative of cos is -sin. `x_high` has entries
# below `THRESHOLD` (-0.89 and 0.20), yet its mean chose sin for the whole tensor. Before
# `high_ok` is computed, GradStep asks whether *every* entry of `x_high.grad` is the cos of
# its entry, those below the threshold included.
# [zh]
# ## 计算图里只有实际执行的分支
# - `y_high.grad_fn` 是 `SinBackward0`，`y_low.grad_fn` 是 `CosBackward0`：计算图记录的是
#   被选中的分支执行的运算，`if` 本身没有节点。
# - `decision` 是只有一个元素的布尔张量，不需要梯度。比较运算没有有意义的导数，
#   所以自动求导从不跟踪它的结果，不管有没有 `if` 读取它。
# - `if` 额外做的是调用 `bool(decision)`：Python 正是在这里做出选择，这一步不属于任何张量
#   运算。追踪器（见第 10 课）会注意到这次转换并发出警告，
#   但它只记录实际执行的那个分支：选择本身不在追踪结果里。
#
# ## 梯度沿着实际执行的分支走
# sin 的导数是 cos，cos 的导数是 -sin。`x_high` 里有低于 `THRESHOLD` 的元素（-0.89 和 0.20），
# 但决定整个张量走 sin 分支的是它的均值。在计算 `high_ok` 之前，GradStep 会问你：
# `x_high.grad` 的*每一个*元素是否都等于对应元素的 cos，包括那些低于阈值的元素？

# %%
y_high.sum().backward()
y_low.sum().backward()
high_ok = torch.allclose(x_high.grad, torch.cos(x_high.detach()))  # predict: high_ok | True | False
low_ok = torch.allclose(x_low.grad, -torch.sin(x_low.detach()))
print("x_high.grad == cos(x_high):", high_ok)
print("x_low.grad == -sin(x_low): ", low_ok)

# %% [markdown]
# [en]
# ## The branch is re-decided on every call
# `high_ok` and `low_ok` are both True: the branch is chosen once per call for the whole
# tensor, so each input got the gradient of its own branch in every entry. A per-entry
# choice needs `torch.where` (Try it).
#
# Here `x` is nudged down by 0.1 after each step; each step calls `branchy` again, so once the
# mean of `x` drops below the threshold the recorded graph switches from sin to cos.
# Watch `names` at the `print(f"step {step}` line as the loop runs.
# [zh]
# ## 每次调用都会重新选择分支
# `high_ok` 和 `low_ok` 都是 True：每次调用为整个张量只选择一次分支，所以每个输入的每个元素
# 得到的都是它自己那个分支的梯度。要逐元素选择，需要 `torch.where`（动手试试）。
#
# 这里每一步之后把 `x` 减小 0.1；每一步都重新调用 `branchy`，所以当 `x` 的均值降到阈值以下时，
# 记录的计算图就从 sin 换成了 cos。循环运行时，请在 `print(f"step {step}` 这一行观察 `names`。

# %%
x = torch.full((5,), 0.75, requires_grad=True)
names = []
for step in range(4):
    y = branchy(x)
    names.append(y.grad_fn.name())
    print(f"step {step}: mean={x.mean().item():.2f} graph={y.grad_fn.name()}")
    with torch.no_grad():
        x -= 0.1

# %% [markdown]
# [en]
# ## Try it
# 1. Change `THRESHOLD` to `-3.0`: both inputs now take the sin branch, so `y_low` is
#    `sin(x_low)` and both `grad_fn`s read `SinBackward0`. (-3 is also below every single
#    entry, so the `where` of exercise 2 picks sin everywhere too.)
# 2. Replace the whole `if`/`else` inside `branchy` with `y = torch.where(x > THRESHOLD,
#    torch.sin(x), torch.cos(x))`: now both branches are computed and recorded for every
#    element, and `y_high.grad_fn` is a `WhereBackward0` that picks between them.
# [zh]
# ## 动手试试
# 1. 把 `THRESHOLD` 改成 `-3.0`：两个输入都会走 sin 分支，所以 `y_low` 等于 `sin(x_low)`，
#    两个 `grad_fn` 都是 `SinBackward0`。（-3 也低于每一个元素，所以练习 2 的 `where` 同样处处选 sin。）
# 2. 把 `branchy` 中整个 `if`/`else` 换成 `y = torch.where(x > THRESHOLD, torch.sin(x), torch.cos(x))`：
#    这样每个元素的两个分支都会被计算并记录进图中，
#    `y_high.grad_fn` 变成在两者之间做选择的 `WhereBackward0`。
# check: course.after('y_low = branchy(x_low)', 'torch.equal(y_low, x_low.sin())', hidden=True) == [True] and torch.equal(branchy(torch.tensor([-2.9])), torch.tensor([-2.9]).sin()) and torch.equal(branchy(torch.tensor([-3.1])), torch.tensor([-3.1]).cos())
# check: course.after('y_high = branchy(x_high)', 'y_high.grad_fn.name()', hidden=True) == ['WhereBackward0'] and (lambda t: torch.equal(branchy(t), torch.where(t > THRESHOLD, t.sin(), t.cos())) and branchy(t).grad_fn.name() == 'WhereBackward0')(torch.tensor([-10.0, -4.0, 4.0], requires_grad=True))
