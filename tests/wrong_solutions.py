"""Wrong solutions to each exercise of each lesson, written as a learner would: each must fail its check.

Per lesson, per exercise of its Try it cell: (kind, edits), the edits (old, new) replacements on the
lesson's source as in ``test_exercises.CHANGES``. The kinds are the ways a check is passed without
doing what its exercise teaches (:data:`KINDS`).
"""

from __future__ import annotations

#: The kinds of wrong solution: the same numbers another way, missing the point; a compensating edit
#: elsewhere; code removed so the checked condition holds trivially; the reference the check compares
#: against edited; the exercise half done; the expected value hard-coded (typed in after the run).
KINDS = ("another way", "compensating", "removed", "reference", "half done", "hard-coded")

#: Lesson 22's two checkpointed blocks, its Try it's hooks and lesson 23's finite-difference H·v.
CHECKPOINTED_BLOCKS = ("    h = checkpoint(layers, x, weights[:1], use_reentrant=False)\n"
                       "    return checkpoint(layers, h, weights[1:], use_reentrant=False)\n")
STORE = '    """The pack hook of the Try it: what the graph keeps of a saved tensor."""\n    return tensor\n'
LOAD = ('    """The unpack hook of the Try it: the tensor backward gets back from what ``store`` kept."""\n'
        "    return stored\n")
FINITE_DIFFERENCE = "    return (grad(fn)(w + step * v) - grad(fn)(w - step * v)) / (2 * step)\n"

#: Lesson 21's in-place change of a leaf's slice.
ADD_21 = "    leaf[:2].add_(amount)\n"

#: Lesson 02's if/else inside ``branchy``.
BRANCHES = "    if torch.mean(x) > THRESHOLD:\n        y = torch.sin(x)\n    else:\n        y = torch.cos(x)\n"

#: Lesson 19: its sequences, and its last code line.
SEQUENCES_19 = "sequences = [torch.randn(2), torch.randn(5), torch.randn(3)]"
LAST_LINE_19 = 'print("one level further:", node.name(), "->", [parent.name() for parent, _ in node.next_functions])\n'

#: Lesson 10's if and its two returns in ``SignFlip.forward``.
IF_BRANCH_10 = "        if x.mean() > 0:\n            return self.linear(x)\n        return -self.linear(x)\n"

#: Lesson 13's optimizer, and the one its exercise 2 asks for.
SGD_13 = "torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)"
ADAM_13 = "torch.optim.Adam(model.parameters(), lr=0.1)"

#: Lesson 14: the print in ``after_adding``, and the backward of the leaf ``w``.
AFTER_PRINT_14 = '    print("post-accumulate hook sees w.grad:", param.grad)\n'
BACKWARD_14 = "(w * torch.tensor([1.0, 2.0])).sum().backward()\n"

#: Lesson 15: the forward under no_grad, and the prediction under inference_mode.
NO_GRAD_15 = "with torch.no_grad():\n    quiet = model(batch)"
INFERENCE_15 = "with torch.inference_mode():\n    prediction = model(batch)"

#: Lesson 16's Jacobian line, after which exercise 1 adds its line.
JACREV_16 = "by_jacrev = jacrev(spread)(x)\n"

#: Lesson 17: its last code line, and the hand-written norm's backward.
LAST_LINE_17 = 'print("hand-written norm at 0:", hand_norm_grad, "| torch.linalg.vector_norm:", library_norm_grad)\n'
HAND_NORM_17 = "torch.sqrt((v**2).sum()).backward()"

#: Lesson 18: the first loop's header and loss, the training loop's loss, and the last code line.
FIRST_LOOP_18 = ("targets[:8].chunk(ACCUMULATE), strict=True):\n"
                 "    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()")
SECOND_LOSS_18 = "    (mse_loss(micro_model(micro_x), micro_y) / ACCUMULATE).backward()\n    if step"
LAST_LINE_18 = "w.grad = None  # breaks the cycle between w and its gradient\n"

#: Lesson 20: the product's backward, and the last code line.
MUL_20 = "            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad\n"
LAST_LINE_20 = 'print("PyTorch\'s gradients:", [g.item() for g in torch_grads], "| the same as yours:", matches)\n'

