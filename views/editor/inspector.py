"""The inspector: the selected node's parameters, editable by kind, and what the
analysis says about it. Each committed edit is one Editor.set_params call, so
one undo step; values the core rejects are shown, not applied."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.errors import TesseraError
from core.ir.errors import SizeError
from core.ir.graph import INPUT, OUTPUT
from core.ir.primitives import Param
from core.ir.symbolic import parse_size

from .. import theme
from ..formatting import human, numeric_shape
from .document import OperatorDocument


class ParamField(QWidget):
    """One parameter's editor; `commit(name, value)` is called with a parsed value."""

    def __init__(self, param: Param, commit):
        super().__init__()
        self.param, self._commit = param, commit
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.editor: QSpinBox | QComboBox | QLineEdit
        if param.kind in ("dim", "int"):
            spin = self.editor = QSpinBox()
            spin.setRange(-16, 16) if param.kind == "dim" else spin.setRange(-4096, 4096)
            spin.setKeyboardTracking(False)  # one commit per typed value, not per keystroke
            spin.valueChanged.connect(lambda v: self._commit(param.name, v))
        elif param.kind == "choice":
            combo = self.editor = QComboBox()
            combo.addItems(list(param.choices))
            combo.activated.connect(lambda i: self._commit(param.name, param.choices[i]))
        else:
            line = self.editor = QLineEdit()
            line.setPlaceholderText(
                {"size": "e.g. K or C_out/G", "dims": "e.g. 0, 1"}[param.kind]
                + (" (empty: none)" if param.optional else "")
            )
            line.editingFinished.connect(lambda: self._text_finished(line))
        self.editor.setToolTip(param.doc)
        layout.addWidget(self.editor, 1)
        self.hint = QLabel()
        self.hint.setObjectName("hint")
        layout.addWidget(self.hint)

    def set_value(self, value, hint: str = "") -> None:
        self.editor.blockSignals(True)
        if isinstance(self.editor, QSpinBox):
            self.editor.setValue(value)
        elif isinstance(self.editor, QComboBox):
            self.editor.setCurrentText(value)
        elif not (self.editor.hasFocus() and self.editor.isModified()):
            self.editor.setText(_text(value))
            self.editor.setModified(False)
        self.editor.blockSignals(False)
        self.hint.setText(hint)
        self.hint.setVisible(bool(hint))

    def _text_finished(self, line: QLineEdit) -> None:
        text = line.text().strip()
        line.setModified(False)
        try:
            value = parse_text(self.param, text)
        except ValueError as e:
            self._commit(self.param.name, e)
            return
        self._commit(self.param.name, value)


def parse_text(param: Param, text: str):
    """Text typed for a size or dims parameter -> its value; ValueError with a readable reason."""
    if param.kind == "size":
        if not text:
            if param.optional:
                return None
            raise ValueError(f"{param.name} needs a size expression such as K or C_out/G")
        try:
            parse_size(text)
        except SizeError as e:
            raise ValueError(f"{param.name}: {e}") from None
        return text
    try:
        values = [int(part) for part in text.replace(" ", "").strip("[]").split(",") if part]
    except ValueError:
        raise ValueError(f"{param.name}: expected axis indices separated by commas, e.g. 0, 1") from None
    if not values:
        raise ValueError(f"{param.name}: give at least one axis index")
    return values


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


