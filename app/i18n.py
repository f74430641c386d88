"""The interface language: ``tr()`` turns an English text into the chosen language's, for both processes.

The English text is the message id; ``app/locale/<lang>.json`` maps it to its translation
(plain data, loaded once, stdlib only). Qt's ``.ts``/``.qm`` would not do: ``app/`` never
imports Qt, and the lesson process builds learner-facing texts too. A text that must be
translated later (a template defined at import time, or one made in the lesson process and
rendered in the app) is marked with :func:`N_` and passed to :func:`tr` where it is shown.

Code, identifiers and PyTorch's names stay as they are inside translations (``grad_fn``,
``MulBackward0``, ``retain_graph=True``, F10).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The languages the interface comes in; English is the message ids themselves.
LANGUAGES = ("en", "zh")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"

_language = "en"
_catalogs: dict[str, dict[str, str]] = {}
#: Called with the new language after :func:`set_language` changed it.
listeners: list[Callable[[str], None]] = []


def catalog(language: str) -> dict[str, str]:
    """The translations of ``language`` (English msgid → text); empty for English or an unknown language."""
    if language == "en" or language not in LANGUAGES:
        return {}
    if language not in _catalogs:
        path = LOCALE_DIR / f"{language}.json"
        _catalogs[language] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return _catalogs[language]


def language() -> str:
    """The language texts are shown in now."""
    return _language


def set_language(lang: str) -> None:
    """Show texts in ``lang`` from now on (an unknown code means English); tells the listeners."""
    global _language
    lang = lang if lang in LANGUAGES else "en"
    if lang == _language:
        return
    _language = lang
    for listener in list(listeners):
        listener(lang)


def system_language(locale_name: str) -> str:
    """The language a system locale name (``zh_CN``, ``en_US``) asks for: ``zh`` for any Chinese one."""
    return "zh" if locale_name.lower().startswith("zh") else "en"


def tr(text: str, /, **fields: Any) -> str:
    """``text`` (English) in the current language, formatted with ``fields`` (``str.format``).

    A text without a translation is shown in English; without ``fields`` the text is not
    formatted, so literal braces need no escaping.
    """
    translated = catalog(_language).get(text, text) if _language != "en" else text
    return translated.format(**fields) if fields else translated


def N_(text: str) -> str:  # noqa: N802 - the gettext convention for "translated where it is shown"
    """Mark ``text`` as a message id without translating it now (see the module docstring)."""
    return text


def join_words(parts: list[str] | tuple[str, ...]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (``a、b 和 c`` in Chinese)."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    return tr("{head} and {last}", head=tr(", ").join(parts[:-1]), last=parts[-1])


def error_texts(error: dict[str, Any]) -> tuple[str, str | None]:
    """An engine error's explanation and fix in the current language.

    The lesson process sends them in English with their templates and fields (``texts``);
    an error without ``texts`` (an older engine, an app-side error) shows what it has.
    """
    texts = error.get("texts")
    if not texts or not texts.get("explanation"):
        return error.get("explanation") or "", error.get("fix")
    fields = texts.get("fields") or {}
    explanation = tr(texts["explanation"], **fields) if fields else tr(texts["explanation"])
    return explanation, tr(texts["fix"]) if texts.get("fix") else None
