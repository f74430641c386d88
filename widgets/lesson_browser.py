"""The lesson browser: the course's lessons in order, with their titles and summaries."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from app.lesson_format import LessonInfo


class LessonBrowser(QWidget):
    """A list of lessons; activating one opens it."""

    lesson_activated = Signal(str)
    """The learner chose a lesson: its path."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.setSpacing(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self._lessons: list[LessonInfo] = []
        self._language = "en"
        self.list.itemActivated.connect(self._on_list_item_activated)
        self.list.itemClicked.connect(self._on_list_item_activated)

    def set_lessons(self, lessons: list[LessonInfo], language: str = "en") -> None:
        """Show ``lessons`` with titles and summaries in ``language``."""
        self._lessons = list(lessons)
        self._language = language
        self.list.clear()
        for info in self._lessons:
            title = info.title.get(language) or info.title.get("en", info.stem)
            summary = info.summary.get(language) or info.summary.get("en", "")
            item = QListWidgetItem(f"{info.order:02d}  {title}\n      {summary}")
            item.setData(Qt.ItemDataRole.UserRole, str(info.path))
            item.setToolTip(f"{title}\n{summary}\n{info.path}")
            self.list.addItem(item)

    def set_language(self, language: str) -> None:
        """Show the titles in another language, keeping the selection."""
        row = self.list.currentRow()
        self.set_lessons(self._lessons, language)
        self.list.setCurrentRow(row)

    def select_path(self, path: str) -> None:
        """Mark the lesson at ``path`` (or a copy of it with the same file name) as the open one."""
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        for row in range(self.list.count()):
            if self.list.item(row).data(Qt.ItemDataRole.UserRole).replace("\\", "/").endswith("/" + name):
                self.list.setCurrentRow(row)
                return
        self.list.clearSelection()

    def _on_list_item_activated(self, item: QListWidgetItem) -> None:
        self.lesson_activated.emit(item.data(Qt.ItemDataRole.UserRole))
