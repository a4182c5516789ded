"""Python syntax colouring for the code panel (PyTorch modules and TVMScript are both Python)."""

from __future__ import annotations

import keyword
import re
from typing import ClassVar

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

_RULES = (
    (r"\b(?:" + "|".join(keyword.kwlist) + r")\b", "#7c3aed", True),
    (r"\b(?:self|True|False|None)\b", "#b45309", False),
    (r"@[\w.]+", "#0d9488", False),
    (r"\b\d+(?:\.\d+)?(?:e-?\d+)?\b", "#b45309", False),
    (r"\b(?:def|class)\s+(\w+)", "#2563eb", True),
    (r"(\"[^\"\n]*\"|'[^'\n]*')", "#15803d", False),
    (r"#[^\n]*", "#6b7280", False),
)


def _format(color: str, bold: bool) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    return fmt


class PythonHighlighter(QSyntaxHighlighter):
    RULES: ClassVar = [(re.compile(pattern), _format(color, bold)) for pattern, color, bold in _RULES]

    def highlightBlock(self, text: str) -> None:
        for pattern, fmt in self.RULES:  # later rules (strings, comments) win over earlier ones
            for m in pattern.finditer(text):
                group = 1 if pattern.groups else 0
                self.setFormat(m.start(group), m.end(group) - m.start(group), fmt)
