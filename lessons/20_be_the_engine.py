"""Lesson 20: be the engine: a scalar autograd in forty lines, stepped through beside PyTorch's.

What it teaches: what ``backward()`` does inside, with nothing hidden: every value remembers
its inputs and a ``_backward`` closure that knows the local derivative; ``backward()`` sorts
the graph so that each node comes after everything it depends on, seeds the output's gradient
with 1 and calls the closures in reverse order; gradients are *added* (``+=``) because a
value used twice receives two contributions. The same expression in PyTorch gives the same
graph, node for node, and ``torch.autograd.grad`` checks every gradient.
"""

# %% [markdown]
# [en]
# # Be the engine
# Write the loop that backward() runs: values that remember their inputs, closures, and a topological order.
#
# PyTorch's engine is C++, so F11 on `loss.backward()` never shows you its loop. Here is the
# same idea for single numbers, small enough to read in one screen: `Value` holds a number
# (`data`), its gradient (`grad`), the values it was made from (`parents`) and a function,
# `_backward`, that sends its gradient on to those parents. Each operation (`+`, `*`) makes
# a new `Value` and gives it the closure of its local derivative.
# [zh]
# # 自己当一回引擎
# 写出 backward() 运行的那个循环：记得自己输入的值、闭包，以及拓扑顺序。
#
# PyTorch 的引擎是 C++ 写的，所以在 `loss.backward()` 上按 F11 永远看不到它的循环。这里用单个数
# 实现同样的思路，短到一屏就能读完：`Value` 保存一个数（`data`）、它的梯度（`grad`）、
# 算出它的那些值（`parents`），以及一个函数 `_backward`，负责把它的梯度传给这些父节点。
# 每个运算（`+`、`*`）生成一个新的 `Value`，并把体现局部导数的闭包交给它。

# %%
import math

import torch

from course import graph_nodes

torch.manual_seed(0)


class Value:
    """A number that remembers the values it was made from and how to send a gradient back to them."""

    def __init__(self, data, parents=(), label=""):
        self.data, self.grad, self.parents, self.label = data, 0.0, parents, label
        self._backward = lambda: None  # a leaf has no inputs to send a gradient to

    def __repr__(self):
        return f"Value({self.label}, data={self.data:g}, grad={self.grad:g}, parents={[p.label for p in self.parents]})"

    def __add__(self, other):
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def topological_order(self):
        """Every value this one depends on, each after all of its parents, this one last."""
        order, seen = [], set()

        def visit(node):
            if node not in seen:
                seen.add(node)
                for parent in node.parents:
                    visit(parent)
                order.append(node)

        visit(self)
        return order

    def backward(self):
        order = self.topological_order()
        self.grad = 1.0
        for node in reversed(order):
            node._backward()


# %% [markdown]
# [en]
# ## Build the graph
# `z = x * w + b` makes two new values, and `out = z * z` uses `z` twice.
#
# - Step over the lines and look at `out` in the Variables view (`__repr__` shows a value's
#   label, data, grad and its parents' labels): its parents are `z` and `z` again, and
#   `z`'s parents are the product and `b`. That is the whole graph: no registry, only
#   references from each value to its inputs.
# - `topological_order()` walks the parents depth first and appends a value only once all
#   of its parents are in the list. Before `order = ...` runs, GradStep asks how long the
#   list is.
# [zh]
# ## 构建计算图
# `z = x * w + b` 生成两个新值，`out = z * z` 把 `z` 用了两次。
#
# - 逐行单步执行，在变量视图里看 `out`（`__repr__` 显示一个值的标签、数据、梯度以及
#   父节点的标签）：它的父节点是 `z` 和又一个 `z`，而 `z` 的父节点是那个乘积和 `b`。
#   这就是整张计算图：没有任何登记表，只有每个值指向自己输入的引用。
# - `topological_order()` 深度优先地遍历父节点，只有当一个值的所有父节点都已在列表中时，
#   才把它追加进去。在 `order = ...` 执行之前，GradStep 会问你这个列表有多长。

# %%
x = Value(2.0, label="x")
w = Value(-0.5, label="w")
b = Value(0.5, label="b")
z = x * w + b
out = z * z
order = out.topological_order()  # predict: len(order) | 3 | 6 | 7
print("your engine's order:", [node.label for node in order])

