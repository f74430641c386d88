"""What the learner can do with autograd while a lesson is paused: backward, autograd.grad, grads, watch.

Runs inside the lesson process, in the context of the selected frame; expressions are
evaluated with ``eval`` against the frame's globals and locals, as in a debugger console.
Every action returns a plain-data dict ``{"ok": bool, "error": None | {...}, ...}``: a
PyTorch error becomes a result with PyTorch's own message, a plain-language explanation,
the fix and the lesson that covers it, and the lesson stays paused and usable.

A real ``backward()``, ``zero_grad`` or ``clear_grad`` changes the lesson exactly as if the
same line had been written in the script: the next lines see the new ``.grad`` values and,
unless ``retain_graph`` was set, a graph whose saved tensors are freed. ``preview_gradients``
changes nothing (it also restores the ``.grad`` of frame tensors that retain it), although
hooks the lesson registered on tensors still run.
"""

from __future__ import annotations

import functools
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any

from app.i18n import N_
from app.lesson.autograd_graph import find_tensors, reachable_nodes
from app.lesson.autograd_nodes import node_id, node_kind, released
from app.lesson.engine_reads import learner_code
from app.lesson.summaries import Summarizer, node_name
from app.messages import RESULTS_NAME

Expressions = str | list[str] | tuple[str, ...]


@dataclass(frozen=True)
class _Known:
    """A PyTorch message we can explain: the pattern that recognises it and what to tell the learner."""

    pattern: re.Pattern[str]
    lesson: str | None
    explanation: str
    fix: str


_KNOWN = (
    _Known(
        re.compile(r"backward through the graph a second time"),
        "09_retain_graph",
        N_("Each operation saved the tensors it needs for its derivative, and backward frees them as soon as "
           "it has used them, to give the memory back. This graph was already walked by a backward (or "
           "autograd.grad), so its saved tensors are gone and it cannot be walked again."),
        N_("Pass retain_graph=True to the first backward() or autograd.grad() if you need a second pass, "
           "or run the forward computation again to record a fresh graph."),
    ),
    _Known(
        re.compile(r"grad can be implicitly created only for scalar outputs"),
        "07_backward",
        N_("backward() with no argument starts from d(root)/d(root) = 1, which only makes sense when the root "
           "is a single number. This root has several elements, so PyTorch must be told how much each one "
           "counts: the vector of a vector-Jacobian product."),
        N_("Reduce the root to one number first (y.sum(), y.mean()), or pass gradient=torch.ones_like(y) "
           "(or any tensor shaped like y)."),
    ),
    _Known(
        re.compile(r"modified by an inplace operation: (?P<tensor>\[.*?\]), which is output \d+ of \w+, "
                   r"is at version (?P<found>\d+); expected version (?P<expected>\d+)"),
        "11_inplace_version",
        N_("An operation saved the tensor {tensor} for its backward when the tensor's version counter was "
           "{expected}. An in-place operation (a method ending in _, +=, x[...] = ...) changed it afterwards and "
           "its version is now {found}, so the derivative would use the wrong values: PyTorch refuses."),
        N_("Use the out-of-place form (x = x + 1 instead of x += 1, torch.relu(x) instead of x.relu_()), or "
           "modify a clone() and leave the saved tensor alone."),
    ),
    _Known(
        re.compile(r"does not require grad|can't retain_grad on Tensor that has requires_grad=False"),
        "05_requires_grad",
        N_("Autograd only records operations on tensors that require grad (created with requires_grad=True, "
           "or computed from one outside torch.no_grad()). This tensor was never recorded, so there is no "
           "graph to differentiate through it."),
        N_("Create the leaf with requires_grad=True (or call .requires_grad_() on it) before computing from "
           "it, and keep that computation out of torch.no_grad()."),
    ),
    _Known(
        re.compile(r"is not a leaf Tensor is being accessed"),
        "07_backward",
        N_("Only leaf tensors (the ones you created with requires_grad=True) keep a .grad. This tensor was "
           "computed by an operation: backward passes its gradient on towards the leaves without storing it "
           "here, so its .grad is None."),
        N_("Call .retain_grad() on it before backward() to keep its gradient, or read the .grad of the leaf."),
    ),
    _Known(
        re.compile(r"appears to not have been used in the graph"),
        "08_autograd_grad",
        N_("autograd.grad was asked for a gradient with respect to a tensor the outputs do not depend on: no "
           "path in the graph leads from the outputs to it."),
        N_("Check that the outputs are computed from this input, or pass allow_unused=True to get None for it."),
    ),
)

