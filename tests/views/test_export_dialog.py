"""The export dialog on real widgets: the file name follows the format, existing files are
replaced only after the user says yes, and the export runs in a worker process."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from core.export import RESULTS_FORMATS
from core.ir.serialize import read_document
from core.store import Store
from tests.support import EXAMPLES, ROOT
from views.export_dialog import ExportDialog

pytestmark = pytest.mark.gui
CONV = EXAMPLES / "conv2d.json"


@pytest.fixture
def make_dialog(qtbot, tmp_path):
    def make(**kwargs) -> ExportDialog:
        dialog = ExportDialog(directory=tmp_path, **kwargs)
        qtbot.addWidget(dialog)
        dialog.show()
        return dialog

    return make


def _export(qtbot, dialog, signal="exported"):
    with qtbot.waitSignal(getattr(dialog, signal), timeout=60000) as caught:
        dialog.export_button.click()
        assert dialog.is_running() and not dialog.export_button.isEnabled()
    return caught.args[0]


def test_the_path_follows_the_format_until_the_user_types_one(make_dialog, tmp_path):
    dialog = make_dialog(target=str(CONV), name="Conv 3x3 (ours)")
    assert dialog.format == "torch" and dialog.path_edit.text() == str(tmp_path / "conv_3x3_ours.py")
    dialog.set_format("tvmscript")
    assert dialog.path_edit.text() == str(tmp_path / "conv_3x3_ours_tvmscript.py")
    dialog.path_edit.textEdited.emit("mine.dot")
    dialog.path_edit.setText("mine.dot")
    dialog.set_format("dot")
    assert dialog.path_edit.text() == "mine.dot"


def test_an_export_runs_in_a_worker_and_closes_the_dialog(make_dialog, qtbot, tmp_path):
    dialog = make_dialog(target=str(CONV), name="conv2d")
    dialog.set_format("dot")
    assert _export(qtbot, dialog) == [str(tmp_path / "conv2d.dot")]
    assert (tmp_path / "conv2d.dot").read_text().startswith('digraph "conv2d" {')
    assert dialog.result() == ExportDialog.DialogCode.Accepted


def test_replacing_a_file_needs_a_yes(make_dialog, qtbot, tmp_path, dialogs):
    (tmp_path / "conv2d.py").write_text("# mine\n")
    dialog = make_dialog(document=read_document(CONV), name="conv2d", bindings={"C_out": 16})
    dialogs.answer = QMessageBox.StandardButton.No
    dialog.export_button.click()
    assert [kind for kind, *_ in dialogs.calls] == ["question"] and "conv2d.py" in dialogs.calls[0][2]
    assert not dialog.is_running() and "existing files were kept" in dialog.status.text()
    assert (tmp_path / "conv2d.py").read_text() == "# mine\n"

    dialogs.answer = QMessageBox.StandardButton.Yes
    assert _export(qtbot, dialog) == [str(tmp_path / "conv2d.py")]
    source = (tmp_path / "conv2d.py").read_text()
    assert "Origin:   the editor" in source and "C_out=16" in source


def test_a_failed_export_keeps_the_dialog_open_with_the_reason(make_dialog, qtbot, tmp_path):
    store = tmp_path / "results.db"
    Store(store).close()
    dialog = make_dialog(target="5", store=store, name="operator 5")
    error = _export(qtbot, dialog, "failed")
    assert "no operator 5 in results store" in error and "no operator 5" in dialog.status.text()
    assert dialog.isVisible() and dialog.export_button.isEnabled()


def test_the_store_exports_as_a_pareto_plot(make_dialog, qtbot, tmp_path):
    store = tmp_path / "results.db"
    with Store(store) as s:
        for i, name in enumerate(("conv2d", "shift_conv")):
            oid = s.add_operator(read_document(EXAMPLES / f"{name}.json"), name)
            s.add_measurement(oid, None, {"latency_ms": 1.0 + i, "flops": 2e6 - i * 1e6})
    dialog = make_dialog(store=store, name="pareto", formats=RESULTS_FORMATS, columns=("latency_ms", "flops"))
    dialog.set_format("pareto-png")
    assert _export(qtbot, dialog) == [str(tmp_path / "pareto.png")]
    assert (tmp_path / "pareto.png").read_bytes()[:4] == b"\x89PNG"


def test_the_pytorch_export_is_shape_generic_and_says_what_it_would_replace_in_a_model(make_dialog, qtbot, tmp_path):
    dialog = make_dialog(target=str(EXAMPLES / "shift_conv.json"), name="shift_conv")
    assert dialog.torch_options.isVisible() and dialog.generic_box.isChecked()
    assert not dialog.replace_part.isVisible()  # replace_convs comes with torch-replace
    dialog.set_format("dot")
    assert not dialog.torch_options.isVisible()
    dialog.set_format("torch-replace")
    assert dialog.replace_part.isVisible() and dialog.kinds() == ["standard", "pointwise"]
    dialog.kind_boxes["pointwise"].setChecked(False)
    dialog.kind_boxes["strided"].setChecked(True)
    dialog.model_edit.setText("nowhere.py:build")
    dialog.preview_button.click()
    assert "no such file nowhere.py" in dialog.status.text() and not dialog.is_running()

    dialog.model_edit.setText(str(ROOT / "tests/core/conv_zoo.py") + ":build")
    dialog.input_edit.setText("3,40,40")
    with qtbot.waitSignal(dialog._preview_signals.ended, timeout=120000):
        dialog.preview_button.click()
        assert dialog.is_running()  # the model file runs in a worker, not here
    report = dialog.preview_text.toPlainText()
    assert report.startswith("ShiftConv: replaced 4 of 9 convolutions") and "left     grouped: grouped" in report
    assert "runs on [2, 3, 40, 40]: [2, 10]" in report and dialog.status.text() == report.splitlines()[0]

    assert _export(qtbot, dialog) == [str(tmp_path / "shift_conv.py")]
    assert "kinds=('standard', 'strided'), copy_weights" in (tmp_path / "shift_conv.py").read_text()