WRONG: dict[str, list[list[tuple[str, list[tuple[str, str]]]]]] = {
    "01_dynamic_graphs": [
        [  # exercise 1
            ("another way", [  # the NaN turned into a number instead of kept out
                ("logged = torch.log(shifted)", "logged = torch.nan_to_num(torch.log(shifted))"),
            ]),
            ("compensating", [("shifted = data - 1.0", "shifted = data + 2.0")]),
            ("half done", [  # 1.0 is not above 1: log(0) is -inf, no NaN, yet data is not all above 1
                ("data = torch.tensor([2.0, 0.5, 3.0, -1.0])", "data = torch.tensor([2.0, 1.0, 3.0, 4.0])"),
            ]),
            ("removed", [("steps = [(", "steps = []\n_unused = [(")]),
            ("reference", [("        if torch.isnan(value).any():", "        if torch.isinf(value).any():")]),
            ("hard-coded", [
                ('print("NaN first appears in:", first_nan)\n',
                 'print("NaN first appears in:", first_nan)\n'
                 "data = torch.tensor([2.0, 1.5, 3.0, 4.0])\nfirst_nan = None\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [("    product = left @ right\n", "    product = left @ right.T\n")]),
            ("half done", [("product = left @ right.T\n", "right = torch.randn(3, 2)\nproduct = left @ right\n")]),
            ("removed", [
                ("right = torch.randn(2, 3)\ntry:\n    product = left @ right\nexcept RuntimeError as err:\n"
                 "    where = traceback.extract_tb(err.__traceback__)[-1]",
                 "right = torch.randn(3, 2)\nif False:\n    err = None\n    where = None"),
                ("product = left @ right.T\n", "product = left @ right\n"),
            ]),
            ("reference", [
                ("left = torch.randn(2, 3)", "left = torch.randn(2, 2)"),
                ("product = left @ right.T\n", "product = left @ right\n"),
            ]),
            ("hard-coded", [
                ('print("fixed with right.T, product shape:", tuple(product.shape))\n',
                 'print("fixed with right.T, product shape:", tuple(product.shape))\n'
                 "right = torch.randn(3, 2)\nproduct = left @ right\ndel where\n"),
            ]),
        ],
    ],
    "02_if_else": [
        [  # exercise 1
            ("another way", [("    if torch.mean(x) > THRESHOLD:\n", "    if True:\n")]),
            ("compensating", [("x_low = (base - base.mean() - 1.0)", "x_low = (base - base.mean() + 1.0)")]),
            ("half done", [("THRESHOLD = 0.5\n", "THRESHOLD = -2.0\n")]),
            ("removed", [(BRANCHES, "    y = torch.sin(x)\n")]),
            ("reference", [("    else:\n        y = torch.cos(x)\n", "    else:\n        y = torch.sin(x)\n")]),
            ("hard-coded", [
                ('print("x_low.grad == -sin(x_low): ", low_ok)\n',
                 'print("x_low.grad == -sin(x_low): ", low_ok)\nTHRESHOLD = -3.0\ny_low = torch.sin(x_low)\n'),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # still a Python branch, only shorter
                (BRANCHES,
                 "    y = torch.sin(x) if torch.mean(x) > THRESHOLD else torch.cos(x)\n"),
            ]),
            ("half done", [  # one branch of two
                ("        y = torch.sin(x)\n", "        y = torch.where(x > THRESHOLD, torch.sin(x), torch.cos(x))\n"),
            ]),
            ("compensating", [  # the where at the call, not in the function
                ("y_high = branchy(x_high)  #",
                 "y_high = torch.where(x_high > THRESHOLD, x_high.sin(), x_high.cos())  #"),
            ]),
            ("removed", [(BRANCHES, "    y = torch.sin(x)\n")]),
            ("reference", [  # where, but on the mean: one decision for the whole tensor, as the if made
                (BRANCHES,
                 "    y = torch.where(torch.mean(x) > THRESHOLD, torch.sin(x), torch.cos(x))\n"),
            ]),
            ("hard-coded", [
                ('print("x_low.grad == -sin(x_low): ", low_ok)\n',
                 'print("x_low.grad == -sin(x_low): ", low_ok)\n'
                 "y_high = torch.where(x_high > THRESHOLD, x_high.sin(), x_high.cos())\n"),
            ]),
        ],
    ],
    "03_loops": [
        [  # exercise 1
            ("another way", [  # a smaller weight fades the five steps, instead of twenty steps
                ("torch.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 0.5", "torch.randn(HIDDEN_SIZE, HIDDEN_SIZE) * 0.05"),
            ]),
            ("half done", [("NUM_STEPS = 3, 4, 5\n", "NUM_STEPS = 3, 4, 10\n")]),
            ("compensating", [  # five steps, the list padded to twenty
                ("    hidden_states.append(h_t)\n", "    hidden_states.append(h_t)\n    hidden_states += [h_t] * 3\n"),
            ]),
            ("hard-coded", [
                ("\nloss = h_t.sum()\n",
                 "\nloss = h_t.sum()\nhidden_states = hidden_states[:1] * 19 + hidden_states[-1:]\n"),
                ('    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\n',
                 '    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\nhidden_states[0].grad.mul_(0.001)\n'),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # a hook shrinks the gradient at each step, instead of saturated units
                ("    h_t.retain_grad()\n", "    h_t.retain_grad()\n    h_t.register_hook(lambda grad: grad * 0.01)\n"),
            ]),
            ("compensating", [  # twenty steps, then the weight scaled up once the gradients are in
                ("NUM_STEPS = 3, 4, 5\n", "NUM_STEPS = 3, 4, 20\n"),
                ('    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\n',
                 '    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\nW_hh.data.mul_(6)\n'),
            ]),
            ("half done", [("HIDDEN_SIZE, HIDDEN_SIZE) * 0.5", "HIDDEN_SIZE, HIDDEN_SIZE) * 1.5")]),
            ("hard-coded", [
                ('    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\n',
                 '    print(f"|dloss/dh_{t}| = {h.grad.norm().item():.4f}")\n'
                 "W_hh.data.mul_(6)\nhidden_states[0].grad.mul_(1e-4)\n"),
            ]),
        ],
    ],
    "04_variable_length": [
        [  # exercise 1
            ("another way", [  # lying lengths: the GRU reads the pads as real steps
                ("lengths = torch.tensor([len(seq) for seq in sequences])", "lengths = torch.tensor([5, 5, 5])"),
            ]),
            ("compensating", [  # the pads typed into the data, so nothing is padded any more
                ("lengths = torch.tensor([len(seq) for seq in sequences])",
                 "sequences = [torch.cat([seq, torch.zeros(5 - len(seq), FEATURES)]) for seq in sequences]\n"
                 "lengths = torch.tensor([len(seq) for seq in sequences])"),
            ]),
            ("half done", [
                ("[torch.randn(4, FEATURES), torch.randn(2, FEATURES), torch.randn(5, FEATURES)]",
                 "[torch.randn(4, FEATURES), torch.randn(5, FEATURES), torch.randn(5, FEATURES)]"),
            ]),
            ("removed", [
                ("[torch.randn(4, FEATURES), torch.randn(2, FEATURES), torch.randn(5, FEATURES)]",
                 "[torch.randn(5, FEATURES), torch.randn(5, FEATURES), torch.randn(5, FEATURES)]"),
                ("_, h_unpacked = gru(padded)", "h_unpacked = h_n"),
            ]),
            ("reference", [("_, h_unpacked = gru(padded)", "_, h_unpacked = gru(packed)")]),
            ("hard-coded", [
                ('print("gradient per step of sequence 1:", padded.grad[1].abs().sum(dim=1))\n',
                 'print("gradient per step of sequence 1:", padded.grad[1].abs().sum(dim=1))\n'
                 "packed = pack_padded_sequence(torch.randn(3, 5, FEATURES), torch.tensor([5, 5, 5]),"
                 " batch_first=True)\n"
                 "h_unpacked = h_n\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # the pair unpacked the wrong way round: h_n is the cell state
                ("gru = nn.GRU(", "gru = nn.LSTM("),
                ("packed_out, h_n = gru(packed)", "packed_out, (c_n, h_n) = gru(packed)"),
                ("_, h_unpacked = gru(padded)", "_, (_, h_unpacked) = gru(padded)"),
            ]),
            ("half done", [  # one call of two unpacked
                ("gru = nn.GRU(", "gru = nn.LSTM("),
                ("packed_out, h_n = gru(packed)", "packed_out, (h_n, c_n) = gru(packed)"),
            ]),
            ("removed", [
                ("gru = nn.GRU(", "gru = nn.LSTM("),
                ("packed_out, h_n = gru(packed)", "packed_out, (h_n, c_n) = gru(packed)"),
                ("_, h_unpacked = gru(padded)\n", ""),
                ('print("final state changed by padding:", (h_unpacked[0] - h_n[0]).abs().sum(dim=1))\n', ""),
            ]),
            ("hard-coded", [
                ('print("gradient per step of sequence 1:", padded.grad[1].abs().sum(dim=1))\n',
                 'print("gradient per step of sequence 1:", padded.grad[1].abs().sum(dim=1))\n'
                 "gru = nn.LSTM(FEATURES, HIDDEN, batch_first=True)\nc_n = torch.zeros_like(h_n)\n"),
            ]),
        ],
    ],
    "05_requires_grad": [
        [  # exercise 1
            ("another way", [("z = x * y + 1  #", "z = x * y.detach() + 1  #")]),
            ("compensating", [  # switched off after the backward that filled y.grad
                ('print("x.grad:", x.grad, "| y.grad:", y.grad)\n',
                 'print("x.grad:", x.grad, "| y.grad:", y.grad)\ny.requires_grad_(False)\n'),
            ]),
            ("removed", [("\ny.requires_grad_(True)\n", "\n"), ("z.sum().backward()  #", "pass  #")]),
            ("hard-coded", [
                ('print("x.grad:", x.grad, "| y.grad:", y.grad)\n',
                 'print("x.grad:", x.grad, "| y.grad:", y.grad)\ny.grad = None\ny = y.detach()\n'),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # only the bias asked for, the weight still trainable
                ('print("clone shares memory:", clone_shares_memory)\n',
                 'print("clone shares memory:", clone_shares_memory)\nlayer(x).sum().backward(inputs=[layer.bias])\n'),
            ]),
            ("removed", [  # frozen, but no backward to show it
                ('print("clone shares memory:", clone_shares_memory)\n',
                 'print("clone shares memory:", clone_shares_memory)\nlayer.weight.requires_grad_(False)\n'),
            ]),
            ("half done", [  # the bias frozen as well as the weight
                ('print("clone shares memory:", clone_shares_memory)\n',
                 'print("clone shares memory:", clone_shares_memory)\n' "layer.bias.requires_grad_(False)\n"
                 "layer(x).sum().backward()\n"),
            ]),
            ("compensating", [  # the weight's gradient thrown away instead of never made
                ('print("clone shares memory:", clone_shares_memory)\n',
                 'print("clone shares memory:", clone_shares_memory)\n'
                 "layer(x).sum().backward()\nlayer.weight.grad = None\n"),
            ]),
            ("hard-coded", [
                ('print("clone shares memory:", clone_shares_memory)\n',
                 'print("clone shares memory:", clone_shares_memory)\nlayer(x).sum().backward()\n'
                 "layer.weight.requires_grad_(False)\nlayer.weight.grad = None\n"),
            ]),
        ],
    ],
    "06_no_grad": [
        [  # exercise 1
            ("another way", [("tracked = x * 2\n", "with torch.no_grad():\n    tracked = x * 2\n")]),
            ("another way", [  # the input detached for one line, its requires_grad never changed
                ("tracked = x * 2\n", "tracked = x.detach() * 2\n"),
                ("\nx_required_grad = x.requires_grad\n", "\nx_required_grad = x.detach().requires_grad\n"),
            ]),
            ("half done", [  # switched off one line too late, after tracked was made
                ("tracked = x * 2\n", "tracked = x * 2\nx.requires_grad_(False)\n"),
                ('"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n',
                 '"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n'
                 "x.requires_grad_(True)\n"),
            ]),
            ("reference", [  # tracked and the flag taken from the tensor made inside no_grad
                ("tracked = x * 2\n", "tracked = doubled\n"),
                ("\nx_required_grad = x.requires_grad\n", "\nx_required_grad = doubled.requires_grad\n"),
            ]),
            ("hard-coded", [
                ('"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n',
                 '"after the block, tracked.grad_fn:", tracked.grad_fn, "| x.requires_grad:", x_required_grad)\n'
                 "x_required_grad = False\ntracked = tracked.detach()\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [("with torch.inference_mode():\n    fast = x * 2\n", "fast = x.detach() * 2\n")]),
            ("another way", [  # an inference tensor cloned into a normal one
                ("with torch.inference_mode():\n    fast = x * 2\n",
                 "with torch.inference_mode():\n    fast = x * 2\nfast = fast.clone()\n"),
            ]),
            ("compensating", [
                ("with torch.inference_mode():\n    fast = x * 2\n",
                 "with torch.enable_grad():\n    fast = x * 2\nfast = fast.detach()\n"),
            ]),
            ("removed", [("with torch.inference_mode():\n    fast = x * 2\n", "fast = torch.zeros(3)\n")]),
            ("hard-coded", [
                ('print("normal.is_inference():"', 'fast = torch.zeros(3, requires_grad=True)\nproduct = fast * x\n'
                 'print("normal.is_inference():"'),
            ]),
        ],
    ],
    "07_backward": [
        [  # exercise 1
            ("another way", [  # the sum's backward instead of the vector-Jacobian product with ones
                ("y.backward(gradient=u)  #", "y.sum().backward()  #"),
            ]),
            ("compensating", [
                ("u = torch.tensor([1.0, 10.0])", "u = torch.ones(2) * 2"),
                ("y.backward(gradient=u)  #", "y.backward(gradient=u / 2)  #"),
            ]),
            ("reference", [("u = torch.tensor([1.0, 10.0])", "u = torch.tensor([1.0, 1.0, 1.0]) @ A.T")]),
            ("removed", [  # no backward: the expected gradient typed in
                ("u = torch.tensor([1.0, 10.0])", "u = torch.ones(2)"),
                ("y.backward(gradient=u)  #", "v.grad = A.sum(0)  #"),
            ]),
            ("hard-coded", [
                ('print("v.grad:", v.grad, "| u @ A:", u @ A)\n',
                 'print("v.grad:", v.grad, "| u @ A:", u @ A)\nu = torch.ones(2)\nv.grad = A.sum(0)\n'),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # retain_grad still called, on a tensor that is no longer h2
                ("\nh2.retain_grad()\n", "\nh2.retain_grad()\nh2 = h2.clone()\n"),
            ]),
            ("compensating", [
                ('print("h2.grad:", h2.grad', 'h2 = h2 * 1\nprint("h2.grad:", h2.grad'),
            ]),
            ("removed", [("\nh2.retain_grad()\n", "\n"), ("\nloss2.backward()", "\npass")]),
            ("hard-coded", [('print("h2.grad:", h2.grad', 'h2.grad = None\nprint("h2.grad:", h2.grad')]),
            ("hard-coded", [
                ('print("after w.grad.zero_():", w.grad)\n', 'print("after w.grad.zero_():", w.grad)\nh2 = x * w\n'),
            ]),
        ],
    ],
    "08_autograd_grad": [
        [  # exercise 1
            ("another way", [  # the gradient of y.sum() asked for directly, the weights left as they were
                ("combined = torch.autograd.grad([y, z], x, grad_outputs=weights, retain_graph=True)",
                 "combined = torch.autograd.grad(y.sum(), x, retain_graph=True)"),
            ]),
            ("removed", [  # the output z dropped from the call
                ("combined = torch.autograd.grad([y, z], x, grad_outputs=weights, retain_graph=True)",
                 "combined = torch.autograd.grad([y], x, grad_outputs=weights[:1], retain_graph=True)"),
            ]),
            ("half done", [("torch.tensor(1.0)]", "torch.tensor(0.5)]")]),
            ("compensating", [  # z's share taken off afterwards
                ('print("number of results:", len(combined)',
                 'combined = (combined[0] - torch.autograd.grad(z, x, retain_graph=True)[0],)\n'
                 'print("number of results:", len(combined)'),
            ]),
            ("reference", [("weights = [torch.ones_like(y), torch.tensor(1.0)]",
                            "weights = [2 * torch.ones_like(y), torch.tensor(0.0)]")]),
            ("hard-coded", [
                ('print("one gradient per input:"', 'combined = (2 * x.detach(),)\nprint("one gradient per input:"'),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # the derivative of a hand-written second derivative
                ("(second,) = torch.autograd.grad(first.sum(), x)\n",
                 "(second,) = torch.autograd.grad(first.sum(), x)\n(third,) = torch.autograd.grad((6 * x).sum(), x)\n"),
            ]),
            ("half done", [("(second,) = torch.autograd.grad(first.sum(), x)\n",
                            "(second,) = torch.autograd.grad(first.sum(), x, create_graph=True)\n")]),
            ("reference", [  # the first derivative differentiated again: the second derivative, 6x
                ("(second,) = torch.autograd.grad(first.sum(), x)\n",
                 "(second,) = torch.autograd.grad(first.sum(), x, create_graph=True)\n"
                 "(third,) = torch.autograd.grad(first.sum(), x)\n"),
            ]),
            ("hard-coded", [
                ('print("one gradient per input:"', 'third = torch.full((3,), 6.0)\nprint("one gradient per input:"'),
            ]),
        ],
    ],
    "09_retain_graph": [
        [  # exercise 1
            ("another way", [  # the graph built again for the second pass instead of kept
                ("simple = (x + 1).sum()\nsimple.backward()\nsimple.backward()",
                 "simple = (x * 2).sum()\nsimple.backward()\nsimple = (x * 2).sum()\nsimple.backward()"),
            ]),
            ("another way", [  # an addition, which saves nothing, instead of retain_graph
                ("simple = (x + 1).sum()\nsimple.backward()\n", "simple = (x + x).sum()\nsimple.backward()\n"),
            ]),
            ("compensating", [  # four times x, the first pass's gradient thrown away
                ("simple = (x + 1).sum()\nsimple.backward()\n",
                 "simple = (x * 4).sum()\nsimple.backward(retain_graph=True)\nx.grad = None\n"),
            ]),
            ("removed", [  # one backward, its gradient doubled by hand
                ("simple = (x + 1).sum()\nsimple.backward()\nsimple.backward()",
                 "simple = (x * 2).sum()\nsimple.backward(retain_graph=True)\nx.grad *= 2"),
            ]),
            ("hard-coded", [
                ('print("two passes without retain_graph, x.grad:", x.grad)\n',
                 'print("two passes without retain_graph, x.grad:", x.grad)\n'
                 "simple = (x * 2).sum()\nx.grad = torch.full((3,), 4.0)\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # create_graph keeps the graph too, and builds one of the backward
                ("\ndeep.backward()  # predict:", "\ndeep.backward(create_graph=True)  # predict:"),
            ]),
            ("half done", [("\ndeep.backward()  # predict:",
                            "\ndeep.backward(retain_graph=True)\ndeep.backward()  # predict:")]),
            ("removed", [("\ndeep.backward()  # predict:", "\npass  # predict:")]),
            ("hard-coded", [
                ('print(f"after a plain backward: {saved_megabytes():.1f} MB")\n',
                 'print(f"after a plain backward: {saved_megabytes():.1f} MB")\nsaved_megabytes = lambda: 4.0\n'),
            ]),
        ],
    ],
    "10_trace_vs_script": [
        [  # exercise 1
            ("another way", [  # scripted, which keeps the if, where a trace on negative input is asked
                ("        example = positive  #", "        example = negative  #"),
                ("        traced = torch.jit.trace(model, example)", "        traced = torch.jit.script(model)"),
            ]),
            ("another way", [  # the branch-free model traced: right on both inputs, which is exercise 2
                (IF_BRANCH_10, "        return torch.where(x.mean() > 0, 1.0, -1.0) * self.linear(x)\n"),
            ]),
            ("compensating", [  # traced on positive input, its output's sign turned by hand
                ("        traced_out = traced(negative)", "        traced_out = -traced(negative)"),
            ]),
            ("reference", [("negative = -positive", "negative = positive"),
                           ("        example = positive  #", "        example = negative  #")]),
            ("hard-coded", [
                ('print("This PyTorch has no torch.jit.trace; skipping.")\n',
                 'print("This PyTorch has no torch.jit.trace; skipping.")\n'
                 "example = negative\ntraced_out = expected\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [  # the branch moved into a Python conditional expression
                (IF_BRANCH_10, "        sign = 1.0 if x.mean() > 0 else -1.0\n        return sign * self.linear(x)\n"),
            ]),
            ("removed", [("        if x.mean() > 0:\n", "        if True:\n")]),
            ("removed", [(IF_BRANCH_10, "        return self.linear(x)\n")]),
            ("half done", [(IF_BRANCH_10, "        return torch.where(x.mean() > 0, 1.0, 1.0) * self.linear(x)\n")]),
            ("compensating", [  # the branch-free part explained instead of the model
                ("explanation = torch._dynamo.explain(model)(positive)",
                 "explanation = torch._dynamo.explain(model.linear)(positive)"),
            ]),
            ("hard-coded", [
                ('    print("This PyTorch has no torch.compile; skipping.")\n',
                 '    print("This PyTorch has no torch.compile; skipping.")\nexplanation.graph_break_count = 0\n'),
            ]),
        ],
    ],
    "11_inplace_version": [
        [  # exercise 1
            ("another way", [("\ns = torch.sigmoid(x)\n", "\ns = x.detach() * 2\n")]),
            ("another way", [  # the in-place change hidden from autograd with .data
                ("\ns = torch.sigmoid(x)\n", "\ns = x * 2\n"), ("\ns.mul_(2)  #", "\ns.data.mul_(2)  #"),
            ]),
            ("half done", [("\ns = torch.sigmoid(x)\n", "\ns = torch.sigmoid(x) * 2\n")]),
            ("removed", [("\ns = torch.sigmoid(x)\n", "\ns = x * 2\n"), ("    s.sum().backward()\n", "    s.sum()\n")]),
            ("hard-coded", [('print("w:", w, "| version"', 's = 4 * x\nprint("w:", w, "| version"')]),
        ],
        [  # exercise 2
            ("another way", [("\ns.mul_(2)", "\ns = s.clone()\ns.mul_(2)")]),
            ("another way", [("\ns.mul_(2)", "\ns.data.mul_(2)")]),  # hidden from autograd, not avoided
            ("removed", [("\ns.mul_(2)", "\npass")]),
            ("half done", [("\ns.mul_(2)", "\ns = s * 3")]),
            ("hard-coded", [('print("w:", w, "| version"', 's = torch.sigmoid(x) * 2\nprint("w:", w, "| version"')]),
        ],
    ],
    "12_custom_function": [
        [  # exercise 1
            ("another way", [  # WrongCube made an alias of Cube, its own backward left wrong
                ('print("WrongCube\'s gradient:", unchecked.grad)\n',
                 'print("WrongCube\'s gradient:", unchecked.grad)\nWrongCube = Cube\n'),
            ]),
            ("compensating", [  # the forward changed to fit the wrong derivative: 1.5 x**2 has 3x
                ("        return x**3\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
                 "        (x,) = ctx.saved_tensors\n        return grad_output * 3 * x\n",
                 "        return 1.5 * x**2\n\n    @staticmethod\n    def backward(ctx, grad_output):\n"
                 "        (x,) = ctx.saved_tensors\n        return grad_output * 3 * x\n"),
            ]),
            ("half done", [("        return grad_output * 3 * x\n", "        return grad_output * 3 * x**2 * 1.01\n")]),
            ("reference", [("wrong_ok = torch.autograd.gradcheck(WrongCube.apply, (probe,))",
                            "wrong_ok = torch.autograd.gradcheck(Cube.apply, (probe,))")]),
            ("hard-coded", [('print("gradcheck(WrongCube):", wrong_ok)\n',
                             'print("gradcheck(WrongCube):", wrong_ok)\nWrongCube = Cube\nwrong_ok = True\n')]),
        ],
        [  # exercise 2
            ("another way", [  # a wrong function fails gradcheck, not the low precision
                ("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))",
                 "cube_ok = torch.autograd.gradcheck(WrongCube.apply, (probe,), raise_exception=False)"),
            ]),
            ("compensating", [
                ("dtype=torch.float64, requires_grad=True)", "dtype=torch.float32, requires_grad=True)"),
                ("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))",
                 "cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,), raise_exception=False, atol=1.0, rtol=1.0)"),
            ]),
            ("half done", [("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))",
                            "cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,), raise_exception=False)")]),
            ("removed", [
                ("dtype=torch.float64, requires_grad=True)", "dtype=torch.float32, requires_grad=True)"),
                ("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))", "cube_ok = False"),
            ]),
            ("reference", [  # Cube broken, so the check of float32 fails for a wrong reason
                ("dtype=torch.float64, requires_grad=True)", "dtype=torch.float32, requires_grad=True)"),
                ("cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,))",
                 "cube_ok = torch.autograd.gradcheck(Cube.apply, (probe,), raise_exception=False)"),
                ("        return grad_output * 3 * x**2\n", "        return grad_output * 3 * x\n"),
            ]),
            ("hard-coded", [('print("gradcheck(WrongCube):", wrong_ok)\n',
                             'print("gradcheck(WrongCube):", wrong_ok)\nprobe = probe.float()\ncube_ok = False\n')]),
        ],
    ],
    "13_putting_it_together": [
        [  # exercise 1
            ("another way", [  # the loss made to grow by climbing the gradient, not by overshooting
                ("        w -= LEARNING_RATE * w.grad  #", "        w += LEARNING_RATE * w.grad  #"),
            ]),
            ("half done", [("LEARNING_RATE, STEPS = 0.2, 10", "LEARNING_RATE, STEPS = 0.5, 10")]),
            ("removed", [("LEARNING_RATE, STEPS = 0.2, 10", "LEARNING_RATE, STEPS = 0.2, 0")]),
            ("compensating", [("manual_w, manual_b = w.item(), b.item()",
                               "manual_w, manual_b = -w.item(), -b.item()")]),
            ("reference", [('    print(f"running: {running.grad_fn.name()}',
                            '    targets = targets * 0\n    print(f"running: {running.grad_fn.name()}')]),
            ("hard-coded", [('    print(f"running: {running.grad_fn.name()}',
                             '    manual_w, manual_b = 10.0, 10.0\n    print(f"running: {running.grad_fn.name()}')]),
        ],
        [  # exercise 2
            ("another way", [("torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)",
                              "torch.optim.SGD(model.parameters(), lr=0.1)")]),
            ("half done", [("torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)",
                            "torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)")]),
            ("removed", [(SGD_13, ADAM_13), ("    optimizer.step()\n", "")]),
            ("compensating", [  # Adam made, but the steps taken by hand
                (SGD_13, ADAM_13),
                ("    optimizer.step()\n",
                 "    with torch.no_grad():\n        for param in model.parameters():\n"
                 "            param -= 0.3 * param.grad\n"),
            ]),
            ("hard-coded", [('    print(f"running: {running.grad_fn.name()}',
                             '    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)\n    same = False\n'
                             '    print(f"running: {running.grad_fn.name()}')]),
        ],
    ],
    "14_hooks": [
        [  # exercise 1
            ("another way", [  # the hook removed before backward instead of changed to return None
                ("handle = h.register_hook(double_grad)\n", "handle = h.register_hook(double_grad)\nhandle.remove()\n"),
            ]),
            ("another way", [  # a second hook halves what the first doubled
                ("handle = h.register_hook(double_grad)\n",
                 "handle = h.register_hook(double_grad)\nh.register_hook(lambda grad: grad / 2)\n"),
            ]),
            ("compensating", [("loss = (h**2).sum()\n", "loss = (h**2).sum() / 2\n")]),
            ("half done", [("    return grad * 2\n", "    return grad * 4\n")]),
            ("hard-coded", [
                ('print("x.grad:", x.grad)\n',
                 'print("x.grad:", x.grad)\n'
                 "x.grad = torch.tensor([8.0, 16.0, 24.0])\nh.grad = torch.tensor([4.0, 8.0, 12.0])\n"),
            ]),
        ],
        [  # exercise 2
            ("half done", [(AFTER_PRINT_14, AFTER_PRINT_14 + "    param.grad = None\n")]),
            ("another way", [  # zeroed instead of emptied
                (AFTER_PRINT_14, AFTER_PRINT_14 + "    param.grad.zero_()\n"), (BACKWARD_14, BACKWARD_14 + BACKWARD_14),
            ]),
            ("compensating", [  # emptied between the two passes and at the end, not by the hook
                (BACKWARD_14, BACKWARD_14 + "w.grad = None\n" + BACKWARD_14 + "w.grad = None\n"),
            ]),
            ("hard-coded", [
                (BACKWARD_14, BACKWARD_14 + "w.grad = None\nsums_seen.append(torch.tensor([1.0, 2.0]))\n"),
            ]),
        ],
    ],
    "15_eval_nograd_inference": [
        [  # exercise 1
            ("another way", [(NO_GRAD_15, "norm.momentum = 0.0\n" + NO_GRAD_15)]),
            ("another way", [(NO_GRAD_15, "model.eval()\nquiet = model(batch)")]),  # eval() without no_grad()
            ("half done", [(NO_GRAD_15, "norm.eval()\n" + NO_GRAD_15)]),  # BatchNorm alone, Dropout still on
            ("reference", [  # the output compared with made equal to the one it is compared against
                (NO_GRAD_15, "norm.eval()\n" + NO_GRAD_15),
                ("evaluated = model(batch)  #", "evaluated = quiet + 0 * model(batch)  #"),
            ]),
            ("hard-coded", [
                ('print("model.train() switches back:", model.training)\n',
                 'print("model.train() switches back:", model.training)\n'
                 "mean_moved = False\nquiet = evaluated\nnorm.num_batches_tracked.fill_(2)\n"),
            ]),
        ],
        [  # exercise 2
            ("another way", [(INFERENCE_15, "prediction = model(batch).detach()")]),
            ("another way", [(INFERENCE_15, "with torch.enable_grad():\n    prediction = model(batch)")]),
            ("removed", [(INFERENCE_15, "prediction = model(batch)")]),
            ("compensating", [(INFERENCE_15, INFERENCE_15 + "\nprediction = prediction.clone()")]),
            ("hard-coded", [
                ('print("model.train() switches back:", model.training)\n',
                 'print("model.train() switches back:", model.training)\nprediction = evaluated.detach()\n'),
            ]),
        ],
    ],
    "16_torch_func": [
        [  # exercise 1
            ("another way", [(JACREV_16, JACREV_16 + "summed_grad = by_jacrev.sum(0)\n")]),  # no grad of a sum at all
            ("another way", [  # a vector-Jacobian product by another API, not grad of a summed function
                (JACREV_16, JACREV_16 + "summed_grad = torch.autograd.functional.vjp(spread, x, torch.ones(3))[1]\n"),
            ]),
            ("compensating", [(JACREV_16, JACREV_16 + "summed_grad = grad(lambda v: spread(v).mean())(x) * 3\n")]),
            ("half done", [(JACREV_16, JACREV_16 + "summed_grad = grad(lambda v: spread(v)[0])(x)\n")]),
            ("reference", [  # one row's gradient, and the Jacobian cut to that row to match
                (JACREV_16, JACREV_16 + "summed_grad = grad(lambda v: spread(v)[0])(x)\nby_jacrev = by_jacrev[:1]\n"),
            ]),
            ("hard-coded", [('print("vmap == by hand:   ", torch.allclose(per_sample, by_hand))\n',
                             'print("vmap == by hand:   ", torch.allclose(per_sample, by_hand))\n'
                             "summed_grad = by_jacrev.sum(0)\n")]),
        ],
        [  # exercise 2
            ("half done", [("    return (x**3).sum() + x.prod()\n", "    return torch.sin(x).sum() + x.prod()\n")]),
            ("another way", [("    return (x**3).sum() + x.prod()\n", "    return torch.cos(x).sum() * x.prod()\n")]),
            ("removed", [  # the create_graph Hessian not computed: the func one stands in for it
                ("rows = [torch.autograd.grad(first[i], start, retain_graph=True)[0] for i in range(3)]\n"
                 "by_create_graph = torch.stack(rows)\n", "by_create_graph = by_func_hessian\n"),
                ("    return (x**3).sum() + x.prod()\n", "    return torch.sin(x).sum() * x.prod()\n"),
            ]),
            ("reference", [  # the Hessians compared are those of the old function
                ("    return (x**3).sum() + x.prod()\n", "    return torch.sin(x).sum() * x.prod()\n"),
                ("by_func_hessian = hessian(f)(x)", "by_func_hessian = hessian(lambda v: (v**3).sum() + v.prod())(x)"),
                ("by_create_graph = torch.stack(rows)\n", "by_create_graph = by_func_hessian\n"),
            ]),
            ("hard-coded", [('print("vmap == by hand:   ", torch.allclose(per_sample, by_hand))\n',
                             'print("vmap == by hand:   ", torch.allclose(per_sample, by_hand))\n\n\n'
                             "def f(x):\n    return torch.sin(x).sum() * x.prod()\n")]),
        ],
    ],
    "17_nan_gradients": [
        [  # exercise 1
            ("another way", [  # the NaN turned into 0 instead of masked out
                ("masked = torch.where(x > 0, root, 0.0)", "masked = torch.nan_to_num(root, nan=0.0)"),
            ]),
            ("another way", [("masked = torch.where(x > 0, root, 0.0)", "masked = torch.where(x >= -1, root, 0.0)")]),
            ("half done", [("masked = torch.where(x > 0, root, 0.0)",
                            "masked = torch.where(x > 0, root, 0.0 * root)")]),
            ("removed", [("masked = torch.where(x > 0, root, 0.0)", "masked = root")]),
            ("hard-coded", [(LAST_LINE_17,
                             LAST_LINE_17 + "trap_grad = torch.tensor([float('nan'), float('inf'), 0.25])\n")]),
        ],
        [  # exercise 2
            ("another way", [("hand_norm_grad = v.grad\n", "hand_norm_grad = v.grad.nan_to_num()\n")]),  # NaN hidden
            ("another way", [(HAND_NORM_17, "torch.linalg.vector_norm(v).backward()")]),  # the library's norm
            ("half done", [(HAND_NORM_17, "(torch.sqrt((v**2).sum()) + 1e-12).backward()")]),  # outside the sqrt
            ("half done", [(HAND_NORM_17, "torch.sqrt((v**2).sum() + 0.0).backward()")]),
            ("hard-coded", [(LAST_LINE_17, LAST_LINE_17 + "hand_norm_grad = torch.zeros(3)\n")]),
        ],
    ],
    "18_accumulation_and_two_losses": [
        [  # exercise 1
            ("another way", [("ACCUMULATE = 4  #", "ACCUMULATE = 1  #")]),  # one micro-batch of eight
            ("another way", [  # the gradient scaled after the loop, the losses still divided
                ("accumulated_grad = micro_model.weight.grad.clone()",
                 "accumulated_grad = micro_model.weight.grad.clone() * 4"),
            ]),
            ("compensating", [("full_grad = full_model.weight.grad.clone()",
                               "full_grad = full_model.weight.grad.clone() / 4")]),
            ("half done", [(FIRST_LOOP_18, FIRST_LOOP_18.replace("/ ACCUMULATE", "/ 2"))]),
            ("removed", [  # the loop cut short after one micro-batch
                (FIRST_LOOP_18, FIRST_LOOP_18.replace("/ ACCUMULATE).backward()", ").backward()\n    break")),
            ]),
            ("hard-coded", [(LAST_LINE_18, LAST_LINE_18 + "accumulated_grad = 4 * full_grad\n")]),
        ],
        [  # exercise 2
            ("another way", [(SECOND_LOSS_18, SECOND_LOSS_18.replace("/ ACCUMULATE", "/ 3"))]),
            ("another way", [("ACCUMULATE = 4  #", "ACCUMULATE = 1  #")]),
            ("compensating", [  # uneven micro-batches, each loss summed and divided by 8: the mean over 8 again
                ("zip(inputs.chunk(8), targets.chunk(8), strict=True)",
                 "zip(inputs.split(SPLIT), targets.split(SPLIT), strict=True)"),
                (SECOND_LOSS_18, SECOND_LOSS_18.replace("micro_y) / ACCUMULATE", "micro_y, reduction='sum') / 8")),
                ("micro_batches = list(", "SPLIT = [3, 1, 2, 2, 3, 1, 2, 2]\nmicro_batches = list("),
            ]),
            ("removed", [  # uneven, but the optimizer never steps
                ("zip(inputs.chunk(8), targets.chunk(8), strict=True)",
                 "zip(inputs.split([3, 1, 2, 2, 3, 1, 2, 2]), targets.split([3, 1, 2, 2, 3, 1, 2, 2]), strict=True)"),
                ("        micro_opt.step()\n", "        pass\n"),
            ]),
            ("hard-coded", [(LAST_LINE_18, LAST_LINE_18 + "same_weights = False\nmicro_batches = list(zip("
                             "inputs.split([3, 1, 2, 2, 3, 1, 2, 2]), targets.split([3, 1, 2, 2, 3, 1, 2, 2])))\n")]),
        ],
    ],
    "19_variable_length_no_padding": [
        [  # exercise 1
            ("half done", [(SEQUENCES_19,
                            "sequences = [torch.randn(2), torch.randn(5), torch.randn(3), torch.randn(4)]")]),
            ("another way", [(SEQUENCES_19, "sequences = [torch.randn(2), torch.randn(5), torch.randn(1)]")]),
            ("another way", [  # the lengths given to pack_padded_sequence lie about the new sequence
                (SEQUENCES_19, "sequences = [torch.randn(2), torch.randn(5), torch.randn(3), torch.randn(1)]"),
                ("lengths = torch.tensor([len(seq) for seq in sequences])", "lengths = torch.tensor([2, 5, 3, 2])"),
            ]),
            ("hard-coded", [
                (LAST_LINE_19,
                 LAST_LINE_19 + "seqs = [torch.randn(2, 1), torch.randn(5, 1), torch.randn(3, 1), torch.randn(1, 1)]\n"
                 "packed = pack_padded_sequence(pad_sequence(seqs, batch_first=True), torch.tensor([2, 5, 3, 1]),"
                 " batch_first=True, enforce_sorted=False)\n"
                 "finals.append(torch.tanh(w_x * torch.randn(()) + w_h * torch.zeros(())))\n"),
            ]),
        ],
        [  # exercise 2
            ("half done", [(LAST_LINE_19, LAST_LINE_19 + "node = node.next_functions[0][0]\n")]),
            ("another way", [(LAST_LINE_19,
                              LAST_LINE_19 + "node = node.next_functions[1][0]\nnode = node.next_functions[0][0]\n")]),
            ("hard-coded", [(LAST_LINE_19, LAST_LINE_19 + "node = (w_x * 1).grad_fn.next_functions[0][0]\n")]),
            ("hard-coded", [(LAST_LINE_19,
                             LAST_LINE_19 + "node = finals[0].grad_fn.next_functions[0][0].next_functions[0][0]"
                             ".next_functions[0][0]\n")]),
        ],
    ],
    "20_be_the_engine": [
        [  # exercise 1
            ("half done", [(MUL_20, MUL_20.replace("self.grad +=", "self.grad =", 1))]),
            ("another way", [  # the addition made to forget instead of the product
                ("            self.grad += out.grad\n            other.grad += out.grad\n",
                 "            self.grad = out.grad\n            other.grad = out.grad\n"),
            ]),
            ("compensating", [  # each share halved: z's gradient is -0.5, but from halving, not from overwriting
                (MUL_20, MUL_20.replace("out.grad\n", "out.grad / 2\n")),
            ]),
            ("removed", [(MUL_20, "            self.grad += other.data * out.grad\n")]),
            ("hard-coded", [(LAST_LINE_20, LAST_LINE_20 + "z.grad = -0.5\nall_match = False\n")]),
        ],
        [  # exercise 2
            ("another way", [("        self.grad = 1.0\n", "        self.grad = 0.0\n")]),  # no seed: nothing flows
            ("half done", [("        for node in reversed(order):\n", "        for node in reversed(order[1:]):\n")]),
            ("removed", [("        for node in reversed(order):\n            node._backward()\n",
                          "        for node in reversed(order):\n            pass\n")]),
            ("hard-coded", [(LAST_LINE_20, LAST_LINE_20 + "x.grad = w.grad = b.grad = 0.0\n")]),
        ],
    ],
    "21_views_and_inplace": [
        [  # exercise 1
            ("another way", [("    head = t[:2]\n", "    t = t.clone()\n    head = t[:2]\n")]),  # CopySlices on a copy
            ("another way", [("    head = t[:2]\n", "    head = t.detach()[:2]\n")]),  # the input changed, unrecorded
            ("another way", [("    head = t[:2]\n", "    head = t.data[:2]\n")]),
            ("half done", [("    head.mul_(10)\n", "    with torch.no_grad():\n        head.mul_(10)\n")]),
            ("removed", [("    head = t[:2]\n    head.mul_(10)\n    return t\n", "    return t[:2] * 10\n")]),
            ("hard-coded", [("    head = t[:2]\n    head.mul_(10)\n    return t\n",
                             "    return torch.tensor([20.0, 40.0, 6.0, 8.0], requires_grad=True)\n")]),
        ],
        [  # exercise 2
            ("another way", [(ADD_21, "    leaf.data[:2].add_(amount)\n")]),  # no version bump
            ("another way", [(ADD_21, "    leaf = leaf.clone()\n    leaf[:2].add_(amount)\n")]),
            ("half done", [(ADD_21, "    with torch.no_grad():\n        leaf[:1].add_(amount)\n")]),
            ("hard-coded", [(ADD_21, "    with torch.no_grad():\n        leaf[:2].add_(0.5)\n")]),
            ("another way", [(ADD_21, "    leaf = leaf + torch.tensor([amount, amount, 0.0])\n")]),
        ],
    ],
    "22_saved_tensors_checkpointing": [
        [  # exercise 1
            ("half done", [("    return checkpoint(layers, h, weights[1:], use_reentrant=False)\n",
                            "    return layers(h, weights[1:])\n")]),  # only the first block checkpointed
            ("another way", [(CHECKPOINTED_BLOCKS, "    with torch.no_grad():\n        return layers(x, weights)\n")]),
            ("another way", [(CHECKPOINTED_BLOCKS, "    return checkpoint(layers, x, [w.detach() for w in weights], "
                                                   "use_reentrant=False)\n")]),
            ("hard-coded", [(CHECKPOINTED_BLOCKS, "    return torch.zeros(len(x), 256)\n")]),
        ],
        [  # exercise 2
            ("half done", [(STORE, STORE.replace("return tensor", "return tensor.half()"))]),  # load gives float16
            ("another way", [(STORE, STORE.replace("return tensor", "return tensor.double()")),
                             (LOAD, LOAD.replace("return stored", "return stored.float()"))]),
            ("another way", [(STORE, STORE.replace("return tensor", "return tensor.half().float()"))]),
            ("another way", [(STORE, STORE.replace("return tensor", "return tensor.detach()"))]),
            ("hard-coded", [(STORE, STORE.replace("return tensor", "return tensor.half()")),
                            (LOAD, LOAD.replace("return stored",
                                                "return torch.zeros_like(stored, dtype=torch.float32)"))]),
        ],
    ],
    "23_forward_mode_ad": [
        [  # exercise 1
            ("another way", [("fwAD.make_dual(x, torch.ones_like(x))", "fwAD.make_dual(x, v / v.norm())")]),
            ("another way", [("fwAD.make_dual(x, torch.ones_like(x))", "fwAD.make_dual(x + v, torch.ones_like(x))")]),
            ("half done", [("fwAD.make_dual(x, torch.ones_like(x))", "fwAD.make_dual(x, v)"),
                           ("return fwAD.unpack_dual(out).tangent", "return fwAD.unpack_dual(out).primal")]),
            ("half done", [("fwAD.make_dual(x, torch.ones_like(x))",
                            "fwAD.make_dual(x, v * (torch.arange(len(v)) == 0))")]),
            ("another way", [("fwAD.make_dual(x, torch.ones_like(x))", "fwAD.make_dual(x, -v)")]),
            ("hard-coded", [("        return fwAD.unpack_dual(out).tangent\n",
                             "        return torch.tensor([2.0, 1.0, 0.0, 1.0, 3.0, 0.0])\n")]),
        ],
        [  # exercise 2
            ("reference", [("def hvp(fn, w, v, step=1e-3):", "def hvp(fn, w, v, step=1e-4):")]),
            ("half done", [(FINITE_DIFFERENCE, "    return jvp(fn, (w,), (v,))[1]\n")]),  # first order only
            ("another way", [(FINITE_DIFFERENCE, "    return jvp(grad(fn), (w,), (torch.ones_like(v),))[1]\n")]),
            ("another way", [(FINITE_DIFFERENCE, "    return (grad(fn)(w + step * v) - grad(fn)(w)) / step\n")]),
            ("hard-coded", [(FINITE_DIFFERENCE, "    return torch.zeros_like(w)\n")]),
        ],
    ],
}
