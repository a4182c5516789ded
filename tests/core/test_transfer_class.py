"""Kernel classes: the same operation sequence at any sizes and names is one class; another
structure is another class; an operator of our IR, a tuning database's workload and a task
of a TVM relax network are classified by the same function."""

from __future__ import annotations

import pytest
from tvm import te, tirx
from tvm.s_tir import meta_schedule as ms

from core.codegen.to_tvm import lower
from core.compile.kernel_class import kernel_class, operator_class, size_free_text
from core.compile.target import local_target
from core.data.specs import BackboneSpec
from core.ir.serialize import canonical_document, graph_from_document, read_document
from core.networks.backbone_tuning import backbone_kernels

pytestmark = pytest.mark.tvm


def operator(examples_dir, name):
    """The example in canonical form (as jobs lower it), with its own bindings."""
    document = read_document(examples_dir / f"{name}.json")
    graph = graph_from_document(canonical_document(document))
    graph.bindings = graph_from_document(document).bindings
    return graph


def matmul(n: int, m: int, k: int, names=("A", "B", "C"), relu: bool = False) -> tirx.PrimFunc:
    a, b = te.placeholder((n, k), name=names[0]), te.placeholder((k, m), name=names[1])
    r = te.reduce_axis((0, k), "r")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name=names[2])
    out = te.compute((n, m), lambda i, j: tirx.max(c[i, j], tirx.const(0.0, "float32")), name="relu") if relu else c
    return te.create_prim_func([a, b, out])


def test_an_operator_keeps_its_class_at_any_sizes(examples_dir):
    conv = operator(examples_dir, "conv2d")
    small = operator_class(conv, {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3})
    large = operator_class(conv, {"C_in": 64, "C_out": 32, "H": 56, "W": 28, "K": 5}, batch=2)
    assert small == large and small.blocks == ("pad_x", "n2") and len(small.key) == 16
    others = {
        name: operator_class(operator(examples_dir, name)).key
        for name in ("depthwise_separable", "grouped_conv", "involution", "shift_conv")
    }
    assert len({small.key, *others.values()}) == 5  # every other structure is another class


def test_names_and_sizes_do_not_matter_structure_does():
    assert kernel_class(matmul(4, 8, 16)) == kernel_class(matmul(64, 3, 7, names=("lv12", "param_0", "C")))
    assert kernel_class(matmul(4, 8, 16)).key != kernel_class(matmul(4, 8, 16, relu=True)).key
    assert kernel_class(matmul(4, 8, 16, relu=True)).blocks == ("C", "relu")


def test_size_free_text_abstracts_integers_and_names_but_keeps_floats_and_blocks():
    text, blocks = size_free_text(
        'for i0 in T.grid(56):\n    with T.sblock("conv"):\n        y[i0 + 1] = x[i0] * T.float32(0.5)  # a comment\n'
    )
    assert (
        text == 'for a0 in a1 . grid ( # ) : ; { with a1 . sblock ( "conv" ) : ; '
        "{ a2 [ a0 + # ] = a3 [ a0 ] * a1 . float32 ( 0.5 ) ; } }"
    )
    assert blocks == ("conv",)


def test_a_database_workload_has_its_operators_class(examples_dir):
    conv = operator(examples_dir, "conv2d")
    module = lower(conv, {"C_in": 4, "C_out": 4, "H": 8, "W": 8, "K": 3}).module()
    stored = ms.database.Workload.from_json(ms.database.Workload(module).as_json())  # as a database keeps it
    assert kernel_class(stored.mod) == operator_class(conv, {"C_in": 16, "C_out": 8, "H": 12, "W": 12, "K": 3})


def test_kernels_of_a_network_at_different_sizes_share_classes():
    kernels = {k.name: k for k in backbone_kernels(BackboneSpec("resnet18", 4, 8), local_target(1), ("conv2d",))}
    shapes = {
        name: [tuple(int(d) for d in arg.shape) for arg in ms.arg_info.ArgInfo.from_prim_func(k.mod["main"])]
        for name, k in kernels.items()
    }
    assert shapes["conv2d"][0] == (1, 3, 8, 8) and shapes["conv2d1"][0] == (1, 4, 8, 8)  # stem and stage 1
    assert kernels["conv2d"].kclass == kernels["conv2d1"].kclass  # both 3x3 stride 1, other sizes
    classes = {k.kclass.key for k in kernels.values()}
    assert 2 <= len(classes) < len(kernels)  # also strided 3x3 and strided 1x1 convolutions
    assert all(k.kclass.blocks == ("pad_temp", "conv2d_nchw") for k in kernels.values())
