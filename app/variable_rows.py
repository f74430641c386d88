"""The rows of the Variables tree, without Qt: one per group, variable and item, with its cell texts and what changed.

:class:`VariableRows` lays out a pause's variables (Locals and Globals apart, a module's
parameters, a container's items), fills each row's cells once, when the pause arrives, and
marks what differs from the step before; the Qt tree model over it
(:class:`widgets.variables_view.VariablesModel`) reads the rows and follows its events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from app.events import Event
from app.i18n import N_, tr
from app.value_text import describe_change, field_tip, grad_text, grad_words, is_tensor, summary_line, value_tip
from app.value_tree import GLOBALS, LOCALS, child_path, children, groups, summaries_by_path

NAME, VALUE, SHAPE, DTYPE, DEVICE, REQUIRES_GRAD, IS_LEAF, GRAD_FN, GRAD, VERSION = range(10)
#: Column headers: "Name" and "Value" are words (translated when shown), the others PyTorch's names.
HEADERS = [N_("Name"), N_("Value"), "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "grad",
           "_version"]
HEADER_TIPS = [
    N_("the variable, or the expression that reaches an item inside it"),
    N_("a one-line summary: type, shape, dtype, mean μ and spread σ, the first values"),
    N_("the size of each dimension"),
    N_("the type of each element"),
    N_("where the values live (cpu memory or a GPU)"),
    N_("whether autograd records the operations done with this tensor"),
    N_("whether this tensor was created directly rather than computed from others"),
    N_("the autograd node that produced this tensor"),
    N_("what .grad holds: the gradient's values, nothing yet, or nothing because the tensor is not a leaf"),
    N_("how many times the tensor was changed in place"),
]


class Row:
    """One row of the tree: its cell texts are computed once, when the snapshot arrives."""

    __slots__ = ("name", "path", "expression", "summary", "parent", "row", "children", "cells", "change", "top")

    def __init__(self, name: str, path: str, expression: str | None, summary: dict[str, Any] | None,
                 parent: Row | None, top: str) -> None:
        self.name = name
        self.path = path
        """Stable across pauses: ``Locals:xs[0]``."""
        self.expression = expression
        """What evaluates to the row's value in the frame, or None (a set's item)."""
        self.summary = summary
        """None for a group row."""
        self.parent = parent
        self.row = len(parent.children) if parent is not None else 0
        """The row's place among its parent's children."""
        self.children: list[Row] = []
        self.cells: list[str] = [name] + [""] * (len(HEADERS) - 1)
        """The cell texts by column; the grad column keeps the gradient's values, or the state without one
        (:data:`~app.value_text.GRAD_STATES`)."""
        self.change = ""
        """What the step that led here changed, in words; '' when nothing did."""
        self.top = top
        """The variable the row belongs to."""

    def walk(self) -> Iterator[Row]:
        """This row and every row under it, in tree order."""
        yield self
        for child in self.children:
            yield from child.walk()


def _fill_tensor_cells(row: Row, summary: dict[str, Any]) -> None:
    cells = row.cells
    cells[SHAPE] = f"[{', '.join(map(str, summary['shape']))}]"
    cells[DTYPE] = summary["dtype"]
    cells[DEVICE] = summary["device"]
    cells[REQUIRES_GRAD] = str(summary["requires_grad"])
    cells[IS_LEAF] = str(summary["is_leaf"])
    cells[GRAD_FN] = summary["grad_fn"] or "None"
    cells[GRAD] = grad_text(summary)
    cells[VERSION] = str(summary["version"])


class VariableRows:
    """A pause's variables as a tree of :class:`Row`, filtered by name, marked where the step before differs.

    Events
    ------
    about_to_be_replaced()
        Other rows are about to replace the shown ones (other names, another filter): the rows
        under :attr:`root` are still the old ones.
    replaced()
        :attr:`root` holds the new rows.
    refilled()
        The same rows (the same paths, in the same order) took a new pause's contents in place:
        the :class:`Row` objects stay, so a view keeps its place without laying out again.
    """

    def __init__(self) -> None:
        self.root = Row("", "", None, None, None, "")
        """The invisible row above the groups (or above the variables, in the module frame)."""
        self._by_path: dict[str, Row] = {}
        self._vars: dict[str, Any] = {}
        self._globals: dict[str, Any] = {}
        # Summaries by path of the step before the shown one; None when there is nothing to compare with.
        self._previous: dict[str, dict[str, Any]] | None = None
        self._filter = ""
        # The summaries last laid out (identity, not equality: a tensor summary holds arrays).
        self._source: tuple[Any, Any, Any] = (self._vars, self._globals, None)
        self.about_to_be_replaced = Event()
        self.replaced = Event()
        self.refilled = Event()

    def set_snapshot(self, variables: dict[str, Any], globals_: dict[str, Any],
                     before: dict[str, Any] | None = None) -> bool:
        """Lay out a pause's variables, marking rows that differ from ``before`` (a pause's ``vars``, ``globals``).

        Returns whether the rows were replaced (other names), not only given new contents. The very
        summaries laid out last time (the step in view again, as the lesson runs on from it) change nothing.
        """
        if all(new is old for new, old in zip((variables, globals_, before), self._source, strict=True)):
            return False
        self._source = (variables, globals_, before)
        self._previous = summaries_by_path(before["vars"], before.get("globals") or {}) \
            if before is not None else None
        self._vars, self._globals = variables, globals_
        return self._rebuild()

    def set_filter(self, text: str) -> bool:
        """Keep only variables whose name (or an item's or parameter's name) contains ``text``, ignoring case."""
        self._filter = text.strip().lower()
        return self._rebuild()

    def clear(self) -> bool:
        """No rows, and forget the step before."""
        self._previous = None
        self._vars, self._globals = {}, {}
        self._source = (self._vars, self._globals, None)
        return self._rebuild()

    def row(self, path: str) -> Row | None:
        """The row with ``path``, or None."""
        return self._by_path.get(path)

    def new_names(self) -> list[Row]:
        """The variables the step that led here made (names the step before did not have), in tree order;
        none when there is no step before to compare with."""
        if self._previous is None:
            return []
        return [row for row in self.root.walk()  # a variable's row: its parent is a group (or the root)
                if row.summary is not None and row.parent is not None and row.parent.summary is None
                and row.path not in self._previous]

    def paths(self) -> list[str]:
        """Every row's path, in tree order."""
        return [row.path for row in self.root.walk()][1:]

    def retranslate(self) -> None:
        """Word the values of containers and modules (``list · 6 items``) again, in the interface's language."""
        for row in self.root.walk():
            if row.summary is not None and not is_tensor(row.summary):
                row.cells[VALUE] = summary_line(row.summary)

    def text(self, row: Row, column: int) -> str:
        """A cell in the interface's language: group rows and grad states are words; the rest is data."""
        if row.summary is None and row.name in (LOCALS, GLOBALS) and row.parent is self.root:
            if column == NAME:
                return tr(row.name)
            if column == VALUE:
                count = len(row.children)
                return tr("{n} variable", n=count) if count == 1 else tr("{n} variables", n=count)
        if column == GRAD:
            return grad_words(row.cells[column])
        return row.cells[column]

    def tooltip(self, row: Row, column: int) -> str | None:
        """What a cell means, and what the step that led here changed in its row; None for a group row."""
        summary = row.summary
        if summary is None:
            return None
        tip = _cell_tip(row, summary, column)
        if row.change:
            tip = tr("{tip}\n\nChanged by the step that led here: {change}", tip=tip, change=row.change) if tip \
                else tr("Changed: {change}", change=row.change)
        return tip or None

    def name_width(self, measure: Callable[[str], int], indentation: int) -> int:
        """Pixels the Name column needs for every row, nested rows indented; ``measure(text)`` gives a text's."""
        def width(row: Row, depth: int) -> int:
            own = measure(row.name) + indentation * depth
            return max([own, *(width(child, depth + 1) for child in row.children)])

        return max((width(row, 1) for row in self.root.children), default=0)

    def text_widths(self, measure: Callable[[str, bool], int], columns: list[int]) -> dict[int, int]:
        """Pixels the longest text of each of ``columns`` takes over every row, as ``measure(text, bold)`` says."""
        widths = dict.fromkeys(columns, 0)
        for row in self.root.walk():
            bold = bool(row.change) or row.summary is None
            for column in columns:
                text = self.text(row, column)
                if text:
                    widths[column] = max(widths[column], measure(text, bold))
        return widths

    # ---- building ---------------------------------------------------------------------------

    def _rebuild(self) -> bool:
        """Build the rows for the snapshot and filter; returns whether they replaced the shown ones.

        At most pauses the rows are the same variables with new values: then the shown rows take
        the new contents in place (:attr:`refilled`), which lets a view keep expansions, the
        current row and the scroll position without laying out again (that cost 5 ms of each
        step with 20 tensors in scope).
        """
        root = Row("", "", None, None, None, "")
        for group, namespace in groups(self._vars, self._globals):
            parent = root
            if group:
                parent = Row(group, group, None, None, root, "")
            for name, summary in namespace.items():
                self._add(parent, name, f"{group}:{name}", name, summary, name, child=False)
            if group and parent.children:
                root.children.append(parent)
        if self._filter:
            self._apply_filter(root)
        old, new = list(self.root.walk()), list(root.walk())
        if len(old) == len(new) and all(a.path == b.path for a, b in zip(old, new, strict=True)) and len(old) > 1:
            for kept, fresh in zip(old, new, strict=True):
                kept.name, kept.expression, kept.summary = fresh.name, fresh.expression, fresh.summary
                kept.cells, kept.change, kept.top = fresh.cells, fresh.change, fresh.top
            self.refilled.emit()
            return False
        self.about_to_be_replaced.emit()
        self.root = root
        self._by_path = {row.path: row for row in root.walk()}
        self.replaced.emit()
        return True

    def _add(self, parent: Row, name: str, path: str, expression: str | None, summary: dict[str, Any],
             top: str, child: bool) -> Row:
        row = Row(name, path, expression, summary, parent, top)
        parent.children.append(row)
        row.cells[VALUE] = summary_line(summary)
        if is_tensor(summary):
            _fill_tensor_cells(row, summary)
        for child_name, child_expr, child_summary in children(summary, expression):
            self._add(row, child_name, child_path(path, child_name, child_expr), child_expr, child_summary,
                      top, child=True)
        if self._previous is not None:
            row.change = describe_change(self._previous.get(path), summary, child)
            inside = [c.name for c in row.children if c.change]
            if not row.change and inside:
                names = ", ".join(inside[:3]) + (", …" if len(inside) > 3 else "")
                row.change = tr("changed inside: {names}", names=names)
        return row

    def _apply_filter(self, root: Row) -> None:
        def matches(row: Row) -> bool:
            return any(self._filter in r.name.lower() for r in row.walk())

        parents = [g for g in root.children if g.summary is None] or [root]
        for parent in parents:
            parent.children = [r for r in parent.children if matches(r)]
            for place, row in enumerate(parent.children):
                row.row = place
        root.children = [g for g in root.children if g.summary is not None or g.children]
        for place, group in enumerate(root.children):
            group.row = place


def _cell_tip(row: Row, summary: dict[str, Any], column: int) -> str:
    if column == NAME:
        return f"{row.expression or row.name} — {summary.get('type', '')}"
    if not is_tensor(summary):
        return summary.get("repr", "") if column == VALUE else ""
    if column == VALUE:
        return value_tip(summary)
    return field_tip(HEADERS[column], summary)
