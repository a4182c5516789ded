"""Exports of discovered operators and results: PyTorch source (with a conv-replacement
helper), TVMScript and compiled libraries (tvm_export, worker processes only), operator
JSON, Graphviz DOT, and results as CSV. Pictures are drawn by views.pictures.

Importing this package imports neither torch nor TVM."""

from .errors import ExportError
from .exportable import Exportable, from_document, from_file, from_store, resolve
from .formats import FORMATS, OPERATOR, OPERATOR_FORMATS, RESULTS, RESULTS_FORMATS, UNSEQUENCED_FORMATS, Format
from .graph_pictures import graph_dot
from .names import class_name, docstring_text, file_stem
from .outputs import output_paths, refuse_overwrite, write_text, write_with
from .results_csv import pareto_csv, results_csv
from .torch_source import torch_source

__all__ = [
    "FORMATS",
    "OPERATOR",
    "OPERATOR_FORMATS",
    "RESULTS",
    "RESULTS_FORMATS",
    "UNSEQUENCED_FORMATS",
    "ExportError",
    "Exportable",
    "Format",
    "class_name",
    "docstring_text",
    "file_stem",
    "from_document",
    "from_file",
    "from_store",
    "graph_dot",
    "output_paths",
    "pareto_csv",
    "refuse_overwrite",
    "resolve",
    "results_csv",
    "torch_source",
    "write_text",
    "write_with",
]