# %% [markdown]
# [en]
# ## Run the engine
# `order` has 6 values: the three leaves, the product, `z` and `out`. `z` is in it once,
# although `out` uses it twice: `seen` keeps a value from being added again. Each value
# comes after its parents, so *reversed*, each comes before them: by the time a value's
# `_backward` runs, every value that uses it has already sent its share.
#
# - `out = z * z`, so the closure of `*` runs with `self` and `other` both `z`. Before
#   `out.backward()` runs, GradStep asks what `z.grad` will be; answering runs the line.
# - To watch the engine's loop instead, skip the question (Skip, or Esc) and press F11
#   (step into) on `out.backward()`, then keep stepping into: `backward` seeds
#   `out.grad = 1.0`, then calls each value's `_backward` in reversed order. Watch the
#   `grad` in the value of `z` in the Variables view.
# [zh]
# ## 运行引擎
# `order` 有 6 个值：三个叶子、那个乘积、`z` 和 `out`。虽然 `out` 用了 `z` 两次，它在列表里
# 只出现一次：`seen` 防止同一个值被再次加入。每个值都排在它的父节点之后，所以*倒过来*，
# 每个值都排在父节点之前：轮到一个值的 `_backward` 运行时，用到它的每个值都已经把自己那份梯度传过来了。
#
# - `out = z * z`，所以 `*` 的闭包运行时，`self` 和 `other` 都是 `z`。在 `out.backward()` 执行之前，
#   GradStep 会问你 `z.grad` 会是多少；回答之后这一行就会运行。
# - 如果想看引擎的循环，就跳过这个问题（点“跳过”或按 Esc），在 `out.backward()` 上按 F11（单步进入），
#   然后一直单步进入：`backward` 先设 `out.grad = 1.0`，再按倒序调用每个值的 `_backward`。
#   在变量视图里观察 `z` 的值里的 `grad`。

# %%
out.backward()  # predict: z.grad | -0.5 | -1.0 | 0.25
print(f"x.grad={x.grad}, w.grad={w.grad}, b.grad={b.grad}, z.grad={z.grad}")

# %% [markdown]
# [en]
# ## Why `+=`
# `z.grad` is -1.0, which is 2z: the derivative of z·z. The closure of `out` ran once, with
# `self` and `other` both `z`, and added z·1 twice. With `=` instead of `+=`, the second
# line would overwrite the first, and `z.grad` would be -0.5 (Try it). PyTorch's engine
# adds too: within one backward, the gradients flowing into a tensor used twice are summed
# before the node that made it runs. `AccumulateGrad` is another sum: it adds into a leaf's
# `.grad` across backward calls (lesson 7).
#
# ## The same expression in PyTorch
# The same numbers as float64 tensors, the same two lines. Look at the graph panel after
# `out_t = z_t * z_t`, and compare it with your engine's `order` printed above. Before that
# line runs, GradStep asks which node `out_t.grad_fn` will be.
# [zh]
# ## 为什么用 `+=`
# `z.grad` 是 -1.0，也就是 2z：z·z 的导数。`out` 的闭包只运行了一次，`self` 和 `other` 都是 `z`，
# 于是把 z·1 加了两次。如果把 `+=` 换成 `=`，第二行就会覆盖第一行，`z.grad` 会是 -0.5
# （动手试试）。PyTorch 的引擎同样要求和：在一次反向传播中，流入一个被用了两次的张量的梯度，
# 会在产生这个张量的节点运行之前先加在一起。`AccumulateGrad` 是另一种累加：它在多次反向传播之间
# 把梯度加进叶子张量的 `.grad`（见第 7 课）。
#
# ## 同一个表达式交给 PyTorch
# 同样的数值做成 float64 张量，同样的两行。在 `out_t = z_t * z_t` 之后看计算图面板，
# 把它与上面打印出的你的引擎的 `order` 比较。在这一行执行之前，
# GradStep 会问你 `out_t.grad_fn` 是哪个节点。

# %%
x_t, w_t, b_t = (torch.tensor(v.data, dtype=torch.float64, requires_grad=True) for v in (x, w, b))
z_t = x_t * w_t + b_t
out_t = z_t * z_t  # predict: out_t.grad_fn | MulBackward0 | PowBackward0
print("PyTorch's graph, output first:", graph_nodes(out_t))

