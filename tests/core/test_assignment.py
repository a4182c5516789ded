"""Per-layer assignments (NAS-PTE's layer-wise choice): the document, replacing exactly the
layers it names, and the per-layer Fisher Potential rule on a real screen."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from torch import nn

from core.analysis.summary import summarize
from core.data.assignment import (
    Assignment,
    assignment_from_document,
    read_stand_in,
    save_assignment,
    stand_in_from_document,
)
from core.data.backbones import build_backbone
from core.data.conv_fit import layer_bindings
from core.data.swap_convs import ReplacedConv, conv_names, replace_convs
from core.ir.errors import FormatError
from core.ir.serialize import content_hash, load_operator, to_document
from core.networks.settings import DeploySettings
from core.train.handlers import train_job
from core.train.payloads import E2EPayload, TrainPayload
from core.train.per_layer import assign_per_layer, layer_flops
from core.train.screening import screen_for
from tests.core.accuracy_settings import SHORT, TINY
from tests.support import EXAMPLES, Ctx, chain

torch.set_num_threads(1)
DWS, GROUPED = load_operator(EXAMPLES / "depthwise_separable.json"), load_operator(EXAMPLES / "grouped_conv.json")
CONV = load_operator(EXAMPLES / "conv2d.json")
POINTWISE = chain(  # a 1x1 convolution: no window
    ["C_in", "H", "W"],
    ["C_out", "H", "W"],
    [("share", "share", {"dims": [0], "out": "C_out"}, ["input"]), ("sum", "reduce", {"dim": 1}, ["share"])],
)
POINTWISE.name = "pointwise"
PLAN = {"layers.0.conv1": "depthwise_separable", "layers.1.conv2": "grouped_conv", "layers.3.conv1": "grouped_conv"}


def plan() -> Assignment:
    return Assignment("resnet18", {g.name: g for g in (DWS, GROUPED)}, PLAN, {"stem.0": "kept by hand"}, "mine")


def test_document_round_trips_and_refuses_what_it_cannot_use(tmp_path):
    path = tmp_path / "plan.json"
    save_assignment(plan(), path)
    doc, again = read_stand_in(path)
    assert isinstance(again, Assignment) and again.to_document() == doc == plan().to_document()
    again.check_layers(conv_names(TINY.spec))
    assert (again.name, again.backbone, dict(again.layers), dict(again.reasons)) == (
        "mine",
        "resnet18",
        PLAN,
        {"stem.0": "kept by hand"},
    )
    assert isinstance(stand_in_from_document(doc), Assignment)
    assert stand_in_from_document(to_document(DWS)).name == "depthwise_separable"

    path.write_text(json.dumps({**doc, "layers": {**PLAN, "layers.9.conv7": "grouped_conv"}}))
    with pytest.raises(FormatError, match=r"no convolution named 'layers.9.conv7' in resnet18"):
        read_stand_in(path)[1].check_layers(conv_names(TINY.spec))
    with pytest.raises(FormatError, match=r"layers.layers.0.conv1: no operator named 'nope'"):
        assignment_from_document({**doc, "layers": {"layers.0.conv1": "nope"}})
    missing = {k: v for k, v in doc.items() if k != "backbone"}
    with pytest.raises(FormatError, match="backbone: missing field"):
        assignment_from_document(missing)
    with pytest.raises(FormatError, match=r"unknown field\(s\) extra"):
        assignment_from_document({**doc, "extra": 1})
    twice = {**doc, "operators": [to_document(DWS), to_document(DWS)]}
    with pytest.raises(FormatError, match=r"operators\[1\].name: each operator needs a name of its own"):
        assignment_from_document(twice)
    with pytest.raises(FormatError, match="names layers of resnet18, not of vgg"):
        again.check_backbone("vgg")


def test_replace_convs_puts_each_named_operator_in_exactly_its_layers():
    net = build_backbone(TINY.spec, 10, seed=0)
    report = replace_convs(net, plan(), TINY.resolution)
    assert sorted(report.replaced) == sorted(PLAN)
    modules = dict(net.named_modules())
    for outcome in report.layers:
        module = modules[outcome.name]
        if outcome.name not in PLAN:
            assert isinstance(module, nn.Conv2d) and not outcome.replaced
            continue
        graph = DWS if PLAN[outcome.name] == "depthwise_separable" else GROUPED
        assert isinstance(module, ReplacedConv) and outcome.detail == f"{graph.name}: direct"
        params = summarize(graph, layer_bindings(graph, outcome.shape)).numeric_cost["params"]
        assert sum(p.numel() for p in module.parameters()) == params  # this operator's weights, no other's
    assert {o.detail for o in report.layers if o.name == "layers.2.conv2"} == {"not assigned"}

    with pytest.raises(FormatError, match="no convolution named 'fc'"):
        replace_convs(net, Assignment("resnet18", {"depthwise_separable": DWS}, {"fc": "depthwise_separable"}), 8)

    whole = build_backbone(TINY.spec, 10, seed=0)  # one operator: every layer it fits, as before
    everywhere = replace_convs(whole, DWS, TINY.resolution)
    assert everywhere.operator == "depthwise_separable" and len(everywhere.replaced) == 14


def test_per_layer_rule_picks_the_cheapest_passing_candidate_and_keeps_the_rest():
    screen = screen_for(TINY)
    assignment = assign_per_layer([DWS, GROUPED], screen)
    assert assignment.backbone == "resnet18" and set(assignment.reasons) == set(screen.original)
    # each candidate scored on its own, in every layer it fits: the rule's inputs, read here
    scores, flops = {}, {}
    for graph in (DWS, GROUPED):
        net, report = screen.candidate(graph)
        scores[graph.name] = screen.score(net, report)["fisher_layers"]
        flops.update({(graph.name, o.name): layer_flops(graph, o.shape) for o in report.layers if o.replaced})
    for layer, original in screen.original.items():
        passing = [op for op in scores if layer in scores[op] and scores[op][layer] >= original]
        if not passing:
            assert layer not in assignment.layers and "conv kept" in assignment.reasons[layer]
            continue
        chosen = assignment.layers[layer]
        assert chosen in passing and flops[chosen, layer] == min(flops[op, layer] for op in passing)
    picked = set(assignment.layers.values())
    kept_although_fitting = [
        layer for layer in screen.original if layer not in assignment.layers and layer in scores["grouped_conv"]
    ]
    assert picked == {"depthwise_separable", "grouped_conv"} and kept_although_fitting  # a real mix at TINY

    net, report = screen.candidate(assignment)  # the assignment scores like any operator
    assert sorted(report.replaced) == sorted(assignment.layers)
    assert screen.score(net, report)["fisher_potential"] > 0


def test_training_job_trains_the_network_the_assignment_describes():
    result = train_job(TrainPayload(plan().to_document(), TINY, SHORT).to_dict(), Ctx())
    assert sorted(o.name for o in result.replacement.layers if o.replaced) == sorted(PLAN)
    assert set(result.fisher_layers) == set(PLAN) and result.fisher_original > 0
    assert len(result.accuracy_per_epoch) == 1 and result.score.fisher_potential == result.fisher_potential
    with pytest.raises(FormatError, match="names layers of resnet18, not of vgg"):
        train_job(TrainPayload(plan().to_document(), replace(TINY, backbone="vgg"), SHORT).to_dict(), Ctx())


@pytest.mark.slow
@pytest.mark.tvm
def test_end_to_end_runs_each_layer_as_its_own_operator_kernel(tmp_path):
    """Two operators in three layers of a small ResNet-18, two of them strided (the 3x3 and the
    1x1 shortcut opening its second stage), built and checked against torch with TVM's default
    schedules (no tuning budget): each layer runs its own operator's kernel, a strided one at
    the subsampled size."""
    from core.train.handlers import e2e_job

    layers = {
        "layers.0.conv1": "grouped_conv",
        "layers.2.conv1": "depthwise_separable",
        "layers.2.shortcut.0": "grouped_conv",
    }
    mine = Assignment("resnet18", {g.name: g for g in (DWS, GROUPED)}, layers)
    deploy = DeploySettings("resnet18", width=4, resolution=8, trials=0, transfer=False, repeat=3, min_repeat_ms=5)
    result = e2e_job(E2EPayload(mine.to_document(), deploy, TINY, str(tmp_path)).to_dict(), Ctx())
    replaced = {o.name: o.detail for o in result.replacement.layers if o.replaced}
    assert sorted(replaced) == sorted(layers)
    assert replaced["layers.2.shortcut.0"] == "grouped_conv: input subsampled by 2 (stride 2) to 4x4, K=1, direct"
    kernels = {k.kernel for k in result.operator_kernels}
    assert {k.split("_", 2)[1] for k in kernels} == {content_hash(g)[:8] for g in (DWS, GROUPED)}, kernels
    assert {k for k in kernels if "_H4_" in k and "_W4" in k}  # the strided layers' kernels at 4x4
    assert result.max_abs_error < 1e-3 and result.latency_ms > 0 and not result.score.e2e_tuned
    vgg = replace(TINY, backbone="vgg")
    with pytest.raises(FormatError, match="names layers of resnet18, not of vgg"):
        e2e_job(E2EPayload(mine.to_document(), replace(deploy, backbone="vgg"), vgg).to_dict(), Ctx())


def test_per_layer_rule_by_latency_times_only_contested_layers_and_picks_the_fastest():
    """Where two candidates pass, the one the timing says runs faster wins, whatever its FLOPs;
    a layer one candidate passes is not timed; a candidate that could not be timed is left out."""
    screen = screen_for(TINY)
    by_flops = assign_per_layer([CONV, POINTWISE], screen)
    shapes = {o.name: o.shape for o in screen.candidate(CONV, shared=True)[1].layers}
    asked: list[tuple[str, str]] = []

    def timing(wanted):  # the operator with more FLOPs runs faster here, and the first 1x1 kernel crashes
        asked.extend((g.name, layer) for g, layer in wanted)
        crashed = next(layer for g, layer in wanted if g is POINTWISE)
        return {
            (g.name, layer): "the kernel crashed"
            if (g, layer) == (POINTWISE, crashed)
            else 1.0 / layer_flops(g, shapes[layer])
            for g, layer in wanted
        }

    by_latency = assign_per_layer([CONV, POINTWISE], screen, timing=timing)
    contested = {layer for _, layer in asked}
    assert len(contested) > 1 and {name for name, _ in asked} == {"conv2d", "pointwise"}
    for layer in contested:
        assert by_flops.layers[layer] == "pointwise" and by_flops.reasons[layer].startswith("cheapest passing: ")
        assert by_latency.layers[layer] == "conv2d"  # the faster, with more FLOPs
    crashed = asked[[name for name, _ in asked].index("pointwise")][1]
    assert by_latency.reasons[crashed].startswith("the only one passing: conv2d")
    assert "pointwise: not timed: the kernel crashed" in by_latency.reasons[crashed]
    for layer in contested - {crashed}:
        assert by_latency.reasons[layer].startswith("fastest passing: conv2d") and " ms" in by_latency.reasons[layer]
    for layer in set(by_latency.layers) - contested:  # one candidate passes: nothing to time
        assert by_latency.layers[layer] == by_flops.layers[layer]
        assert by_latency.reasons[layer].startswith("the only one passing: ")
