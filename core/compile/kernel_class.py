"""Kernel classes for transfer-tuning: kernels with the same operation sequence at any sizes.

A tuned schedule (a MetaSchedule trace) names blocks and walks loop nests by
position, so whether it can apply to another kernel depends on the kernel's
PrimFunc: its blocks, their loop nests, iteration kinds and index expressions.
The class key is therefore taken from the PrimFunc, for both sides of a
transfer: an operator of our IR is lowered first (core.codegen.to_tvm), a
tuning database's workload (`Workload.mod`) or a task of a relax network is
used as it is. The key is the PrimFunc's TVMScript with every integer literal
(extents, shapes, index offsets) replaced by `#` and every identifier that is
not an attribute renamed by first appearance (buffer and loop variable names
differ between networks; block names are string literals and stay, since
traces look blocks up by name), hashed. Equal keys mean equal programs up to
sizes and names; the key is the same in every process for one TVM version.

Two documents of our IR that lower to the same structure share a class; one
whose lowering changes with its sizes (a reduction split only where it pays)
falls into different classes at those sizes, as its schedules would differ too.
Imports TVM: worker processes only."""

from __future__ import annotations

import ast
import hashlib
import io
import keyword
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass

import tvm
from tvm import tirx

from ..ir.graph import OperatorGraph
from .errors import CompileError


class TransferError(CompileError):
    """Schedules cannot be reused: no tuning database where one was named, a malformed kernel."""


_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER}
_LAYOUT = {tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}


@dataclass(frozen=True)
class KernelClass:
    """`key`: 16 hex digits naming the class; `blocks`: the kernel's block names, for reports."""

    key: str
    blocks: tuple[str, ...]

    def describe(self) -> str:
        return f"class {self.key} ({', '.join(self.blocks)})"


def kernel_class(kernel: tvm.IRModule | tirx.PrimFunc) -> KernelClass:
    """The class of a PrimFunc, or of the one PrimFunc in an IRModule (a tuning workload)."""
    text, blocks = size_free_text(_prim_func(kernel).script())
    return KernelClass(hashlib.sha256(text.encode()).hexdigest()[:16], blocks)


def operator_class(graph: OperatorGraph, bindings: Mapping[str, int] | None = None, batch: int = 1) -> KernelClass:
    """The class of an operator of our IR at the given sizes (its lowered PrimFunc's class)."""
    from ..codegen.to_tvm import lower

    return kernel_class(lower(graph, bindings, batch).func)


def size_free_text(script: str) -> tuple[str, tuple[str, ...]]:
    """TVMScript with integer literals replaced by `#`, comments dropped and non-attribute
    identifiers renamed a0, a1, ... by first appearance (Python's tokenizer reads the script);
    and the names of the blocks it declares (`T.sblock("name")`), in order."""
    names: dict[str, str] = {}
    out: list[str] = []
    blocks: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(script).readline):
        kind, text = token.type, token.string
        if kind in _DROPPED:
            continue
        if kind in _LAYOUT:
            text = _LAYOUT[kind]
        elif kind == tokenize.NUMBER and text.isdigit():
            text = "#"
        elif kind == tokenize.NAME and out[-1:] != ["."] and not keyword.iskeyword(text):
            text = names.setdefault(text, f"a{len(names)}")
        elif kind == tokenize.STRING and out[-2:] == ["sblock", "("]:
            blocks.append(ast.literal_eval(text))
        out.append(text)
    return " ".join(out), tuple(b for b in blocks if b != "root")


def _prim_func(kernel) -> tirx.PrimFunc:
    if isinstance(kernel, tirx.PrimFunc):
        return kernel
    funcs = [f for f in kernel.functions.values() if isinstance(f, tirx.PrimFunc)]
    if len(funcs) != 1:
        raise TransferError(f"a kernel module holds one PrimFunc, this one holds {len(funcs)}")
    return funcs[0]
