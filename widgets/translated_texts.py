"""Fixed texts of a widget that follow View > Language: each set once, and set again on a change of language."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.i18n import tr


class TranslatedTexts:
    """Remembers which setter shows which English text, so :meth:`apply` can set them all again.

    A widget calls :meth:`set` where it would call ``label.setText("…")`` for a text that
    does not depend on its state, and :meth:`apply` from its ``retranslate()``.
    """

    def __init__(self) -> None:
        self._entries: list[tuple[Callable[[str], Any], str, dict[str, Any]]] = []

    def set(self, setter: Callable[[str], Any], text: str, /, **fields: Any) -> None:
        """Call ``setter`` with ``text`` in the current language now, and again at every :meth:`apply`."""
        self._entries.append((setter, text, fields))
        setter(tr(text, **fields))

    def apply(self) -> None:
        """Set every remembered text again, in the current language."""
        for setter, text, fields in self._entries:
            setter(tr(text, **fields))
