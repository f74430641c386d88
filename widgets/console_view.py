"""The output console: what the lesson printed, what the app says about the run, and an evaluation line.

Features
--------
- The lesson's stdout, stderr and native (C-level) output in one read-only pane; stderr and
  native output coloured, lines containing ``Warning:`` in amber. Chunks that split a line
  are joined into it.
- A print flood cannot freeze the window or eat memory: chunks are buffered and written
  about 30 times a second, one insertion per run of equally formatted text, and the
  scrollback is bounded; what a single write could not keep is dropped with a note saying how
  many lines were lost.
- The app's own messages (run started, lesson ended, ...) in italics, coloured by kind.
- Errors as a user-frames traceback whose ``File "lesson.py", line 12`` lines are links:
  clicking one emits :attr:`ConsoleView.line_activated`.
- A ``>>>`` line that asks to evaluate an expression in the paused frame, with Up/Down
  history; results print as a repr, or for a tensor as a short multi-line description.
- "Clear" in the context menu and as a button.
- A view of a :class:`~app.transcript.Transcript`: everything it shows is an entry there, so
  showing the transcript again (back from a past step) redraws all of it.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFontDatabase,
    QGuiApplication,
    QMouseEvent,
    QPalette,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QToolButton, QVBoxLayout, QWidget

from app import messages as m
from app.i18n import N_, error_texts, tr
from app.shown_step import Step
from app.transcript import Entry, Transcript, shown
from app.value_text import short_dtype, summary_line
from widgets.colours import blend, readable_color
from widgets.text_size import fixed_font
from widgets.theme import follow_palette

#: Lines of scrollback kept by default.
MAX_LINES = 5_000
#: Characters of one output line that are drawn; the rest of a longer line is counted and said, not drawn.
#: Qt lays a line out whole, and its cost grows faster than the line: 0.46 s for 100,000 characters,
#: 41 s for 1,000,000, so one ``print`` of a long string froze the window.
LINE_CHARS = 10_000
#: The stream name of the note that ends a cut line (drawn in the "info" format).
_CUT_NOTE = "cut"
#: Milliseconds between two writes of buffered output (about 30 Hz).
FLUSH_INTERVAL_MS = 33
#: Tensors with at most this many elements print their values; bigger ones print statistics only.
PRINT_VALUES = 100
_LINK_PREFIX = "line:"
_ENABLED_HINT = N_("Evaluate an expression in the paused frame (Up/Down: history)")
_DISABLED_HINT = N_("Pause the lesson to evaluate expressions")
#: Why the console cannot evaluate, by what the window shows (anything else: the lesson runs or has not started).
_WHY_NOT = {
    "past": N_("Viewing the past: Ctrl+Shift+F10 goes back to live, where expressions can be evaluated"),
    "ended": N_("The run has ended: F5 or F10 starts it again to evaluate expressions"),
    "idle": N_("F10 or F5 starts the lesson paused at its first line, where expressions can be evaluated"),
}
#: The placeholders, by what the window shows: short enough for the console at 1280 px (the tooltip says it whole).
_SHORT_HINTS = {
    "paused": N_("An expression to evaluate here (Up/Down: history)"),
    "past": N_("The past: Ctrl+Shift+F10 leads back to evaluating"),
    "ended": N_("The run has ended: F5 or F10 runs it again"),
    "idle": N_("F10 or F5 starts the lesson, paused"),
}


def describe_value(summary: dict[str, Any]) -> list[str]:
    """A value summary as the console prints it: a tensor as a few lines, anything else as its repr."""
    if summary.get("type") not in ("Tensor", "Parameter"):
        return str(summary.get("repr", summary.get("type", "?"))).splitlines() or [""]
    shape = "[" + ", ".join(map(str, summary["shape"])) + "]"
    lines = [f"{summary['type']}  shape={shape}  dtype={short_dtype(summary['dtype'])}  device={summary['device']}"]
    flags = [f"requires_grad={summary['requires_grad']}", f"is_leaf={summary['is_leaf']}"]
    if summary.get("grad_fn"):
        flags.append(f"grad_fn={summary['grad_fn']}")
    if summary.get("retains_grad"):
        flags.append("retains_grad")
    flags.append(f"_version={summary['version']}")
    lines.append("  " + "  ".join(flags))
    values = summary.get("values")
    if values is not None and summary["numel"] <= PRINT_VALUES and not summary.get("sampled"):
        text = np.array2string(np.asarray(values), precision=4, suppress_small=True, max_line_width=100)
        lines.extend("  " + line for line in text.splitlines())
    elif summary.get("mean") is not None:
        count = tr("{n} values", n=f"{summary['numel']:,}")
        lines.append(f"  {count}  min={summary['min']:.4g}  max={summary['max']:.4g}"
                     f"  μ={summary['mean']:.4g}  σ={summary['std']:.4g}")
    if summary.get("nan") or summary.get("inf"):
        lines.append(f"  NaN: {summary.get('nan', 0)}  Inf: {summary.get('inf', 0)}")
    grad = summary.get("grad")
    if grad is not None or summary["requires_grad"]:  # a tensor outside autograd (a .grad itself) has none to show
        lines.append("  .grad: " + ("None" if grad is None else summary_line(grad, alone=True)))
    return lines


def _format(color: QColor | None = None, italic: bool = False, bold: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    if color is not None:
        fmt.setForeground(color)
    fmt.setFontItalic(italic)
    if bold:
        fmt.setFontWeight(700)
    return fmt


class _OutputText(QPlainTextEdit):
    """The read-only pane; it turns a click on a traceback link into a line number."""

    link_clicked = Signal(int)
    """A traceback link was clicked: the lesson line it names."""

    clear_requested = Signal()
    """The learner chose "Clear" in the context menu."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.viewport().setMouseTracking(True)
        self._pressed_link: str | None = None

    def _link_at(self, event: QMouseEvent) -> str | None:
        href = self.anchorAt(event.position().toPoint())
        return href if href.startswith(_LINK_PREFIX) else None

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._pressed_link = self._link_at(event) if event.button() == Qt.MouseButton.LeftButton else None
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        link = self._link_at(event)
        if link is not None and link == self._pressed_link and not self.textCursor().hasSelection():
            self.link_clicked.emit(int(link.removeprefix(_LINK_PREFIX)))
        self._pressed_link = None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        super().mouseMoveEvent(event)
        shape = Qt.CursorShape.PointingHandCursor if self._link_at(event) else Qt.CursorShape.IBeamCursor
        self.viewport().setCursor(shape)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.createStandardContextMenu(event.pos())
        menu.addSeparator()
        menu.addAction(tr("Clear"), self.clear_requested.emit)
        menu.exec(event.globalPos())
        menu.deleteLater()


