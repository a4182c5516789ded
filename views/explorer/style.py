"""Style-sheet rules the explorer adds on top of resources/style.qss: checkable tool
buttons (axis log toggles, origin chips, the Editor/Explorer switch) show their state."""

CHECKABLE_BUTTONS = """
QToolButton:checked { background: #e0e7ff; border: 1px solid #c7d2fe; color: #1e3a8a; }
QToolButton:checked:hover { background: #c7d2fe; }
"""
BAR = (
    CHECKABLE_BUTTONS
    + """
#explorerBar { background: #ffffff; border-bottom: 1px solid #e2e5ea; }
#explorerBar QToolButton { padding: 3px 7px; }
#explorerBar QToolButton[chip="true"] { border: 1px solid #e2e5ea; border-radius: 11px; padding: 2px 9px 2px 6px;
                                        background: #ffffff; color: #374151; }
#explorerBar QToolButton[chip="true"]:checked { background: #ffffff; border-color: #d0d5dd; color: #1f2937; }
#explorerBar QToolButton[chip="true"]:!checked { background: #f3f4f6; color: #9ca3af; }
#explorerBar QToolButton[chip="true"]:hover { border-color: #a5b4fc; }
"""
)