_GENERIC = N_(
    "The request raised this error; the message above is Python's or PyTorch's own. The lesson is still "
    "paused and can go on."
)


def explain(problem: BaseException | Warning | str, kind: str | None = None) -> dict[str, Any]:
    """A PyTorch error or warning as a result: its message, what it means, the fix, the lesson.

    Parameters
    ----------
    problem : exception, warning or str
        What went wrong; a string is taken as the message itself.
    kind : str, optional
        The type name to report, when ``problem`` is a string.

    Returns
    -------
    dict
        ``{"type", "message", "explanation", "fix", "lesson", "versions", "texts"}``; ``versions`` is
        ``{"found", "expected"}`` for an in-place modification of a saved tensor, else None.
        ``explanation`` and ``fix`` are in English; ``texts`` is ``{"explanation", "fix", "fields"}``,
        their English templates (the message ids of :mod:`app.i18n`) and the fields that fill them,
        so the app shows them in the learner's language (and again after a change of language).
    """
    message = str(problem)
    result = {
        "type": kind or type(problem).__name__,
        "message": message,
        "explanation": _GENERIC,
        "fix": None,
        "lesson": None,
        "versions": None,
        "texts": {"explanation": _GENERIC, "fix": None, "fields": {}},
    }
    for known in _KNOWN:
        match = known.pattern.search(message)
        if match:
            groups = match.groupdict()
            result.update(explanation=known.explanation.format(**groups), fix=known.fix, lesson=known.lesson,
                          texts={"explanation": known.explanation, "fix": known.fix, "fields": groups})
            if "found" in groups:
                result["versions"] = {"found": int(groups["found"]), "expected": int(groups["expected"])}
            break
    return result


def _as_list(expressions: Expressions) -> list[str]:
    return [expressions] if isinstance(expressions, str) else list(expressions)