# %% [markdown]
# [en]
# ## Node for node
# `out_t.grad_fn` is `MulBackward0`: `z_t * z_t` is a product whose two inputs happen to be
# the same tensor, as it was for your engine (`z_t ** 2` would record `PowBackward0`).
# PyTorch's graph has 6 nodes too: `MulBackward0`, `AddBackward0`, `MulBackward0`, and one
# `AccumulateGrad` per leaf, where your leaves' `_backward` does nothing and their `grad`
# simply keeps the sum.
#
# `torch.autograd.grad` returns PyTorch's gradients for `x_t`, `w_t` and `b_t` (lesson 8);
# `matches` compares them with your engine's, one by one. A hook on `z_t` (lesson 14) notes
# what reaches it: `arrivals` holds one number, -1.0, both shares of `z_t * z_t` summed before
# `AddBackward0` ran. `z_t` is not a leaf (`z_t.is_leaf` is False): no `AccumulateGrad` took
# part in that sum.
# [zh]
# ## 一个节点对一个节点
# `out_t.grad_fn` 是 `MulBackward0`：`z_t * z_t` 是一个乘积，只是它的两个输入恰好是同一个张量，
# 和你的引擎里一样（`z_t ** 2` 记录的才是 `PowBackward0`）。PyTorch 的计算图也有 6 个节点：
# `MulBackward0`、`AddBackward0`、`MulBackward0`，以及每个叶子一个 `AccumulateGrad`；
# 在你的引擎里，叶子的 `_backward` 什么也不做，它们的 `grad` 只是保存累加的和。
#
# `torch.autograd.grad` 返回 PyTorch 对 `x_t`、`w_t` 和 `b_t` 的梯度（见第 8 课）；
# `matches` 把它们与你的引擎算出的梯度逐个比较。`z_t` 上的钩子（见第 14 课）记下传到它这里的梯度：
# `arrivals` 只有一个数 -1.0，是 `z_t * z_t` 的两份梯度在 `AddBackward0` 运行之前加起来的和。
# `z_t` 不是叶子张量（`z_t.is_leaf` 为 False）：这次求和与 `AccumulateGrad` 无关。

# %%
arrivals = []
z_t.register_hook(lambda grad: arrivals.append(grad.item()))
torch_grads = torch.autograd.grad(out_t, (x_t, w_t, b_t))
matches = {v.label: math.isclose(v.grad, g.item()) for v, g in zip((x, w, b), torch_grads, strict=True)}
all_match = all(matches.values())
print("PyTorch's gradients:", [g.item() for g in torch_grads], "| the same as yours:", matches)
print("what reached z_t, once per backward:", arrivals, "| z_t.is_leaf:", z_t.is_leaf)

# %% [markdown]
# [en]
# ## Try it
# 1. Make the engine forget to add: in `__mul__`'s `_backward`, write `self.grad = other.data
#    * out.grad` and `other.grad = self.data * out.grad` (`=` instead of `+=`). `z.grad`
#    becomes -0.5, and the leaves' gradients no longer match PyTorch's: `all_match` is False.
# 2. Walk the order the wrong way: change `for node in reversed(order):` to
#    `for node in order:`. Each value sends its gradient on before it has received any, so
#    the leaves' gradients stay 0.
# [zh]
# ## 动手试试
# 1. 让引擎忘记累加：在 `__mul__` 的 `_backward` 里
#    写 `self.grad = other.data * out.grad` 和 `other.grad = self.data * out.grad`（用 `=` 代替 `+=`）。
#    `z.grad` 变成 -0.5，叶子的梯度不再与 PyTorch 的一致：`all_match` 为 False。
# 2. 按错误的方向遍历：把 `for node in reversed(order):` 改成 `for node in order:`。
#    每个值在还没收到任何梯度之前就把梯度传了出去，所以叶子的梯度一直是 0。
# check: (lambda a: (a * a).backward() or a.grad)(Value(3.0)) == 3.0 and (lambda p, q: (p * q).backward() or (p.grad, q.grad))(Value(3.0), Value(5.0)) == (5.0, 3.0) and (lambda a: (a + a).backward() or a.grad)(Value(3.0)) == 2.0 and course.after('out.backward()', 'z.grad') == [-0.5] and course.after('all_match = ', 'all_match') == [False]
# check: (lambda p, q, r: (lambda s: (lambda o: o.backward() or (o.grad, s.grad != 0, p.grad, q.grad, r.grad))(s * s))(p * q + r))(Value(2.0), Value(3.0), Value(1.0)) == (1.0, True, 0.0, 0.0, 0.0) and course.after('out.backward()', '(out.grad, x.grad, w.grad, b.grad)') == [(1.0, 0.0, 0.0, 0.0)]
