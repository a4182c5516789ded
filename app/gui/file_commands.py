"""The main window's file commands on the document of the page shown: the Open dialog, Save,
Save As, the question about unsaved changes, the export dialog, and the folders their dialogs
start in (never the bundled examples for what the user writes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMessageBox

from resources import EXAMPLES

from .page_commands import show_history
from .settings import documents_folder, last_folder, remember_file, remember_folder

if TYPE_CHECKING:
    from .window import MainWindow

FILE_FILTER = "Tessera documents: operators and sequences (*.json);;All files (*)"


def open_dialog(window: MainWindow) -> None:
    path, _ = QFileDialog.getOpenFileName(window, "Open an operator or a sequence", _dialog_dir(window), FILE_FILTER)
    if path:
        window.open_file(path)


def save(window: MainWindow) -> bool:
    """Save the document of the page shown: the sequence on the Sequences page, else the operator."""
    path = window.sequences.path if window.sequences_shown() else window.document.path
    return _write(window, path) if path is not None else save_as(window)


def save_as(window: MainWindow) -> bool:
    sequence = window.sequences_shown()
    name = window.sequences.result_name if sequence else window.document.operator_name
    path, _ = QFileDialog.getSaveFileName(
        window,
        "Save sequence as" if sequence else "Save operator as",
        str(Path(_save_dir(window)) / f"{name}.json"),
        FILE_FILTER,
    )
    if not path:
        return False
    if Path(path).suffix == "":
        path += ".json"
    return _write(window, Path(path))


def _write(window: MainWindow, path: Path) -> bool:
    """Write the document of the page shown to `path`."""
    sequence = window.sequences_shown()
    try:
        (window.sequences if sequence else window.document).save(path)
    except OSError as e:
        QMessageBox.critical(
            window, f"Cannot save the {'sequence' if sequence else 'operator'}", f"{path}: {e.strerror or e}"
        )
        return False
    if window.settings is not None:
        remember_file(window.settings, path)
        remember_folder(window.settings, path.parent)
    show_history(window)
    window.statusBar().showMessage(f"Saved {path}", 5000)
    return True


def maybe_save(window: MainWindow) -> bool:
    """True when it is fine to drop the operator (saved, discarded or unmodified)."""
    return _maybe_save(window, window.document, "editor")


def maybe_save_sequence(window: MainWindow) -> bool:
    """True when it is fine to drop the sequence (saved, discarded or unmodified)."""
    return _maybe_save(window, window.sequences, "sequences")


def _maybe_save(window: MainWindow, document, page: str) -> bool:
    if not document.modified:
        return True
    answer = QMessageBox.question(
        window,
        "Unsaved changes",
        f"Save the changes to {document.display_name}?",
        QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Save,
    )
    if answer == QMessageBox.StandardButton.Save:
        window.show_page(page)  # Save acts on the page shown
        return save(window)
    return answer == QMessageBox.StandardButton.Discard


def open_export(window: MainWindow, dialog) -> None:
    """Show an export dialog (one at a time; None: nothing to export, already said why)."""
    if dialog is None:
        return
    window.export_dialog = dialog
    watch_export(window, dialog)
    dialog.open()


def watch_export(window: MainWindow, dialog) -> None:
    """An export dialog starts in the folder of the page's document or the one last used,
    and the status bar says what it wrote where."""
    dialog.set_directory(_save_dir(window))
    dialog.exported.connect(lambda files: _exported(window, dialog.format, files))


def _exported(window: MainWindow, fmt: str, files: list[str]) -> None:
    if window.settings is not None and files:
        remember_folder(window.settings, Path(files[0]).parent)
    window.statusBar().showMessage(f"Exported {fmt}: wrote {', '.join(files)}", 20000)


def _dialog_dir(window: MainWindow) -> str:
    """Where Open starts: the current file's folder, else the last folder used, else the examples."""
    if window.document.path is not None:
        return str(window.document.path.parent)
    return str(last_folder(window.settings) or EXAMPLES)


def _save_dir(window: MainWindow) -> str:
    """Where Save As and Export start: the document's own folder unless it is a bundled example,
    else the folder last used, else the user's documents folder (never the bundled examples)."""
    path = window.sequences.path if window.sequences_shown() else window.document.path
    if path is not None and not path.resolve().is_relative_to(EXAMPLES.resolve()):
        return str(path.parent)
    return str(last_folder(window.settings) or documents_folder())
