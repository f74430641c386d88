"""Qt's own texts (standard buttons such as Close, Yes and Cancel, the editors' context menus) in the app's language.

Qt ships its translations beside the library (``qtbase_zh_CN.qm``); the app's own catalog
(:mod:`app.i18n`) covers GradStep's texts, and the few of Qt's that its translation lacks
(:data:`QT_GAPS`).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from app.i18n import N_, tr

#: The Qt locale of each interface language that is not English (Qt's source language).
QT_LOCALES = {"zh": "zh_CN"}
#: Qt's texts that ``qtbase_zh_CN.qm`` lacks, by (context, source text): the file dialog's
#: labels carry an accelerator there that the translation's entries do not.
QT_GAPS = {("QFileDialog", "&Look in:"): N_("&Look in:"), ("QFileDialog", "Files of &type:"): N_("Files of &type:")}


class _QtTexts(QTranslator):
    """Qt's own translation of its texts (``base``), with :data:`QT_GAPS` filled from the app's catalog."""

    def __init__(self, base: QTranslator) -> None:
        super().__init__()
        self.base = base

    def translate(self, context: str, source: str, disambiguation: str | None = None, n: int = -1) -> str | None:
        msgid = QT_GAPS.get((context, source))
        if msgid is not None:
            return tr(msgid)
        # None, not "": an empty string would be shown as the text; None leaves Qt its English source
        return self.base.translate(context, source, disambiguation, n) or None

    def isEmpty(self) -> bool:  # noqa: N802 - Qt override
        return self.base.isEmpty()


_installed: QTranslator | None = None


def use_qt_language(language: str) -> bool:
    """Translate Qt's built-in texts into ``language`` (English removes the translation).

    Returns whether a translation is installed now: False for English, or when this Qt
    build has no translation for the language (Qt's texts then stay in English).
    """
    global _installed
    app = QCoreApplication.instance()
    if app is None:
        return False
    if _installed is not None:
        app.removeTranslator(_installed)
        _installed = None
    locale = QT_LOCALES.get(language)
    if locale is None:
        return False
    translator = QTranslator()  # held here alone: the one removed is freed, not left with the application
    folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    if not translator.load(QLocale(locale), "qtbase", "_", folder):
        return False
    _installed = _QtTexts(translator)
    app.installTranslator(_installed)
    return True
