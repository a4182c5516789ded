"""Style-sheet rules the explorer adds on top of resources/style.qss: checkable tool
buttons (axis log toggles, origin chips, the page buttons) show their state. {name} is a
colour of the current scheme (views.theme.style_sheet fills it in)."""

CHECKABLE_BUTTONS = """
QToolButton:checked { background: {pressed}; border: 1px solid {hover_border}; color: {checked_text}; }
QToolButton:checked:hover { background: {hover_border}; }
QToolButton:focus { border: 1px solid {accent}; }
"""
BAR = (
    CHECKABLE_BUTTONS
    + """
#explorerBar { background: {base}; border-bottom: 1px solid {line}; }
#explorerBar QToolButton { padding: 3px 7px; }
#explorerBar QToolButton[chip="true"] { border: 1px solid {line}; border-radius: 11px; padding: 2px 9px 2px 6px;
                                        background: {base}; color: {text2}; }
#explorerBar QToolButton[chip="true"]:checked { background: {base}; border-color: {border}; color: {text}; }
#explorerBar QToolButton[chip="true"]:!checked { background: {panel}; color: {faint}; }
#explorerBar QToolButton[chip="true"]:hover { border-color: {focus_ring}; }
#explorerBar QToolButton:focus, #explorerBar QToolButton[chip="true"]:focus { border: 1px solid {accent}; }
"""
)
