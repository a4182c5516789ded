"""The main window's commands follow the page shown: Undo, Redo, Delete and the title act on the
sequence on the Sequences page and on the operator in the Editor; the canvas's commands work on
the Editor only; Evaluate, Tune and Evaluate Accuracy are enabled when the page's operator can be
measured, and otherwise say why not."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.analysis.summary import Summary

if TYPE_CHECKING:
    from .window import MainWindow

EDITOR_ACTIONS = ("delete", "select_all", "zoom_in", "zoom_out", "zoom_fit", "layout")
MEASURE_ACTIONS = ("evaluate", "tune", "transfer", "accuracy")


def page_changed(window: MainWindow, key: str) -> None:
    for name in EDITOR_ACTIONS:
        window.commands[name].setEnabled(key == "editor" or (name == "delete" and key == "sequences"))
    show_history(window)
    show_measurable(window)


def delete_selected(window: MainWindow) -> None:
    """Delete (the key and the trash button) acts on the page shown: the selected sequence
    step on the Sequences page, the selected nodes and wires on the Editor."""
    if window.sequences_shown():
        window.sequences.remove_step()
    else:
        window.scene.delete_selection()


def show_measurable(window: MainWindow) -> None:
    """Evaluate, Tune and Evaluate Accuracy take the operator of the page shown (the
    sequence's result on the Sequences page): enabled when it can be measured, else why not."""
    why = window.sequences.why_no_result() if window.sequences_shown() else _not_measurable(window.document.summary)
    for key in MEASURE_ACTIONS:
        action = window.explore.actions[key]
        action.setEnabled(why is None)
        action.setToolTip(action.statusTip() if why is None else f"Not yet: {why}")


def sequence_changed(window: MainWindow) -> None:
    if window.sequences_shown():
        show_history(window)
        show_measurable(window)


def show_history(window: MainWindow) -> None:
    """Undo, Redo and the title follow the page shown: the sequence's on the Sequences page,
    the operator's on the Editor (the title names it on the other pages, which have no undo)."""
    if window.sequences_shown():
        history = window.sequences.history
        undo, redo = history.undo_text, history.redo_text
        name, modified = window.sequences.display_name, window.sequences.modified
    else:
        stack = window.document.editor.undo_stack
        undo, redo = (stack.undo_text, stack.redo_text) if window.pages.current == "editor" else ("", "")
        name, modified = window.document.display_name, window.document.modified
    window.commands["undo"].setEnabled(bool(undo))
    window.commands["redo"].setEnabled(bool(redo))
    window.commands["undo"].setText(f"&Undo {undo}".strip())
    window.commands["redo"].setText(f"&Redo {redo}".strip())
    window.setWindowTitle(f"{name}[*] — Tessera")
    window.setWindowModified(modified)


def undo(window: MainWindow) -> None:
    if window.sequences_shown():
        window.sequences.undo()
    elif window.pages.current == "editor":
        window.document.editor.undo()


def redo(window: MainWindow) -> None:
    if window.sequences_shown():
        window.sequences.redo()
    elif window.pages.current == "editor":
        window.document.editor.redo()


def _not_measurable(summary: Summary) -> str | None:
    """Why Evaluate and Tune cannot take the operator yet, in the window's words; None if they can."""
    errors = len(summary.shapes.errors)
    if errors:
        return f"the operator has {errors} error(s); see Diagnostics"
    if summary.shapes.constraints:
        names = ", ".join(sorted({c.var for c in summary.shapes.constraints}))
        return f"choose a value for {names} in Diagnostics"
    if summary.binding_error and not summary.unbound:  # every size has a value, and one of them does not fit
        return f"{summary.binding_error}; change the sizes in the Bindings bar or the node's parameters"
    if summary.binding_error or summary.numeric_cost is None:
        missing = ", ".join(summary.unbound) or "the size variables"
        return f"give {missing} a value in the Bindings bar"
    return None
