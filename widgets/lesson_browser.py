"""The lesson browser: the course's lessons in order, with their titles, summaries and the learner's progress.

Features
--------
* One row per lesson: number, title and summary in the chosen language.
* What the learner did in each lesson: predictions answered right, exercises passed and
  backward drills answered right (kept across restarts), with "Reset Progress" in the row's
  context menu.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from app.i18n import tr
from app.lesson_format import LessonInfo
from app.progress import LessonProgress

#: Pixels between a row's edges and its text.
TEXT_MARGIN = 3


class WrappedRowDelegate(QStyledItemDelegate):
    """Rows of wrapped text, measured and drawn at the same width.

    Qt's list measures a wrapped row at one width and draws it at a narrower one: a title that
    wrapped to a second line pushed the row's last line (the learner's progress) out, and
    the summary ended in "…". Here a row is as wide as the list's viewport, and its text is
    wrapped at that width, less :data:`TEXT_MARGIN` on each side, both when it is measured and
    when it is drawn.
    """

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self.view = view

    def text_width(self) -> int:
        """The width a row's text wraps at: the viewport's, less the rows' spacing and the text's margins."""
        return self.view.viewport().width() - 2 * self.view.spacing() - 2 * TEXT_MARGIN

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        text = index.data() or ""
        bounds = option.fontMetrics.boundingRect(QRect(0, 0, max(self.text_width(), 1), 1 << 20),
                                                 Qt.TextFlag.TextWordWrap, text)
        return QSize(self.text_width() + 2 * TEXT_MARGIN, bounds.height() + 2 * TEXT_MARGIN)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        text, item.text = item.text, ""
        style = item.widget.style() if item.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, item.widget)  # background, focus
        selected = bool(item.state & QStyle.StateFlag.State_Selected)
        group = (QPalette.ColorGroup.Normal if item.state & QStyle.StateFlag.State_Active
                 else QPalette.ColorGroup.Inactive)
        painter.save()
        painter.setPen(item.palette.color(group, QPalette.ColorRole.HighlightedText if selected
                                          else QPalette.ColorRole.Text))
        painter.setFont(item.font)
        area = QRect(item.rect.left() + TEXT_MARGIN, item.rect.top() + TEXT_MARGIN, self.text_width(),
                     item.rect.height() - 2 * TEXT_MARGIN)
        painter.drawText(area, int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop),
                         text)
        painter.restore()


class LessonBrowser(QWidget):
    """A list of lessons; activating one opens it."""

    lesson_activated = Signal(str)
    """The learner chose a lesson: its path."""
    progress_reset_requested = Signal(str)
    """The learner asked to forget their progress in a lesson: its file stem."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setAccessibleName(tr("Lessons"))
        self.list.setWordWrap(True)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)  # rows measured again at each width
        self.list.setItemDelegate(WrappedRowDelegate(self.list))
        self.list.setAlternatingRowColors(True)
        self.list.setSpacing(1)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self._lessons: list[LessonInfo] = []
        self._progress: dict[str, LessonProgress] = {}
        self._language = "en"
        self._open_path = ""  # the file the window shows: the row marked, whatever the list redraws
        self.list.itemActivated.connect(self._on_list_item_activated)
        self.list.itemClicked.connect(self._on_list_item_activated)
        self.list.customContextMenuRequested.connect(self._on_list_custom_context_menu_requested)

    def lessons(self) -> list[LessonInfo]:
        """The lessons shown."""
        return list(self._lessons)

    def set_lessons(self, lessons: list[LessonInfo], language: str = "en") -> None:
        """Show ``lessons`` with titles and summaries in ``language``."""
        self._lessons = list(lessons)
        self._language = language
        self.list.clear()
        for info in self._lessons:
            title = info.title.get(language) or info.title.get("en", info.stem)
            summary = info.summary.get(language) or info.summary.get("en", "")
            text = f"{info.order:02d}  {title}\n      {summary}"
            progress = self.progress_text(info)
            if progress:
                text += f"\n      {progress}"
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, str(info.path))
            item.setToolTip(f"{title}\n{summary}\n{info.path}")
            self.list.addItem(item)
        self.select_path(self._open_path)

    def set_progress(self, progress: dict[str, LessonProgress]) -> None:
        """Show the learner's progress (by lesson file stem)."""
        self._progress = dict(progress)
        self.set_lessons(self._lessons, self._language)

    def progress_text(self, info: LessonInfo) -> str:
        """"predictions right 2/3 · exercises 1/2 · drills right 4/5" for a lesson with predictions, exercises or
        answered backward drills (out of those answered: each backward asks its own), else ""."""
        progress = self._progress.get(info.stem, LessonProgress(0, 0, 0))
        parts = []
        if info.predictions:
            parts.append(("✓ " if progress.right >= info.predictions else "") +
                         tr("predictions right {right}/{total}", right=progress.right, total=info.predictions))
        if info.checks:
            parts.append(("✓ " if progress.passed >= info.checks else "") +
                         tr("exercises {passed}/{total}", passed=progress.passed, total=info.checks))
        if progress.drills_answered:
            parts.append(tr("drills right {right}/{answered}", right=progress.drills_right,
                            answered=progress.drills_answered))
        return " · ".join(parts)

    def set_language(self, language: str) -> None:
        """Show the titles in another language, keeping the selection."""
        self.list.setAccessibleName(tr("Lessons"))
        self.set_lessons(self._lessons, language)

    def select_path(self, path: str) -> None:
        """Mark the lesson at ``path`` (or a copy of it with the same file name) as the open one; none when
        ``path`` is not a lesson (the learner's own file)."""
        self._open_path = path
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        for row in range(self.list.count()):
            if name and self.list.item(row).data(Qt.ItemDataRole.UserRole).replace("\\", "/").endswith("/" + name):
                self.list.setCurrentRow(row)
                return
        self.list.setCurrentRow(-1)  # not only unselected: the current row is drawn marked too

    def _on_list_item_activated(self, item: QListWidgetItem) -> None:
        self.lesson_activated.emit(item.data(Qt.ItemDataRole.UserRole))

    def _on_list_custom_context_menu_requested(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        stem = item.data(Qt.ItemDataRole.UserRole).replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
        menu = QMenu(self)
        menu.addAction(tr("Reset Progress"), lambda: self.progress_reset_requested.emit(stem))
        menu.popup(self.list.viewport().mapToGlobal(position))
