"""The Backward panel's two forms: ``backward()`` from a root of the paused frame, and ``torch.autograd.grad``.

Features
--------
- :class:`BackwardTab`: a root picker over the frame's tensors that have a ``grad_fn`` or require
  grad, saying whether the chosen root is a scalar; the ``gradient`` option is automatic for a
  scalar and, for any other root, ``ones_like`` or an expression, with a one-line explanation of
  the vector-Jacobian product; ``retain_graph`` and ``create_graph``; **Preview gradients**
  (changes nothing in the lesson) and **Run backward()** (changes ``.grad`` for real).
- :class:`GradTab`: outputs, inputs, grad_outputs, ``retain_graph``, ``create_graph`` and
  ``allow_unused``, so a second derivative can be taken from the UI; a warning while the form
  would free the lesson's graph.

Both show and edit a :class:`~app.backward_form.BackwardForm`: what the learner types or picks
goes into the model, and the model's changes come back onto the widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.backward_form import EXPRESSION, ONES_LIKE, BackwardForm
from app.i18n import N_, tr
from app.messages import RESULTS_NAME
from widgets.colours import keep_readable
from widgets.translated_texts import TranslatedTexts

PREVIEW_TIP = N_("Computes the gradients with torch.autograd.grad(..., retain_graph=True): "
                 "changes nothing in the lesson")
BACKWARD_TIP = N_("Calls root.backward(...) for real: .grad changes (and the graph is freed unless "
                  "retain_graph) as if the line were in the script")
GRAD_TIP = N_("Returns the gradients without touching any .grad; they stay available to expressions as {results}")


def _set_checked(check: QCheckBox, on: bool) -> None:
    if check.isChecked() != on:
        check.setChecked(on)


def _set_text(edit: QLineEdit, text: str) -> None:
    if edit.text() != text:  # the same text set again would move the learner's cursor
        edit.setText(text)


def _off_reason(form: BackwardForm) -> str:
    if form.open:
        return ""
    return tr("Not while a prediction waits for its answer") if form.paused else tr("Only while the lesson is paused")


class BackwardTab(QWidget):
    """The ``backward()`` form: root, gradient, options, Preview and Run backward()."""

    preview_requested = Signal(dict)
    """Preview gradients was clicked: ``{"root", "gradient", "retain_graph", "create_graph"}``."""

    backward_requested = Signal(dict)
    """Run backward() was clicked: ``{"root", "gradient", "retain_graph", "create_graph"}``."""

    def __init__(self, form: BackwardForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form
        self._texts = TranslatedTexts()
        self._build()
        form.variables_changed.connect(self._on_form_variables_changed)
        form.request_changed.connect(self._on_form_request_changed)
        form.state_changed.connect(self._on_form_state_changed)
        self._on_form_variables_changed()

    def _build(self) -> None:
        self.root_combo = QComboBox()
        self.root_combo.setObjectName("root_combo")
        self._texts.set(self.root_combo.setToolTip, "The tensor to call .backward() on: tensors of this frame "
                        "with a grad_fn or requires_grad=True")
        self.root_combo.activated.connect(self._on_root_combo_activated)
        self.root_combo.currentIndexChanged.connect(self._on_root_combo_current_index_changed)
        self.root_info = QLabel()
        self.root_info.setWordWrap(True)  # a narrow form wraps it rather than widening the panel
        self.root_info.setObjectName("root_info")
        self.gradient_combo = QComboBox()
        self.gradient_combo.currentIndexChanged.connect(self._on_gradient_combo_current_index_changed)
        self.gradient_edit = QLineEdit()
        self._texts.set(self.gradient_edit.setPlaceholderText, "e.g. {example}", example="torch.tensor([1., 0.])")
        self._texts.set(self.gradient_edit.setAccessibleName, "The gradient to start from (an expression)")
        self.gradient_edit.textChanged.connect(lambda text: self.form.set_backward(expression=text))
        self.vjp_label = QLabel()
        self.vjp_label.setObjectName("vjp_note")
        self.vjp_label.setWordWrap(True)
        self.retain_check = QCheckBox("retain_graph")
        self._texts.set(self.retain_check.setToolTip, "Keep the graph's saved tensors so it can be walked again "
                        "(unticked: PyTorch's default, which is the value of create_graph)")
        self.retain_check.toggled.connect(lambda on: self.form.set_backward(retain_graph=on))
        self.create_check = QCheckBox("create_graph")
        self._texts.set(self.create_check.setToolTip,
                        "Record the backward pass itself as a graph, for higher-order derivatives")
        self.create_check.toggled.connect(lambda on: self.form.set_backward(create_graph=on))
        self.preview_button = QPushButton()
        self._texts.set(self.preview_button.setText, "Preview gradients")
        self.preview_button.clicked.connect(self._on_preview_button_clicked)
        self.backward_button = QPushButton()
        self._texts.set(self.backward_button.setText, "Run backward()")
        self.backward_button.clicked.connect(self._on_backward_button_clicked)
        self._lay_out()

    def _lay_out(self) -> None:
        root_row = QHBoxLayout()
        root_row.addWidget(self.root_combo, 1)
        root_row.addWidget(self.root_info, 1)  # room for "scalar · SumBackward0" on one line: the form stays short
        gradient_row = QHBoxLayout()
        gradient_row.addWidget(self.gradient_combo)
        gradient_row.addWidget(self.gradient_edit, 1)
        checks = QHBoxLayout()
        checks.addWidget(self.retain_check)
        checks.addWidget(self.create_check)
        checks.addStretch(1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.preview_button)
        buttons.addWidget(self.backward_button)
        buttons.addStretch(1)
        form = QFormLayout()
        root_label = QLabel()
        self._texts.set(root_label.setText, "Root")
        form.addRow(root_label, root_row)
        form.addRow("gradient", gradient_row)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)  # the short bottom dock: the buttons and the replay in sight
        layout.setSpacing(4)
        layout.addLayout(form)
        layout.addWidget(self.vjp_label)
        layout.addLayout(checks)
        layout.addLayout(buttons)
        layout.addStretch(1)

    def retranslate(self) -> None:
        """Set every text again in the current language."""
        self._texts.apply()
        self._show_root()

    # ---- the model's changes --------------------------------------------------------------

    def _on_form_variables_changed(self) -> None:
        self.root_combo.blockSignals(True)
        self.root_combo.clear()
        self.root_combo.addItems(self.form.roots)
        self.root_combo.blockSignals(False)
        self._show_root()

    def _on_form_request_changed(self) -> None:
        self._show_root()

    def _on_form_state_changed(self) -> None:
        self._show_buttons()

    def _show_root(self) -> None:
        """The root, what it is, the gradient it needs and the options, as the model has them."""
        form, root = self.form, self.form.root
        if self.root_combo.currentText() != (root or ""):
            self.root_combo.blockSignals(True)
            self.root_combo.setCurrentIndex(self.root_combo.findText(root) if root else -1)
            self.root_combo.blockSignals(False)
        summary = form.variables.get(root or "")
        vector = form.is_vector(root)
        if summary is None:
            self.root_info.setText(tr("no tensor of this frame requires grad"))
        else:
            shape = summary.get("shape", [])
            what = tr("scalar") if not vector else tr("{shape}, not a scalar", shape=f"[{', '.join(map(str, shape))}]")
            self.root_info.setText(f"{what} · {summary.get('grad_fn') or tr('leaf')}")
        self._show_gradient(root, vector)
        self.vjp_label.setText(tr("{root} is not a scalar: backward computes the vector-Jacobian product "
                                  "vᵀ·∂{root}/∂leaf, v being the gradient; v = ones_like({root}) gives the "
                                  "gradient of {root}.sum().", root=root) if vector else "")
        self.vjp_label.setVisible(vector)
        _set_checked(self.retain_check, form.backward.retain_graph)
        _set_checked(self.create_check, form.backward.create_graph)
        self._show_buttons()

    def _show_gradient(self, root: str | None, vector: bool) -> None:
        """ones_like or an expression for a non-scalar root; automatic (1) for a scalar."""
        request = self.form.backward
        self.gradient_combo.blockSignals(True)
        self.gradient_combo.clear()
        if vector:
            self.gradient_combo.addItem(f"ones_like({root})", ONES_LIKE)
            self.gradient_combo.addItem(tr("expression:"), EXPRESSION)
            self.gradient_combo.setToolTip(tr("The vector v of the vector-Jacobian product"))
        else:
            self.gradient_combo.addItem(tr("automatic: 1 for a scalar"), None)
            self.gradient_combo.setToolTip(tr("A scalar root starts backward from d(root)/d(root) = 1"))
        self.gradient_combo.setCurrentIndex(max(0, self.gradient_combo.findData(request.gradient)))
        self.gradient_combo.blockSignals(False)
        self.gradient_combo.setEnabled(vector)
        _set_text(self.gradient_edit, request.expression)
        self.gradient_edit.setEnabled(request.gradient == EXPRESSION)
        self.gradient_edit.setVisible(vector)

    def _show_buttons(self) -> None:
        has_root = self.form.root is not None
        reason = _off_reason(self.form)
        for button, tip in ((self.preview_button, PREVIEW_TIP), (self.backward_button, BACKWARD_TIP)):
            button.setEnabled(self.form.open and has_root)
            button.setToolTip(reason or (tr(tip) if has_root else tr("No tensor of this frame requires grad")))

    # ---- the learner's input --------------------------------------------------------------

    def _on_root_combo_activated(self, index: int) -> None:
        self.form.set_root(self.root_combo.itemText(index), chosen=True)

    def _on_root_combo_current_index_changed(self, _index: int) -> None:
        self.form.set_root(self.root_combo.currentText() or None)

    def _on_gradient_combo_current_index_changed(self, _index: int) -> None:
        self.form.set_backward(gradient=self.gradient_combo.currentData())

    def _on_preview_button_clicked(self) -> None:
        self.form.sent()
        self.preview_requested.emit(self.form.backward_params())

    def _on_backward_button_clicked(self) -> None:
        self.form.sent()
        self.backward_requested.emit(self.form.backward_params())


class GradTab(QWidget):
    """The ``torch.autograd.grad`` form: outputs, inputs, grad_outputs, options and Compute."""

    grad_requested = Signal(dict)
    """The form was sent: ``{"outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "allow_unused"}``;
    ``retain_graph`` is True (the default, so the lesson's graph survives) or None."""

    def __init__(self, form: BackwardForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.form = form
        self._texts = TranslatedTexts()
        self.outputs_edit = self._edit("outputs")
        self._texts.set(self.outputs_edit.setPlaceholderText, "e.g. {example}", example="loss")
        self.inputs_edit = self._edit("inputs")
        self._texts.set(self.inputs_edit.setPlaceholderText, "e.g. {example}", example="x, w")
        self.grad_outputs_edit = self._edit("grad_outputs")
        self._texts.set(self.grad_outputs_edit.setPlaceholderText, "for non-scalar outputs, e.g. {example}",
                        example="torch.ones_like(y)")
        for edit in (self.outputs_edit, self.inputs_edit, self.grad_outputs_edit):
            self._texts.set(edit.setToolTip, "Comma-separated expressions. A second derivative: inputs x with "
                            "create_graph, then outputs {results}[0].sum()", results=RESULTS_NAME)
        self.grad_create_check = self._check("create_graph")
        self._texts.set(self.grad_create_check.setToolTip,
                        "Make the results differentiable: needed to take a second derivative")
        self.allow_unused_check = self._check("allow_unused")
        self._texts.set(self.allow_unused_check.setToolTip,
                        "Give None for an input the outputs do not depend on instead of an error")
        self.grad_retain_check = self._check("retain_graph")
        self._texts.set(self.grad_retain_check.setToolTip,
                        "Keep the graph's saved tensors, so the lesson's own backward() on this graph still works "
                        "afterwards (unticked: PyTorch's default, which frees them unless create_graph is ticked)")
        self.grad_free_warning = QLabel()
        self.grad_free_warning.setObjectName("grad_free_warning")
        self.grad_free_warning.setWordWrap(True)
        keep_readable(self.grad_free_warning, "#8a5a00", "#ffcc80")
        self._texts.set(self.grad_free_warning.setText,
                        "Unticked, Compute frees the saved tensors of the outputs' graph: a later backward() "
                        "through it, in the lesson or here, raises “Trying to backward through the graph a "
                        "second time”.")
        self.grad_button = QPushButton()
        self._texts.set(self.grad_button.setText, "Compute {call}", call="torch.autograd.grad")
        self.grad_button.clicked.connect(self._on_grad_button_clicked)
        self._lay_out()
        form.request_changed.connect(self._on_form_request_changed)
        form.state_changed.connect(self._on_form_state_changed)
        self._on_form_request_changed()
        self._on_form_state_changed()

    def _edit(self, field: str) -> QLineEdit:
        edit = QLineEdit()
        edit.textChanged.connect(self._setter(field))
        return edit

    def _check(self, field: str) -> QCheckBox:
        check = QCheckBox(field)
        check.toggled.connect(self._setter(field))
        return check

    def _setter(self, field: str) -> Callable[[Any], None]:
        return lambda value: self.form.set_grad(**{field: value})

    def _lay_out(self) -> None:
        checks = QHBoxLayout()
        checks.addWidget(self.grad_retain_check)
        checks.addWidget(self.grad_create_check)
        checks.addWidget(self.allow_unused_check)
        checks.addStretch(1)
        form = QFormLayout()
        form.addRow("outputs", self.outputs_edit)
        form.addRow("inputs", self.inputs_edit)
        form.addRow("grad_outputs", self.grad_outputs_edit)
        form.addRow("", checks)
        form.addRow("", self.grad_free_warning)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        row = QHBoxLayout()
        row.addWidget(self.grad_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(1)

    def retranslate(self) -> None:
        """Set every text again in the current language."""
        self._texts.apply()
        self._on_form_state_changed()

    def _on_form_request_changed(self) -> None:
        request = self.form.grad
        for edit, text in ((self.outputs_edit, request.outputs), (self.inputs_edit, request.inputs),
                           (self.grad_outputs_edit, request.grad_outputs)):
            _set_text(edit, text)
        for check, on in ((self.grad_retain_check, request.retain_graph), (self.grad_create_check,
                          request.create_graph), (self.allow_unused_check, request.allow_unused)):
            _set_checked(check, on)
        # warn while the form would free the graph (retain_graph unticked, and create_graph, which keeps it, too)
        self.grad_free_warning.setVisible(request.frees_graph)

    def _on_form_state_changed(self) -> None:
        self.grad_button.setEnabled(self.form.open)
        self.grad_button.setToolTip(_off_reason(self.form) or tr(GRAD_TIP, results=RESULTS_NAME))

    def _on_grad_button_clicked(self) -> None:
        self.form.sent()
        self.grad_requested.emit(self.form.grad.params())
