"""Which operator stands in for which convolution of a backbone (NAS-PTE's layer-wise choice).

One operator in every convolution it fits is the special case; an assignment names, per layer
(as the backbone's modules name it, e.g. "layer1.0.conv1"), one of its operators; a layer it
does not name keeps its conv. Files are `{"format": "tessera.assignment", "version": 1,
"backbone", "operators": [operator documents], "layers": {layer: operator name}}`, with an
optional "name" and "reasons" ({layer: why it got its operator or kept its conv}). Loading
checks every field and never executes anything from the file. No torch: job payloads and the
command line read it cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import shorten, shown

from ..atomic import write_text_atomically
from ..ir.errors import FormatError
from ..ir.graph import OperatorGraph
from ..ir.serialize import check_header, graph_from_document, read_json, refuse_unknown_fields, to_document
from .specs import BACKBONE_NAMES

FORMAT = "tessera.assignment"
VERSION = 1


@dataclass(frozen=True)
class Assignment:
    """`operators` by their (distinct) names; `layers`: layer -> operator name."""

    backbone: str
    operators: Mapping[str, OperatorGraph]
    layers: Mapping[str, str]
    reasons: Mapping[str, str] = field(default_factory=dict)
    name: str = "per-layer"

    def operator_at(self, layer: str) -> OperatorGraph | None:
        """The operator standing in for `layer`, None where it keeps its conv."""
        return self.operators[self.layers[layer]] if layer in self.layers else None

    def check_layers(self, known: Collection[str]) -> None:
        """FormatError naming every layer the assignment mentions that `known` (the model's
        convolutions) does not have."""
        unknown = sorted((set(self.layers) | set(self.reasons)) - set(known))
        if unknown:
            raise FormatError(
                f"assignment {self.name}: no convolution named {', '.join(map(repr, unknown))} in "
                f"{self.backbone} (its convolutions: {', '.join(known)})"
            )

    def check_backbone(self, backbone: str) -> None:
        """FormatError unless the assignment names layers of `backbone`."""
        if backbone != self.backbone:
            raise FormatError(f"assignment {self.name} names layers of {self.backbone}, not of {backbone}")

    def to_document(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "backbone": self.backbone,
            "operators": [to_document(g) for g in self.operators.values()],
            "layers": dict(self.layers),
            "reasons": dict(self.reasons),
        }

    def lines(self) -> list[str]:
        """One line per layer it names or gives a reason for."""
        names = list(self.reasons) + [layer for layer in self.layers if layer not in self.reasons]
        return [f"{self.layers.get(n, '(conv kept)'):24} {n:28} {self.reasons.get(n, '')}".rstrip() for n in names]


def as_assignment(stand_in: OperatorGraph | Assignment, layers: Iterable[str]) -> Assignment:
    """An operator as the assignment it is the special case of: named for every one of `layers`."""
    if isinstance(stand_in, Assignment):
        return stand_in
    return Assignment("", {stand_in.name: stand_in}, dict.fromkeys(layers, stand_in.name), name="")


def assignment_from_document(doc: Any, source: str = "<document>") -> Assignment:
    """The assignment a document describes; FormatError naming the file and field otherwise."""
    fail = check_header(doc, FORMAT, VERSION, source)
    refuse_unknown_fields(doc, {"format", "version", "name", "backbone", "operators", "layers", "reasons"}, fail)
    for key in ("backbone", "operators", "layers"):
        if key not in doc:
            raise fail(key, "missing field")
    name = doc.get("name", "per-layer")
    if not isinstance(name, str):
        raise fail("name", "must be a string")
    if doc["backbone"] not in BACKBONE_NAMES:
        raise fail("backbone", f"expected one of {', '.join(BACKBONE_NAMES)}, got {shown(doc['backbone'])}")
    if not isinstance(doc["operators"], list):
        raise fail("operators", "expected a list of operator documents")
    operators: dict[str, OperatorGraph] = {}
    for i, operator in enumerate(doc["operators"]):
        graph = graph_from_document(operator, f"{source}: operators[{i}]")
        if not graph.name or graph.name in operators:
            raise fail(f"operators[{i}].name", f"each operator needs a name of its own, got {shown(graph.name)}")
        operators[graph.name] = graph
    layers, reasons = _strings(doc["layers"], "layers", fail), _strings(doc.get("reasons", {}), "reasons", fail)
    for layer, operator in layers.items():
        if operator not in operators:
            raise fail(
                f"layers.{shorten(layer)}", f"no operator named {shown(operator)} (operators: {', '.join(operators)})"
            )
    return Assignment(doc["backbone"], operators, layers, reasons, name)


def read_stand_in(path: str | Path) -> tuple[dict, OperatorGraph | Assignment]:
    """An operator or assignment file: its document and what it stands in with."""
    doc = read_json(path)
    return doc, stand_in_from_document(doc, str(path))


def save_assignment(assignment: Assignment, path: str | Path) -> None:
    write_text_atomically(path, json.dumps(assignment.to_document(), indent=2, allow_nan=False) + "\n")


def stand_in_from_document(doc: Any, source: str = "<document>") -> OperatorGraph | Assignment:
    """What an evaluation job's document stands in for the backbone's convolutions with: an
    operator (every layer it fits) or an assignment (the layers it names)."""
    if is_assignment(doc):
        return assignment_from_document(doc, source)
    return graph_from_document(doc, source)


def is_assignment(doc: Any) -> bool:
    """Whether a document says it is an assignment (an operator's says "tessera.operator")."""
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def _strings(value: Any, where: str, fail) -> dict[str, str]:
    if not isinstance(value, dict):
        raise fail(where, "expected an object {layer: text}")
    for key, text in value.items():
        if not isinstance(text, str) or not text:
            raise fail(f"{where}.{shorten(key)}", f"expected a non-empty string, got {shown(text)}")
    return dict(value)