class Inspector(QScrollArea):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no Tab stop of its own: its fields have theirs
        body = QWidget()
        body.setObjectName("inspectorBody")
        self.setWidget(body)
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(12, 10, 12, 10)
        self._layout.setSpacing(8)
        self.title = QLabel()
        self.title.setObjectName("inspectorTitle")
        self.subtitle = QLabel()
        self.subtitle.setObjectName("hint")
        self.doc = QLabel()
        self.doc.setWordWrap(True)
        self.doc.setObjectName("inspectorDoc")
        self.name_edit = QLineEdit()  # the operator's name, when no node is selected
        self.name_edit.setPlaceholderText("e.g. my_conv")
        self.name_edit.setToolTip(
            "The operator's name in jobs, results and the gallery; saving an unnamed operator names it after its file"
        )
        self.name_edit.editingFinished.connect(self._rename)
        self.name_frame = QWidget()
        name_form = QFormLayout(self.name_frame)
        name_form.setContentsMargins(0, 4, 0, 4)
        name_form.addRow("Name", self.name_edit)
        self.form_frame = QWidget()
        self.form = QFormLayout(self.form_frame)
        self.form.setContentsMargins(0, 4, 0, 4)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.error = QLabel()
        self.error.setObjectName("errorText")
        self.error.setWordWrap(True)
        self.facts = QLabel()
        self.facts.setWordWrap(True)
        self.facts.setTextFormat(Qt.TextFormat.RichText)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for w in (self.title, self.subtitle, self.name_frame, self.doc, self.form_frame, self.error, self.facts):
            self._layout.addWidget(w)
        self._layout.addStretch(1)
        self._document: OperatorDocument | None = None  # set_document gives it one before use
        self.node: str | None = None
        self.fields: dict[str, ParamField] = {}

    @property
    def document(self) -> OperatorDocument:
        if self._document is None:
            raise RuntimeError("the inspector has no document before set_document()")
        return self._document

    def set_document(self, document: OperatorDocument) -> None:
        if self._document is not None:
            self._document.summaryChanged.disconnect(self.refresh)
        self._document = document
        document.summaryChanged.connect(self.refresh)
        self.show_node(None)

    def show_node(self, node: str | None) -> None:
        """Rebuild the form for `node` (None: the operator as a whole)."""
        self.node = node
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        self.error.clear()
        if node is not None and node not in (INPUT, OUTPUT):
            for param in self.document.graph.prim(node).spec:
                field = ParamField(param, self._commit)
                self.fields[param.name] = field
                self.form.addRow(param.name, field)
        self.refresh()

    def refresh(self) -> None:
        graph, node = self.document.graph, self.node
        if node is not None and node not in graph.g:
            self.show_node(None)
            return
        self.name_frame.setVisible(node is None)
        if node is None:
            self.title.setText(self.document.operator_name)
            self.subtitle.setText("operator")
            if not (self.name_edit.hasFocus() and self.name_edit.isModified()):
                self.name_edit.setText(self.document.operator_name if self.document.named else "")
            about = "\n\n".join([graph.description, *graph.notes]).strip()
            self.doc.setText(about or "Select a node to edit its parameters.")
            self.facts.setText(self._operator_facts())
            self.form_frame.setVisible(False)
            return
        self.form_frame.setVisible(bool(self.fields))
        if node in (INPUT, OUTPUT):
            self.title.setText(node.capitalize())
            self.subtitle.setText("declared tensor")
            self.doc.setText(
                "The operator's input tensor (batch implicit)."
                if node == INPUT
                else "The shape the operator must produce: [" + ", ".join(graph.output_shape) + "]."
            )
        else:
            prim = graph.prim(node)
            color = theme.CATEGORY_COLORS[prim.category]
            self.title.setText(prim.title)
            self.subtitle.setText(
                f"<span style='color:{color}'>●</span> {prim.category} · <code>{prim.op}</code> · {escape(node)}"
            )
            self.doc.setText(prim.doc)
            first_input = self._input_shape(node)
            for param in prim.spec:
                value = prim.params[param.name]
                hint = ""
                if param.kind == "dim" and first_input is not None:
                    hint = (
                        f"= {first_input[value].size}"
                        if -len(first_input) <= value < len(first_input)
                        else "out of range"
                    )
                self.fields[param.name].set_value(value, hint)
        self.facts.setText(self._node_facts(node))

    def _rename(self) -> None:
        if not self.name_edit.isModified():
            return
        self.name_edit.setModified(False)
        try:
            self.document.rename(self.name_edit.text())
        except ValueError as e:
            self.error.setText(str(e))
        else:
            self.error.clear()

    def _input_shape(self, node: str):
        srcs = self.document.graph.inputs_of(node)
        return self.document.summary.shapes.shapes.get(srcs[0]) if srcs and srcs[0] else None

    def _commit(self, name: str, value) -> None:
        if isinstance(value, Exception):
            self.error.setText(str(value))
            return
        node = self.node
        if node is None:  # fields are shown for a node only
            return
        prim = self.document.graph.prim(node)
        if prim.params[name] == value:
            self.error.clear()
            return
        try:
            self.document.editor.set_params(node, **{name: value})
        except TesseraError as e:
            self.error.setText(str(e))
            self.refresh()  # show the value that is really in the graph
        else:
            self.error.clear()

    # read-only facts ------------------------------------------------------------
    def _node_facts(self, node: str) -> str:
        summary = self.document.summary
        graph, report = summary.graph, summary.shapes
        numeric = summary.numeric_shapes or {}
        rows = []
        for port, src in zip(graph.ports(node), graph.inputs_of(node)):
            shape = report.shapes.get(src) if src else None
            rows.append((f"in ({port})", f"{src or '—'}: {_shape(shape, numeric.get(src) if src else None)}"))
        rows.append(("got" if node == OUTPUT else "out", _shape(report.shapes.get(node), numeric.get(node))))
        cost = summary.cost.nodes.get(node)
        numbers = (summary.numeric_cost or {}).get("nodes", {}).get(node)
        if cost is not None:
            for f in ("flops", "macs", "params"):
                value = getattr(cost, f)
                rows.append(
                    (
                        f.upper() if f != "params" else "params",
                        f"<code>{escape(str(value))}</code>" + (f" = {numbers[f]:,}" if numbers else ""),
                    )
                )
        html = _table(rows)
        for d in report.for_node(node):
            html += f"<p style='color:{theme.SEVERITY_COLORS[d.severity]}'>{escape(d.message)}</p>"
        for c in report.constraints:
            if c.node == node:
                html += f"<p style='color:{theme.SEVERITY_COLORS['pending']}'>{escape(c.reason)}</p>"
        return html

    def _operator_facts(self) -> str:
        summary = self.document.summary
        graph = summary.graph
        numeric = summary.numeric_shapes or {}
        rows = [
            ("input", _shape(graph.input_type(), numeric.get(INPUT))),
            ("output", "[" + ", ".join(graph.output_shape) + "]"),
            ("primitives", str(len(graph.primitive_nodes()))),
        ]
        if summary.numeric_cost:
            c = summary.numeric_cost
            rows += [
                ("FLOPs", f"{c['flops']:,} ({human(c['flops'])})"),
                ("MACs", f"{c['macs']:,}"),
                ("params", f"{c['params']:,}"),
            ]
        else:
            rows += [
                ("FLOPs", f"<code>{escape(str(summary.cost.total('flops')))}</code>"),
                ("params", f"<code>{escape(str(summary.cost.total('params')))}</code>"),
            ]
        return _table(rows)


def _shape(shape, numeric) -> str:
    if shape is None:
        return "—"
    text = f"<code>{escape(str(shape))}</code>"
    return text + (f" = {numeric_shape(numeric)}" if numeric else "")


def _table(rows: list[tuple[str, str]]) -> str:
    return (
        "<table cellspacing='0' cellpadding='2'>"
        + "".join(
            f"<tr><td style='color:{theme.TEXT_MUTED}; padding-right:8px'>{k}</td><td>{v}</td></tr>" for k, v in rows
        )
        + "</table>"
    )