class _Replay:
    """Records each node as a backward pass runs it, through hooks removed afterwards.

    The engine runs a node only once every node feeding it a gradient has run, so the
    recorded order is a reverse topological order of the graph.

    ``torch.autograd.grad`` (a preview, the grad form) never runs the ``AccumulateGrad`` node
    of a leaf it was asked about: the engine takes the gradient from the node's input and
    returns it instead of adding it to ``.grad``, so no node hook sees it. A hook on each such
    leaf tensor fires at that moment, with the gradient the node would have received; it is
    recorded as the node's step with ``"stored": False``. A preview and a real backward of
    the same graph so list the same nodes, in the same order.

    Parameters
    ----------
    roots : list
        The nodes the pass starts from.
    names : dict
        ``id(tensor) -> name`` of the frame's tensors.
    snapshot : callable
        Summarises a tensor (or None) as it is now.
    captured : list, optional
        The tensors ``torch.autograd.grad`` computes gradients for; nothing for a ``backward()``.
    """

    def __init__(self, roots: list[Any], names: dict[int, str], snapshot: Any,
                 captured: list[Any] | None = None) -> None:
        self.steps: list[dict[str, Any]] = []
        self._names = names
        self._snapshot = snapshot
        self._handles: list[Any] = []
        accumulators = {}
        for node in reachable_nodes(roots):
            kind = node_kind(node)
            leaf = getattr(node, "variable", None) if kind == "leaf" else None
            if leaf is not None:
                accumulators[id(leaf)] = node
            hook = functools.partial(self._record, node_id(node), node_name(node), kind, leaf)
            self._handles.append(node.register_hook(hook))
        for tensor in {id(t): t for t in captured or []}.values():
            node = accumulators.get(id(tensor))
            if node is not None:  # a leaf this pass reaches; a non-leaf input has no AccumulateGrad
                hook = functools.partial(self._record_handed_back, node_id(node), node_name(node), tensor)
                self._handles.append(tensor.register_hook(hook))

    def __enter__(self) -> _Replay:
        return self

    def __exit__(self, *_exc: object) -> None:
        for handle in self._handles:
            handle.remove()

    def _record(self, nid: int, name: str, kind: str, leaf: Any, grad_inputs: tuple, grad_outputs: tuple) -> None:
        self.steps.append({
            "step": len(self.steps),
            "id": nid,
            "name": name,
            "kind": kind,
            "grads_in": [self._snapshot(g) for g in grad_outputs],  # arriving from the root's side
            "grads_out": [self._snapshot(g) for g in grad_inputs],  # passed on to next_functions
            "variable": None if leaf is None else self._names.get(id(leaf)),
            "grad": None if leaf is None else self._snapshot(leaf.grad),
            "stored": True if kind == "leaf" else None,
        })

    def _record_handed_back(self, nid: int, name: str, leaf: Any, grad: Any) -> None:
        self.steps.append({
            "step": len(self.steps),
            "id": nid,
            "name": name,
            "kind": "leaf",
            "grads_in": [self._snapshot(grad)],
            "grads_out": [],
            "variable": self._names.get(id(leaf)),
            "grad": None,  # .grad is left as it was
            "stored": False,
        })


