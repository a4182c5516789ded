"""The export formats: what each one writes, its file suffix, and whether it exports one
operator or the whole results store. The CLI's --format choices and the export dialog's
list both come from here."""

from __future__ import annotations

from dataclasses import dataclass

OPERATOR, RESULTS = "operator", "results"


@dataclass(frozen=True)
class Format:
    name: str
    suffix: str  # appended to the file stem a folder export makes from the operator's name
    subject: str  # OPERATOR: one operator (ID or FILE); RESULTS: the results store
    description: str


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("torch", ".py", OPERATOR, "PyTorch module source (imports only torch)"),
        Format("torch-replace", ".py", OPERATOR, "PyTorch module source with replace_convs(model, example_input)"),
        Format("tvmscript", "_tvmscript.py", OPERATOR, "TVM PrimFunc as TVMScript"),
        Format("library", ".so", OPERATOR, "compiled shared library for this CPU, with a loader script"),
        Format("json", ".json", OPERATOR, "operator document (Tessera JSON)"),
        Format(
            "sequence", "_sequence.json", OPERATOR, "the transformation sequence a search found it by (Tessera JSON)"
        ),
        Format("dot", ".dot", OPERATOR, "Graphviz DOT of the graph"),
        Format("png", ".png", OPERATOR, "picture of the graph (PNG)"),
        Format("svg", ".svg", OPERATOR, "picture of the graph (SVG)"),
        Format("csv", ".csv", RESULTS, "every result in the store (CSV)"),
        Format("pareto-csv", ".csv", RESULTS, "results on the Pareto front (CSV)"),
        Format("pareto-png", ".png", RESULTS, "Pareto plot (PNG)"),
        Format("pareto-svg", ".svg", RESULTS, "Pareto plot (SVG)"),
    )
}
OPERATOR_FORMATS = tuple(f for f in FORMATS.values() if f.subject == OPERATOR)
#: for an operator no transformation sequence made (drawn, sampled): all but "sequence"
UNSEQUENCED_FORMATS = tuple(f for f in OPERATOR_FORMATS if f.name != "sequence")
RESULTS_FORMATS = tuple(f for f in FORMATS.values() if f.subject == RESULTS)
