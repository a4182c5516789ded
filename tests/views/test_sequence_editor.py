"""The sequence editor on real widgets (offscreen): steps with badges and explanations,
parameter edits, adding/removing/reordering (drag and buttons), undo/redo, the loop nest
after each step, and the result handed on as an operator document."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QModelIndex, Qt

from core.analysis.summary import summarize
from core.ir.serialize import graph_from_document
from tests.support import EXAMPLES
from views.editor.sequence_editor import SequenceEditor

pytestmark = pytest.mark.gui
SEQ = EXAMPLES / "sequences"


@pytest.fixture
def editor(qtbot):
    widget = SequenceEditor()
    qtbot.addWidget(widget)
    widget.load(SEQ / "seq_spatial_bottleneck.json")
    widget.sizes.setText("C_in=8,C_out=8,H=8,W=8,K=3")
    widget.sizes.editingFinished.emit()
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def rows(editor) -> list[str]:
    return [editor.steps.item(i).text() for i in range(editor.steps.count())]


def edit(field, text: str) -> None:
    field.setText(text)
    field.editingFinished.emit()


def test_steps_badges_and_the_nest_after_each_step(editor, qtbot):
    assert rows(editor) == [
        "1. interchange(co, oh)",
        "2. bottleneck(oh, 2)",
        "3. interchange(oh, ow)",
        "4. bottleneck(ow, 2)",
        "5. interchange(ow, co)",
    ]
    assert all(editor.verdict(i)[0] == "legal" for i in range(5))
    editor.select(1)
    assert editor.nest_title.text() == "Loop nest after step 2"
    text = editor.nest_view.toPlainText()
    assert "for oh in range(4):" in text and "for ow in range(8):" in text
    assert "legal" in editor.explanation.text() and "Fisher Potential" in editor.explanation.text()
    assert editor.totals.text().startswith("Result: 18,432 FLOPs (25% of the start), 576 parameters (100%)")


def test_an_illegal_edit_shows_its_reason_and_undo_restores(editor, qtbot):
    editor.select(0)
    edit(editor.fields["loops"], "co, kw")
    assert rows(editor)[0] == "1. interchange(co, kw)"
    status, message = editor.verdict(0)
    assert status == "illegal" and "carried by loop ci" in message
    assert "illegal" in editor.explanation.text() and "carried by loop ci" in editor.explanation.text()
    assert "illegal" in editor.steps.item(0).toolTip()
    assert "some steps are illegal" in editor.totals.text()
    edit(editor.fields["loops"], "co, nowhere")  # a step that cannot be applied: later steps are not reached
    assert editor.verdict(0)[0] == "error" and "no loop named 'nowhere'" in editor.explanation.text()
    assert editor.verdict(3)[0] == "not reached" and not editor.open_button.isEnabled()
    assert editor.undo_button.toolTip() == "Undo Edit interchange(co, nowhere)"
    editor.undo_button.click()
    editor.undo_button.click()
    assert rows(editor)[0] == "1. interchange(co, oh)" and editor.verdict(0)[0] == "legal"
    editor.redo_button.click()
    assert rows(editor)[0] == "1. interchange(co, kw)"


def test_malformed_parameters_are_not_applied(editor):
    editor.select(1)
    edit(editor.fields["B"], "2**2")
    assert "not applied" in editor.explanation.text() and rows(editor)[1] == "2. bottleneck(oh, 2)"


def test_add_remove_and_reorder_by_drag_and_buttons(editor, qtbot):
    editor.select(4)
    editor.add_actions["group"].trigger()
    assert rows(editor)[5] == "6. group(co, ci, 2)" and editor.selected_row() == 5
    assert editor.verdict(5)[0] == "legal"
    editor.add_actions["parallel"].trigger()
    assert rows(editor)[6] == "7. parallel(g)"
    # drag step 7 to the top: the list's own model moves the row, as an internal drop does
    assert editor.steps.model().moveRow(QModelIndex(), 6, QModelIndex(), 0)
    assert rows(editor)[0] == "1. parallel(g)" and editor.verdict(0)[0] == "error"  # no g before the group
    editor.undo()
    assert rows(editor)[6] == "7. parallel(g)"
    editor.select(6)
    editor.up_button.click()
    assert rows(editor)[5:] == ["6. parallel(g)", "7. group(co, ci, 2)"] and editor.selected_row() == 5
    editor.remove_button.click()
    assert len(rows(editor)) == 6 and editor.verdict(5)[0] == "legal"


def test_nest_sizes_and_reassociation(editor):
    editor.select(0)
    edit(editor.fields["loops"], "co, kh")
    assert editor.verdict(0)[0] == "illegal"
    editor.reassociate.click()
    assert editor.sequence.reassociate and editor.verdict(0)[0] == "legal"
    edit(editor.sizes, "C_in=8,C_out=8,H=6,W=8,K=3")
    assert editor.verdict(1)[0] == "legal" and editor.verdict(2)[0] == "legal"
    edit(editor.sizes, "C_in=8,C_out=8,H=6,W=8")  # K missing: no nest at all
    assert editor.report is None and "conv2d needs values for K" in editor.nest_view.toPlainText()
    assert not editor.add_button.isEnabled()
    editor.undo()
    assert editor.report is not None and editor.add_button.isEnabled()


def test_open_result_hands_over_an_operator_and_save_round_trips(editor, qtbot, tmp_path):
    with qtbot.waitSignal(editor.openOperator) as blocker:
        editor.open_button.click()
    graph = graph_from_document(blocker.args[0])
    s = summarize(graph)
    assert s.ok and s.numeric_cost["flops"] == 18432
    editor.save(tmp_path / "mine.json")
    doc = json.loads((tmp_path / "mine.json").read_text())
    assert doc["format"] == "tessera.sequence" and doc["bindings"]["H"] == 8 and len(doc["steps"]) == 5


def test_a_peeled_result_opens_as_one_operator_joined_by_concat(qtbot):
    widget = SequenceEditor()
    qtbot.addWidget(widget)
    widget.load(SEQ / "seq_split_group.json")
    assert widget.totals.text().startswith("Result (2 parts joined by concat):")
    document = widget.result_document()
    assert widget.open_button.isEnabled() and [n["op"] for n in document["nodes"]].count("concat") == 1
    assert widget.steps.item(1).icon() is not None and widget.steps.item(1).foreground().color().name() == "#1f2937"
    assert widget.steps.dragDropMode().name == "InternalMove"
    assert widget.steps.defaultDropAction() == Qt.DropAction.MoveAction