class AutogradActions:
    """Autograd requests run in a paused frame.

    Parameters
    ----------
    frame_globals, frame_locals : dict
        The paused frame's namespaces (the same dict twice for module-level code).
    summarizer : Summarizer
        Summarises results; its tensor summaries are copied so later in-place changes
        (a backward accumulating into ``.grad``) cannot alter a summary already taken.

    Notes
    -----
    Node ids in replays are the ids :class:`~app.lesson.autograd_graph.GraphTracker` reports.
    """

    def __init__(self, frame_globals: dict[str, Any], frame_locals: dict[str, Any], summarizer: Summarizer) -> None:
        self._globals = frame_globals
        self._locals = frame_locals
        self._summarizer = summarizer
        self._console: dict[str, Any] = {}

    # ---- actions ------------------------------------------------------------------------

    def evaluate(self, expr: str) -> dict[str, Any]:
        """Evaluate an expression in the frame (watch or console) and summarise its value.

        Returns
        -------
        dict
            ``{"ok", "error", "summary", "warning"}``; ``warning`` explains a warning the
            expression raised, such as reading ``.grad`` of a non-leaf.
        """
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = self._eval(expr)
        except Exception as exc:
            return self._failed(exc, summary=None, warning=None)
        warning = explain(caught[0].message, caught[0].category.__name__) if caught else None
        return self._done(summary=self._summarizer.summarize(value), warning=warning)

    def preview_gradients(self, root_expr: str, inputs: Expressions | None = None,
                          gradient: str | None = None) -> dict[str, Any]:
        """The gradients a backward from ``root_expr`` would produce, without changing anything.

        Uses ``torch.autograd.grad(..., retain_graph=True)`` with respect to ``inputs`` or, by
        default, every leaf that requires grad and that the root depends on.

        Returns
        -------
        dict
            ``{"ok", "error", "root", "vector_jacobian_product", "gradient", "grads", "replay"}``:
            ``grads`` is ``[{"name", "grad"}]``, ``gradient`` the vector used for a non-scalar root
            (``ones_like`` unless ``gradient`` gives one), ``replay`` the nodes as the pass reached
            them: the same nodes a backward would run, the leaves' ``AccumulateGrad`` with
            ``"stored": False`` (see :class:`_Replay`).
        """
        torch = sys.modules["torch"]
        result = {"root": root_expr, "vector_jacobian_product": False, "gradient": None, "grads": [], "replay": []}
        try:
            root = self._eval_tensor(root_expr)
            # With no leaf to differentiate for, ask for the root itself: PyTorch then says why.
            targets = self._tensors(inputs) if inputs is not None else self._leaves_under(root) or [(root_expr, root)]
            vector = self._eval_tensor(gradient) if gradient is not None else None
            if vector is None and root.numel() != 1:
                vector = torch.ones_like(root)
            result["vector_jacobian_product"] = root.numel() != 1
            result["gradient"] = self._snapshot(vector)
            with self._retained_grads_kept(), self._replay([root], [t for _, t in targets]) as replay:
                result["replay"] = replay.steps  # filled as the nodes run, kept if one fails
                grads = torch.autograd.grad([root], [t for _, t in targets], grad_outputs=[vector],
                                            retain_graph=True, allow_unused=True)
        except Exception as exc:
            return self._failed(exc, **result)
        result["grads"] = self._named_grads(targets, grads)
        return self._done(**result)

    def run_backward(self, root_expr: str, gradient: str | None = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Expressions | None = None) -> dict[str, Any]:
        """Call ``root.backward(...)`` for real, as the script itself would.

        Parameters mirror ``Tensor.backward``; ``gradient`` and ``inputs`` are expressions.

        Returns
        -------
        dict
            ``{"ok", "error", "root", "grads", "freed", "freed_nodes", "replay"}``: ``grads`` is
            ``[{"name", "is_leaf", "before", "after"}]`` for every leaf (and every frame tensor
            retaining its grad) the backward could reach, ``freed_nodes`` the ids of nodes whose
            saved tensors are now freed, ``replay`` the nodes as they ran (see :class:`_Replay`).
            Also filled after an error, to show what did change.
        """
        result: dict[str, Any] = {"root": root_expr, "grads": [], "freed": False, "freed_nodes": [], "replay": []}
        try:
            root = self._eval_tensor(root_expr)
            vector = self._eval_tensor(gradient) if gradient is not None else None
            chosen = self._tensors(inputs) if inputs is not None else None
        except Exception as exc:
            return self._failed(exc, **result)
        watched = chosen if chosen is not None else self._leaves_under(root) + self._retaining_under(root)
        before = [self._snapshot(t.grad) for _, t in watched]
        error = None
        with self._replay([root]) as replay:
            result["replay"] = replay.steps
            try:
                root.backward(gradient=vector, retain_graph=retain_graph, create_graph=create_graph,
                              inputs=[t for _, t in chosen] if chosen else None)
            except Exception as exc:
                error = exc
        result["grads"] = [
            {"name": name, "is_leaf": t.is_leaf, "before": b, "after": self._snapshot(t.grad)}
            for (name, t), b in zip(watched, before, strict=True)
        ]
        result["freed_nodes"] = self._freed_under(root)
        result["freed"] = bool(result["freed_nodes"])
        return self._failed(error, **result) if error is not None else self._done(**result)

    def autograd_grad(self, outputs: Expressions, inputs: Expressions, grad_outputs: Expressions | None = None,
                      retain_graph: bool | None = None, create_graph: bool = False,
                      allow_unused: bool = False) -> dict[str, Any]:
        """Call ``torch.autograd.grad`` with tensors given as expressions.

        The results stay available to later expressions as ``_grads`` (a tuple, one per input),
        so a second derivative is ``autograd_grad("_grads[0].sum()", "x")`` after a first call
        with ``create_graph=True``.

        Returns
        -------
        dict
            ``{"ok", "error", "grads", "replay"}`` with ``grads`` ``[{"name", "grad"}]``; the
            ``AccumulateGrad`` steps of leaf inputs in ``replay`` have ``"stored": False``.
        """
        torch = sys.modules["torch"]
        result: dict[str, Any] = {"grads": [], "replay": []}
        try:
            outs = [t for _, t in self._tensors(outputs)]
            ins = self._tensors(inputs)
            vectors = [t for _, t in self._tensors(grad_outputs)] if grad_outputs is not None else None
            with self._replay(outs, [t for _, t in ins]) as replay:
                result["replay"] = replay.steps
                grads = torch.autograd.grad(outs, [t for _, t in ins], grad_outputs=vectors,
                                            retain_graph=retain_graph, create_graph=create_graph,
                                            allow_unused=allow_unused)
        except Exception as exc:
            return self._failed(exc, **result)
        self._console[RESULTS_NAME] = grads
        result["grads"] = self._named_grads(ins, grads)
        return self._done(**result)

    def zero_grad(self, names: Expressions) -> dict[str, Any]:
        """Set the ``.grad`` of the given tensors (or modules' parameters) to zeros, in place.

        Returns
        -------
        dict
            ``{"ok", "error", "grads"}`` with ``grads`` ``[{"name", "before", "after"}]``.
        """
        return self._change_grads(names, _zero)

    def clear_grad(self, names: Expressions) -> dict[str, Any]:
        """Set the ``.grad`` of the given tensors (or modules' parameters) to None.

        Returns
        -------
        dict
            ``{"ok", "error", "grads"}`` with ``grads`` ``[{"name", "before", "after"}]``.
        """
        return self._change_grads(names, _clear)

    def retain_grad(self, name: str) -> dict[str, Any]:
        """Call ``.retain_grad()`` on a tensor so the next backward keeps its ``.grad``.

        Returns
        -------
        dict
            ``{"ok", "error", "name", "summary"}``; a leaf keeps its grad anyway (a no-op).
        """
        try:
            tensor = self._eval_tensor(name)
            tensor.retain_grad()
        except Exception as exc:
            return self._failed(exc, name=name, summary=None)
        return self._done(name=name, summary=self._snapshot(tensor))

    # ---- helpers ------------------------------------------------------------------------

    def _eval(self, expr: str) -> Any:
        local = {**self._locals, **self._console} if self._console else self._locals
        with learner_code():  # what the learner typed sees the lesson's torch modes, as in the lesson
            return eval(expr, self._globals, local)  # noqa: S307 - the debugger console, on purpose

    def _eval_tensor(self, expr: str) -> Any:
        value = self._eval(expr)
        if not isinstance(value, sys.modules["torch"].Tensor):
            raise TypeError(f"{expr} is a {type(value).__name__}, not a tensor")
        return value

    def _tensors(self, expressions: Expressions) -> list[tuple[str, Any]]:
        """Each expression's tensor, or the tensors inside its module, list or dict, named."""
        found = []
        for expr in _as_list(expressions):
            value = self._eval(expr)
            tensors = find_tensors({expr: value})
            if not tensors:
                raise TypeError(f"{expr} is a {type(value).__name__} holding no tensor")
            found.extend(tensors)
        return found

    def _frame_tensors(self) -> list[tuple[str, Any]]:
        """The frame's tensors, each once under its first name, locals before globals."""
        seen: dict[int, tuple[str, Any]] = {}
        for namespace in (self._locals, self._globals):
            for name, tensor in find_tensors(namespace):
                seen.setdefault(id(tensor), (name, tensor))
        return list(seen.values())

    def _names(self) -> dict[int, str]:
        return {id(tensor): name for name, tensor in self._frame_tensors()}

    def _leaves_under(self, root: Any) -> list[tuple[str, Any]]:
        """The leaves requiring grad that ``root`` depends on, named as in the frame."""
        if root.grad_fn is None:
            return [(self._names().get(id(root), "root"), root)] if root.requires_grad else []
        names = self._names()
        leaves = [node.variable for node in reachable_nodes([root.grad_fn]) if node_kind(node) == "leaf"]
        return [(names.get(id(t), f"<leaf {list(t.shape)}>"), t) for t in leaves]

    def _retaining_under(self, root: Any) -> list[tuple[str, Any]]:
        """The frame's non-leaf tensors that retain their grad and that ``root`` depends on."""
        if root.grad_fn is None:
            return []
        nodes = set(reachable_nodes([root.grad_fn]))
        return [(name, t) for name, t in self._frame_tensors() if t.retains_grad and t.grad_fn in nodes]

    def _freed_under(self, root: Any) -> list[int]:
        if root.grad_fn is None:
            return []
        return [node_id(node) for node in reachable_nodes([root.grad_fn]) if released(node)]

    def _replay(self, roots: list[Any], captured: list[Any] | None = None) -> _Replay:
        """Record the pass from ``roots``; ``captured``: the inputs of a ``torch.autograd.grad``."""
        nodes = [t.grad_fn for t in roots if t.grad_fn is not None]
        return _Replay(nodes, self._names(), self._snapshot, captured)

    def _retained_grads_kept(self) -> _GradsKept:
        return _GradsKept([t for _, t in self._frame_tensors() if t.retains_grad])

    def _change_grads(self, names: Expressions, change: Any) -> dict[str, Any]:
        try:
            targets = self._tensors(names)
            for _, tensor in targets:
                _check_keeps_grad(tensor)
        except Exception as exc:
            return self._failed(exc, grads=[])
        before = [self._snapshot(t.grad) for _, t in targets]
        for _, tensor in targets:
            change(tensor)
        grads = [
            {"name": name, "before": b, "after": self._snapshot(t.grad)}
            for (name, t), b in zip(targets, before, strict=True)
        ]
        return self._done(grads=grads)

    def _named_grads(self, named: list[tuple[str, Any]], grads: tuple) -> list[dict[str, Any]]:
        return [{"name": name, "grad": self._snapshot(g)} for (name, _), g in zip(named, grads, strict=True)]

    def _snapshot(self, tensor: Any) -> dict[str, Any] | None:
        """A tensor's summary whose values are a copy, so they stay as they are now."""
        if tensor is None:
            return None
        summary = dict(self._summarizer.tensors.summarize(tensor))
        if summary.get("values") is not None:
            summary["values"] = summary["values"].copy()
        return summary

    @staticmethod
    def _done(**fields: Any) -> dict[str, Any]:
        return {"ok": True, "error": None, **fields}

    @staticmethod
    def _failed(exc: BaseException, **fields: Any) -> dict[str, Any]:
        return {"ok": False, "error": explain(exc), **fields}


class _GradsKept:
    """Puts back the ``.grad`` of tensors that retain it: ``autograd.grad`` would accumulate into them."""

    def __init__(self, tensors: list[Any]) -> None:
        self._kept = [(t, t.grad) for t in tensors]

    def __enter__(self) -> _GradsKept:
        return self

    def __exit__(self, *_exc: object) -> None:
        for tensor, grad in self._kept:
            tensor.grad = grad


def _check_keeps_grad(tensor: Any) -> None:
    """Raise PyTorch's own warning about ``.grad`` of a non-leaf for a tensor that keeps no ``.grad``."""
    if tensor.is_leaf or tensor.retains_grad:
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tensor.grad  # noqa: B018 - read for the warning PyTorch gives
    raise caught[0].message if caught else UserWarning("not a leaf tensor: its .grad is None")


def _zero(tensor: Any) -> None:
    """As ``Module.zero_grad(set_to_none=False)`` does it."""
    grad = tensor.grad
    if grad is None:
        return
    if grad.grad_fn is not None:
        grad.detach_()
    else:
        grad.requires_grad_(False)
    grad.zero_()


def _clear(tensor: Any) -> None:
    tensor.grad = None