class ConsoleView(QWidget):
    """The output console panel.

    Parameters
    ----------
    max_lines : int
        Lines of scrollback kept; older lines are discarded as new ones arrive.
    parent : QWidget, optional
        The Qt parent.

    Attributes
    ----------
    output : QPlainTextEdit
        The read-only output pane.
    input : QLineEdit
        The expression line.
    """

    line_activated = Signal(int)
    """The learner clicked a traceback line: the lesson line the code view should show."""

    evaluate_requested = Signal(str)
    """The learner entered an expression to evaluate in the paused frame."""

    def __init__(self, max_lines: int = MAX_LINES, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.output = _OutputText(self)
        self.output.setFont(font)
        self.output.setMaximumBlockCount(max_lines)
        self.prompt = QLabel(">>>", self)
        self.prompt.setFont(font)
        self.input = QLineEdit(self)
        self.input.setObjectName("console_input")
        self._name_for_screen_readers()
        self.input.setFont(font)
        self.input.setClearButtonEnabled(True)
        self.clear_button = QToolButton(self)
        self.clear_button.setText(tr("Clear"))
        self.clear_button.setToolTip(tr("Clear the console output"))
        self.clear_button.setAutoRaise(True)
        row = QHBoxLayout()
        row.setContentsMargins(4, 0, 0, 0)
        row.addWidget(self.prompt)
        row.addWidget(self.input, 1)
        row.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.output, 1)
        layout.addLayout(row)

        self._formats, self._link_format = self._text_formats()
        self._pending: deque[tuple[str, str]] = deque()
        self._pending_lines = 0
        self._dropped = 0
        self._line_cut = 0  # characters of the line being written that are not drawn
        self._following = True  # the pane shows the end of the output, and keeps showing it
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(FLUSH_INTERVAL_MS)
        self._history: list[str] = []
        self._history_index = 0
        self._draft = ""
        self._awaiting: str | None = None
        self.transcript = Transcript()

        self._flush_timer.timeout.connect(self._on_flush_timer_timeout)
        self.output.link_clicked.connect(self.line_activated)
        self.output.verticalScrollBar().actionTriggered.connect(self._on_scroll_action)
        self.output.verticalScrollBar().rangeChanged.connect(self._on_scroll_range_changed)
        self.output.clear_requested.connect(self._on_clear_requested)
        self.clear_button.clicked.connect(self._on_clear_requested)
        self.input.returnPressed.connect(self._on_input_return_pressed)
        self.input.installEventFilter(self)
        self.transcript.listeners.append(self._on_transcript_changed)
        self.set_input_enabled(False)
        follow_palette(self, self._restyle)

    def _restyle(self) -> None:
        """View > High Contrast: the transcript written again in the colours of the theme in use."""
        self._formats, self._link_format = self._text_formats()
        self.set_transcript(self.transcript)

    def set_text_scale(self, scale: float) -> None:
        """View > Text Size: the output, the prompt and the input at ``scale`` times their usual size."""
        font = fixed_font(scale)
        for widget in (self.output, self.prompt, self.input):
            widget.setFont(font)

    def _text_formats(self) -> tuple[dict[str, QTextCharFormat], QTextCharFormat]:
        """How each kind of text is drawn (the lesson's stdout, stderr, the app's messages…), and a link."""
        palette = QGuiApplication.palette()  # the application's: a top-level console hears of a new one before its own
        text = palette.color(QPalette.ColorRole.Text)
        muted = blend(text, palette.color(QPalette.ColorRole.Base), 0.45)
        formats = {
            "stdout": _format(text),
            "stderr": _format(readable_color("#c62828", "#ff8a80")),
            "native": _format(readable_color("#e65100", "#ffab40")),
            "warning": _format(readable_color("#806a00", "#ffd54f")),
            "info": _format(muted, italic=True),
            "error": _format(readable_color("#c62828", "#ff8a80"), italic=True),
            "success": _format(readable_color("#2e7d32", "#81c784"), italic=True),
            "echo": _format(text, bold=True),
            "exception": _format(readable_color("#c62828", "#ff8a80"), bold=True),
            "code": _format(muted),
        }
        link = _format(palette.color(QPalette.ColorRole.Link))
        link.setFontUnderline(True)
        link.setAnchor(True)
        return formats, link

    # ---- the transcript -------------------------------------------------------------------

    def set_transcript(self, transcript: Transcript) -> None:
        """Show ``transcript`` (all of it now, and each entry as it comes)."""
        if self._on_transcript_changed in self.transcript.listeners:
            self.transcript.listeners.remove(self._on_transcript_changed)
        self.transcript = transcript
        transcript.listeners.append(self._on_transcript_changed)
        self._wipe()
        if transcript.dropped:
            self._write_lines([("info", tr("… {n} earlier entries dropped", n=f"{transcript.dropped:,}"))])
        for entry in transcript.entries:
            self._draw(entry)
        self._flush()

    def _on_transcript_changed(self, entry: Entry | None) -> None:
        if entry is None:
            self._wipe()
        else:
            self._draw(entry)

    def _draw(self, entry: Entry) -> None:
        kind = entry[0]
        if kind == "output":
            self._queue_output(entry[1], entry[2])
        elif kind == "message":
            self._write_lines([(entry[1] if entry[1] in ("info", "error", "success") else "info", line)
                               for line in shown(entry[2]).splitlines() or [""]])
        elif kind == "error":
            self._write_lines(self._error_lines(entry[1]))
        elif kind == "echo":
            self._write_lines([("echo", ">>> " + entry[1])])
            self._awaiting = entry[1]
        elif kind == "result":
            self._write_result(entry[1], entry[2])

    def _on_clear_requested(self) -> None:
        self.transcript.clear()

    # ---- lesson output --------------------------------------------------------------------

    def append_output(self, stream: str, text: str) -> None:
        """Add ``text`` the lesson wrote to ``stream`` ("stdout", "stderr" or "native") to the transcript."""
        self.transcript.add_output(stream, text)

    def _queue_output(self, stream: str, text: str) -> None:
        if not text:
            return
        self._pending.append((stream, text.replace("\r\n", "\n")))
        self._pending_lines += text.count("\n")
        if self._pending_lines > 2 * self.max_lines:  # keep the buffer itself bounded during a flood
            self._trim_pending(self.max_lines)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _trim_pending(self, keep: int) -> None:
        """Drop the oldest buffered lines so that at most ``keep`` line ends remain."""
        excess = self._pending_lines - keep
        while excess > 0:
            stream, text = self._pending[0]
            count = text.count("\n")
            if count <= excess:
                self._pending.popleft()
                excess -= count
                self._dropped += count
                self._pending_lines -= count
                continue
            cut = -1
            for _ in range(excess):
                cut = text.index("\n", cut + 1)
            self._pending[0] = (stream, text[cut + 1:])
            self._dropped += excess
            self._pending_lines -= excess
            excess = 0

    def _on_flush_timer_timeout(self) -> None:
        self._flush()

    def _flush(self) -> None:
        """Write the buffered output: one insertion per run of text with the same format."""
        self._flush_timer.stop()
        if not self._pending:
            return
        self._awaiting = None
        self._trim_pending(self.max_lines - 2)  # room for the note and the line still open
        cursor = QTextCursor(self.output.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        if self._dropped:
            self._start_line(cursor)
            cursor.insertText(tr("… {n} lines dropped", n=f"{self._dropped:,}") + "\n", self._formats["info"])
            self._dropped = 0
        open_line = cursor.block().text()
        runs = self._runs(open_line)
        if "Warning:" not in open_line and runs and runs[0][0] == "warning" and open_line:
            # The line began in an earlier write; now that it reads as a warning, colour all of it.
            start = QTextCursor(cursor)
            start.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
            start.mergeCharFormat(self._formats["warning"])
        for kind, text in runs:
            cursor.insertText(text, self._formats[kind])
        cursor.endEditBlock()
        self._pending.clear()
        self._pending_lines = 0
        if self._following:
            self._show_end()

    def _runs(self, open_line: str) -> list[tuple[str, str]]:
        """The buffered chunks as (format, text) runs; a line containing ``Warning:`` is all warning.

        A line is drawn up to :data:`LINE_CHARS`; the note of how much more it had ends it.
        """
        pieces: list[tuple[str, str, int]] = []  # stream, text, index of its line in ``lines``
        lines = [[open_line]]
        drawn = len(open_line)
        for stream, text in self._pending:
            for part in text.splitlines(keepends=True):
                ends = part.endswith("\n")
                body = part[:-1] if ends else part
                room = max(LINE_CHARS - drawn, 0)
                if len(body) > room:
                    self._line_cut += len(body) - room
                    body = body[:room]
                drawn += len(body)
                if body:
                    pieces.append((stream, body, len(lines) - 1))
                    lines[-1].append(body)
                if ends:
                    if self._line_cut:
                        pieces.append((_CUT_NOTE, self._cut_note(), len(lines) - 1))
                    pieces.append((stream, "\n", len(lines) - 1))
                    lines.append([])
                    drawn = 0
        warning = ["Warning:" in "".join(parts) for parts in lines]
        runs: list[tuple[str, list[str]]] = []
        for stream, text, number in pieces:
            kind = ("info" if stream == _CUT_NOTE else "warning" if warning[number]
                    else stream if stream in ("stdout", "native") else "stderr")
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(text)
            else:
                runs.append((kind, [text]))
        return [(kind, "".join(parts)) for kind, parts in runs]

    def _cut_note(self) -> str:
        """The words that end a line drawn in part (and the count of what was left out starts again)."""
        cut, self._line_cut = self._line_cut, 0
        return tr(" … and {n} more characters on this line", n=f"{cut:,}")

    # ---- the app's own messages -----------------------------------------------------------

    def _start_line(self, cursor: QTextCursor) -> None:
        if self._line_cut:  # the lesson's line, cut, never ended: say so before the next line starts
            cursor.insertText(self._cut_note(), self._formats["info"])
        if cursor.block().length() > 1:
            cursor.insertText("\n")

    def _write_lines(self, lines: list[tuple[str, str]]) -> None:
        """Flush the lesson's output, then write whole lines of ``(format, text)`` at the end."""
        self._flush()
        self._awaiting = None
        cursor = QTextCursor(self.output.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        self._start_line(cursor)
        for kind, text in lines:
            if kind == "link":
                self._insert_link_line(cursor, text)
            else:
                cursor.insertText(text + "\n", self._formats[kind])
        cursor.endEditBlock()
        self._following = True  # the app's own message is news: the pane goes to it
        self._show_end()

    def _show_end(self) -> None:
        bar = self.output.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_scroll_action(self, _action: int) -> None:
        """The learner moved the scroll bar (its buttons, a drag, the wheel, Page Up or Down): the pane
        follows new output again only once it is back at the end."""
        bar = self.output.verticalScrollBar()
        self._following = bar.sliderPosition() >= bar.maximum() - 2

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        """Qt wraps lines again after they are written (when the scroll bar appears, or the pane is
        resized): the end moves, and a pane that follows it moves along."""
        if self._following:
            self.output.verticalScrollBar().setValue(maximum)

    def _insert_link_line(self, cursor: QTextCursor, frame: str) -> None:
        line, label = frame.split("\t", 1)
        cursor.insertText("  ", self._formats["stdout"])
        link = QTextCharFormat(self._link_format)
        link.setAnchorHref(_LINK_PREFIX + line)
        link.setToolTip(tr("Show line {line} in the code view", line=line))
        cursor.insertText(label, link)
        cursor.insertText("\n", self._formats["stdout"])

    def append_message(self, text: str, kind: str = "info") -> None:
        """Write a message from the app itself; ``kind`` is "info", "error" or "success"."""
        self.transcript.add_message(text, kind)

    def append_error(self, error: dict[str, Any]) -> None:
        """Write an error of the lesson: its user frames as links, then ``Type: message``.

        ``error`` is ``{"type", "message", "line", "traceback": [{"file", "line", "function", "text"}]}``;
        a syntax error may instead carry ``"text"`` and ``"column"``.
        """
        self.transcript.add_error(error)

    def _error_lines(self, error: dict[str, Any]) -> list[tuple[str, str]]:
        lines: list[tuple[str, str]] = []
        frames = error.get("traceback") or []
        if frames:
            lines.append(("stdout", tr("Traceback (user frames):")))
            for frame in frames:
                label = f'File "{os.path.basename(frame["file"])}", line {frame["line"]}, in {frame["function"]}'
                lines.append(("link", f"{frame['line']}\t{label}"))
                if frame.get("text"):
                    lines.append(("code", "    " + frame["text"].strip()))
        elif error.get("line"):
            lines.append(("link", f"{error['line']}\t{tr('Line {line}', line=error['line'])}"))
            if error.get("text"):
                lines.append(("code", "    " + error["text"]))
                if error.get("column"):
                    indent = len(error["text"]) - len(error["text"].lstrip())
                    lines.append(("code", "    " + " " * max(error["column"] - 1 - indent, 0) + "^"))
        lines.extend(self._exception_lines(error))
        return lines

    def _exception_lines(self, error: dict[str, Any]) -> list[tuple[str, str]]:
        message = error.get("message", "")
        if message == m.NO_INPUT_MESSAGE:  # the engine's own words, not the lesson's
            message = tr(m.NO_INPUT_MESSAGE)
        lines = [("exception", f"{error.get('type', 'Error')}: {message}" if message else error.get("type", "Error"))]
        for text in error_texts(error):
            if text:
                lines.extend(("info", line) for line in str(text).splitlines())
        return lines

    # ---- evaluation -----------------------------------------------------------------------

    def show_result(self, expression: str, result: dict[str, Any]) -> None:
        """Print the result of evaluating ``expression``: ``{"ok": True, "value"}`` or ``{"ok": False, "error"}``."""
        self.transcript.add_result(expression, result)

    def _write_result(self, expression: str, result: dict[str, Any]) -> None:
        lines: list[tuple[str, str]] = []
        if self._awaiting != expression:  # other output came in between: say what this answers
            lines.append(("echo", ">>> " + expression))
        if result.get("ok"):
            value = result.get("value")
            if value is not None:
                lines.extend(("stdout", line) for line in describe_value(value))
        else:
            lines.extend(self._exception_lines(result.get("error") or {}))
        if lines:
            self._write_lines(lines)

    def show_step(self, step: Step) -> None:
        """Evaluation only at a live pause; otherwise the placeholder says why (the past, the end, running)."""
        self.set_input_enabled(step.is_live, "ended" if step.over else step.off or "running")

    def set_input_enabled(self, enabled: bool, shown: str = "running") -> None:
        """Allow evaluation (the lesson is paused) or not, with a placeholder saying why: ``shown`` is what
        the window shows instead of a live pause (``"past"``, ``"ended"``, ``"idle"``, ``"running"``)."""
        self.input.setEnabled(enabled)
        self.prompt.setEnabled(enabled)
        self._hint = _ENABLED_HINT if enabled else _WHY_NOT.get(shown, _DISABLED_HINT)
        self._short_hint = _SHORT_HINTS.get("paused" if enabled else shown, _DISABLED_HINT)
        self._show_hint()

    def _name_for_screen_readers(self) -> None:
        self.output.setAccessibleName(tr("Output"))
        self.input.setAccessibleName(tr("Evaluate in the paused lesson"))

    def _show_hint(self) -> None:
        """The short placeholder, and the whole reason as a tooltip."""
        self.input.setPlaceholderText(tr(self._short_hint))
        self.input.setToolTip(tr(self._hint))

    def retranslate(self) -> None:
        """Set the console's own texts again in the current language, and draw the transcript again
        (errors and their explanations follow, and so do messages given as functions)."""
        self.clear_button.setText(tr("Clear"))
        self.clear_button.setToolTip(tr("Clear the console output"))
        self._name_for_screen_readers()
        self._show_hint()
        self.set_transcript(self.transcript)

    def _on_input_return_pressed(self) -> None:
        expression = self.input.text().strip()
        if not expression:
            return
        if not self._history or self._history[-1] != expression:
            self._history.append(expression)
        self._history_index = len(self._history)
        self._draft = ""
        self.input.clear()
        self.transcript.add_echo(expression)
        self.evaluate_requested.emit(expression)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            key = event.key()
            if key in (Qt.Key.Key_Up, Qt.Key.Key_Down):
                self._walk_history(-1 if key == Qt.Key.Key_Up else 1)
                return True
        return super().eventFilter(watched, event)

    def _walk_history(self, step: int) -> None:
        """Up (-1) shows older entries, Down (+1) newer ones and finally what was being typed."""
        if self._history_index == len(self._history):
            self._draft = self.input.text()
        index = min(max(self._history_index + step, 0), len(self._history))
        if index == self._history_index:
            return
        self._history_index = index
        self.input.setText(self._history[index] if index < len(self._history) else self._draft)

    # ---- everything else ------------------------------------------------------------------

    def clear(self) -> None:
        """Empty the transcript shown, and so the pane (the input's history stays)."""
        self.transcript.clear()

    def _wipe(self) -> None:
        """Empty the pane and drop buffered output."""
        self._flush_timer.stop()
        self._pending.clear()
        self._pending_lines = 0
        self._dropped = 0
        self._line_cut = 0
        self._following = True
        self._awaiting = None
        self.output.clear()
