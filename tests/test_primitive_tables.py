"""Every primitive of the registry (core.ir.primitives.REGISTRY) is in every table that handles
primitives one by one, so a primitive added to the registry and forgotten in one of them fails
here, not at run time: the PyTorch templates, TVM's lowerings (views and arithmetic), the
kernel stages the cost model reads (the same views as TVM's), the functions of element-wise
and broadcast primitives in both code generators, the palette's search terms, and a lowering
case compiled by tests/core/test_codegen_tvm.py."""

from __future__ import annotations

import pytest

from core.analysis import kernel_stages
from core.codegen import to_tvm, torch_ops, tvm_views
from core.ir.primitives import BINARY_OPS, REGISTRY, UNARY_OPS
from tests.core.primitive_cases import CASES

pytestmark = pytest.mark.tvm  # to_tvm imports TVM


def _ops(classes) -> set[str]:
    return {cls.op for cls in classes}


def test_every_primitive_has_a_pytorch_template():
    assert _ops(torch_ops.TEMPLATES) == set(REGISTRY)


def test_every_primitive_lowers_to_tvm_as_a_view_or_a_computation_never_both():
    views, computed = set(tvm_views.VIEWS), set(to_tvm.ARITHMETIC)
    assert not views & computed
    assert _ops(views | computed) == set(REGISTRY)


def test_the_cost_models_kernel_stages_take_the_views_tvm_takes():
    assert set(kernel_stages.VIEWS) == set(tvm_views.VIEWS)


def test_every_function_of_elementwise_and_broadcast_has_code_in_both_generators():
    assert set(torch_ops.UNARY) == set(to_tvm.UNARY) == set(UNARY_OPS)
    assert set(torch_ops.BINARY) == set(to_tvm.BINARY) == set(BINARY_OPS)


def test_every_primitive_has_search_terms_in_the_palette():
    from views.editor.palette import SEARCH_TERMS

    assert set(SEARCH_TERMS) == set(REGISTRY)


def test_every_primitive_has_a_lowering_case():
    used = {op for _, steps, _ in CASES.values() for _, op, _, _ in steps}
    assert used == set(REGISTRY)


def test_a_forgotten_primitive_is_caught(monkeypatch):
    """The checks compare with the registry as it is: one more primitive there fails them."""

    class Novel(REGISTRY["shift"]):
        op = "novel"

    monkeypatch.setitem(REGISTRY, "novel", Novel)
    with pytest.raises(AssertionError):
        test_every_primitive_has_a_pytorch_template()
    with pytest.raises(AssertionError):
        test_every_primitive_has_a_lowering_case()
