"""Qt's own texts (standard buttons such as Close, Yes and Cancel, the editors' context menus) in the app's language.

Qt ships its translations beside the library (``qtbase_zh_CN.qm``); the app's own catalog
(:mod:`app.i18n`) covers only GradStep's texts.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

#: The Qt locale of each interface language that is not English (Qt's source language).
QT_LOCALES = {"zh": "zh_CN"}

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
    app.installTranslator(translator)
    _installed = translator
    return True
