"""Python syntax colours for a text document, from Pygments' tokenizer, one line at a time."""

from __future__ import annotations

from pygments.lexers import PythonLexer
from pygments.token import Comment, Keyword, Name, Number, Operator, String, Token
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from widgets.colours import ensure_contrast

TokenType = type(Token)
#: Colour, bold and italic of each kind of token, chosen for a light background. A token takes
#: the style of its nearest listed ancestor (``Keyword.Namespace`` is drawn as ``Keyword``).
TOKEN_STYLES: dict[TokenType, tuple[str, bool, bool]] = {
    Keyword: ("#0033b3", True, False),
    Operator.Word: ("#0033b3", True, False),
    Name.Builtin: ("#000080", False, False),
    Name.Builtin.Pseudo: ("#94558d", False, False),
    Name.Exception: ("#000080", False, False),
    Name.Function: ("#00627a", False, False),
    Name.Class: ("#00627a", True, False),
    Name.Decorator: ("#9e880d", False, False),
    String: ("#067d17", False, False),
    String.Escape: ("#0037a6", False, False),
    String.Interpol: ("#0037a6", False, False),
    Number: ("#1750eb", False, False),
    Comment: ("#8c8c8c", False, True),
}
#: Lexed lines kept; a full cache is emptied rather than aged (a lesson is far smaller).
LEX_CACHE_SIZE = 20_000


def _char_format(colour: str, bold: bool, italic: bool) -> QTextCharFormat:
    char_format = QTextCharFormat()
    char_format.setForeground(QColor(colour))
    if bold:
        char_format.setFontWeight(QFont.Bold)
    char_format.setFontItalic(italic)
    return char_format


class PythonHighlighter(QSyntaxHighlighter):
    """Colours one line at a time from Pygments' Python tokens.

    The block state is 0 outside strings, or ``k`` when the line ends inside the triple-quoted
    string opened by ``self._openers[k - 1]`` (its quotes and any prefix such as ``f``): the next
    line is lexed with that opener in front of it, so the string's colour (and an f-string's
    fields) carries on.

    Parameters
    ----------
    document : QTextDocument
        The document to colour.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._lexer = PythonLexer()
        self._formats = {token: _char_format(*style) for token, style in TOKEN_STYLES.items()}
        self._background: QColor | None = None
        self._styles: dict[TokenType, TokenType | None] = {}
        self._openers: list[str] = []
        self._cache: dict[tuple[int, str], tuple[list[tuple[int, int, TokenType]], int]] = {}

    def set_background(self, background: QColor | None) -> None:
        """Make every colour read at 7:1 on ``background`` (View > High Contrast), or (None) the usual colours."""
        if background == self._background:
            return
        self._background = background
        for token, (colour, bold, italic) in TOKEN_STYLES.items():
            shown = QColor(colour) if background is None else ensure_contrast(QColor(colour), background)
            self._formats[token] = _char_format(shown.name(), bold, italic)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        state = max(self.previousBlockState(), 0)
        lexed = self._cache.get((state, text))
        if lexed is None:
            if len(self._cache) >= LEX_CACHE_SIZE:
                self._cache.clear()
            lexed = self._cache[(state, text)] = self._lex(text, state)
        runs, end_state = lexed
        for start, length, style in runs:
            self.setFormat(start, length, self._formats[style])
        self.setCurrentBlockState(end_state)

    def _lex(self, text: str, state: int) -> tuple[list[tuple[int, int, TokenType]], int]:
        """Runs of (start, length, style) for ``text``, merged where neighbours share a style, and the end state."""
        opener = self._openers[state - 1] if state else ""
        runs: list[tuple[int, int, TokenType]] = []
        open_string = ""  # the affix and quotes of a triple-quoted string not yet closed
        affix = ""
        token = String
        for index, token, value in self._lexer.get_tokens_unprocessed(opener + text + "\n"):
            if token in String and value in ('"""', "'''"):
                if not open_string:
                    open_string = affix + value
                elif open_string.endswith(value):
                    open_string = ""
            affix = value if token is String.Affix else ""
            style = self._style(token)
            start, end = max(index - len(opener), 0), min(index - len(opener) + len(value), len(text))
            if style is None or end <= start:
                continue
            if runs and runs[-1][2] is style and runs[-1][0] + runs[-1][1] == start:
                runs[-1] = (runs[-1][0], end - runs[-1][0], style)
            else:
                runs.append((start, end - start, style))
        # The newline token is part of the string only when the line ends inside one.
        if open_string and token in String:
            if open_string not in self._openers:
                self._openers.append(open_string)
            return runs, self._openers.index(open_string) + 1
        return runs, 0

    def _style(self, token: TokenType) -> TokenType | None:
        if token not in self._styles:
            ancestor = token
            while ancestor is not None and ancestor not in self._formats:
                ancestor = ancestor.parent
            self._styles[token] = ancestor
        return self._styles[token]
