"""View > Text Size scales the interface, the code and the output together, and is kept."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication

from app.workspace import LESSONS_DIR
from widgets import settings


def test_150_percent_scales_the_interface_the_code_and_the_output_and_is_remembered(qtbot, open_window):
    window = open_window(LESSONS_DIR / "03_loops.py")
    base_app = QApplication.font().pointSizeF()
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).pointSizeF()
    base_code = window.code_view.font().pointSizeF()
    window.text_size_actions[150].trigger()
    try:
        assert QApplication.font().pointSizeF() == base_app * 1.5
        assert window.code_view.font().pointSizeF() == base_code * 1.5
        assert window.console.output.font().pointSizeF() == fixed * 1.5
        # the tables follow the application font (Qt tells each widget in an event)
        qtbot.waitUntil(lambda: window.variables_view.font().pointSizeF() == base_app * 1.5)
        assert window.text_size_actions[150].isChecked() and not window.text_size_actions[100].isChecked()
        assert settings.get("view/text_size") == 150
    finally:
        window.set_text_size(100)
    assert QApplication.font().pointSizeF() == base_app and window.code_view.font().pointSizeF() == base_code
