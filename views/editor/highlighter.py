"""Python syntax colouring for the code panel (PyTorch modules and TVMScript are both Python)."""

from __future__ import annotations

import keyword
import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

from .. import theme

_RULES = (  # pattern, colour of the scheme (views.theme), bold
    (r"\b(?:" + "|".join(keyword.kwlist) + r")\b", "syntax_keyword", True),
    (r"\b(?:self|True|False|None)\b", "syntax_constant", False),
    (r"@[\w.]+", "syntax_decorator", False),
    (r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", "syntax_constant", False),
    (r"\b(?:def|class)\s+(\w+)", "syntax_name", True),
    (r"(\"[^\"\n]*\"|'[^'\n]*')", "syntax_string", False),
    (r"#[^\n]*", "syntax_comment", False),
)


def _format(color: str, bold: bool) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    return fmt


class PythonHighlighter(QSyntaxHighlighter):
    def __init__(self, document=None):
        super().__init__(document)
        self.rules = [(re.compile(pattern), _format(theme.COLORS[color], bold)) for pattern, color, bold in _RULES]

    def highlightBlock(self, text: str) -> None:
        for pattern, fmt in self.rules:  # later rules (strings, comments) win over earlier ones
            for m in pattern.finditer(text):
                group = 1 if pattern.groups else 0
                self.setFormat(m.start(group), m.end(group) - m.start(group), fmt)
