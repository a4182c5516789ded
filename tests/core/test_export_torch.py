"""Exported PyTorch source: imported in a fresh interpreter it computes what Tessera's own
module computes with the same weights; its docstring tells shapes, cost and origin; the
replacement helper swaps exactly the matching convolutions and the network still runs."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

import pytest
import torch
from torch import nn

from core.codegen import build_module
from core.export import ExportError, from_document, from_file, torch_source, write_text
from core.ir.serialize import read_document, to_document
from tests.support import EXAMPLES, chain, load_module

SMALL = {"C_in": 8, "C_out": 8, "H": 10, "W": 10, "K": 3, "G": 2}
CONV_SMALL = {k: v for k, v in SMALL.items() if k != "G"}
EXPORTED = ("conv2d", "gated_separable", "involution", "shift_conv")


def test_exported_modules_match_the_in_app_modules_in_a_fresh_process(tmp_path):
    expected = {}
    for example in EXPORTED:
        variables = read_document(EXAMPLES / f"{example}.json")["variables"]
        item = from_file(EXAMPLES / f"{example}.json", {k: v for k, v in SMALL.items() if k in variables})
        write_text(tmp_path / f"{example}.py", torch_source(item))
        torch.manual_seed(1)
        module = build_module(item.graph).eval()
        x = torch.randn(2, 8, 10, 10)
        torch.save(module.state_dict(), tmp_path / f"{example}.pt")
        torch.save(x, tmp_path / f"{example}_x.pt")
        with torch.no_grad():
            expected[example] = module(x)
    child = textwrap.dedent(f"""
        import importlib, inspect, json, sys, torch
        sys.path.insert(0, {str(tmp_path)!r})
        for name in {list(EXPORTED)!r}:
            module = importlib.import_module(name)
            classes = [c for c in vars(module).values() if isinstance(c, type) and issubclass(c, torch.nn.Module)
                       and c.__module__ == name]
            takes = inspect.signature(classes[0]).parameters
            op = classes[0](8, 8, **{{k: v for k, v in {{"kernel_size": 3, "G": 2}}.items() if k in takes}})
            op.load_state_dict(torch.load(f"{{name}}.pt", weights_only=True))
            with torch.no_grad():
                torch.save(op.eval()(torch.load(f"{{name}}_x.pt", weights_only=True)), f"{{name}}_y.pt")
        ours = sorted(m for m in sys.modules if m.split(".")[0] in ("core", "app", "views", "tvm", "numpy_ext"))
        print(json.dumps(ours))
    """)
    run = subprocess.run([sys.executable, "-c", child], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == []  # the exported files need nothing of Tessera
    for example in EXPORTED:
        got = torch.load(tmp_path / f"{example}_y.pt", weights_only=True)
        torch.testing.assert_close(got, expected[example], atol=1e-6, rtol=1e-6)


def test_the_docstring_gives_shapes_cost_sizes_weights_and_origin():
    item = from_file(EXAMPLES / "conv2d.json", {"C_in": 64, "C_out": 32, "H": 56, "W": 56, "K": 3})
    source = torch_source(item)
    doc = ast.get_docstring(ast.parse(source))
    assert "input [N, C_in, H, W] -> output [N, C_out, H, W] at any sizes the operator takes" in doc
    assert "Exported at: C_in=64, C_out=32, H=56, K=3, W=56" in doc
    assert "57,802,752 MACs, 115,605,504 FLOPs; 18,432 parameters" in doc
    assert "Origin:   file conv2d.json; content hash" in doc
    assert "w_share [C_out, C_in, K, K]" in doc
    assert "op = Conv2d(64, 32, kernel_size=3)" in doc
    fixed = ast.get_docstring(ast.parse(torch_source(item, generic=False)))
    assert "input [N, 64, 56, 56] -> output [N, 32, 56, 56]" in fixed
    assert "w_share [32, 64, 3, 3]" in fixed
    for text in (source, torch_source(item, replace_helper=True), torch_source(item, generic=False)):
        imports = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.Import, ast.ImportFrom))]
        assert {a.name.split(".")[0] for n in imports for a in n.names} | {
            n.module for n in imports if isinstance(n, ast.ImportFrom)
        } <= {"torch", "nn", "warnings"}


def test_names_from_a_file_cannot_inject_code(tmp_path):
    document = read_document(EXAMPLES / "conv2d.json")
    document["name"] = 'x"""\nimport os; os.system("echo pwned")\n"""'
    item = from_document(document, 'file "evil"\n.json', CONV_SMALL)
    source = torch_source(item, replace_helper=True)
    tree = ast.parse(source)
    assert [type(n).__name__ for n in tree.body[:5]] == ["Expr", "Import", "Import", "ImportFrom", "FunctionDef"]
    assert not any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "system" for n in ast.walk(tree))
    assert "XImportOsOsSystemEchoPwned" in [n.name for n in tree.body if isinstance(n, ast.ClassDef)]


def _network() -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),  # 0: replaced
        nn.BatchNorm2d(8),
        nn.Conv2d(8, 8, 3, padding=1),  # 2: replaced (bias kept)
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding="same", bias=False),  # 4: replaced
        nn.Conv2d(8, 8, 5, padding=2),  # 5: replaced, K=5
        nn.Conv2d(8, 8, 3, padding=1, groups=2),  # 6: grouped
        nn.Conv2d(8, 16, 3, padding=1),  # 7: replaced
        nn.Conv2d(16, 8, 3, stride=2, padding=1),  # 8: stride 2: replaced when strided ones are asked for
        nn.Conv2d(8, 8, 3, padding=2, dilation=2),  # 9: dilated
        nn.Conv2d(8, 8, 1),  # 10: pointwise, replaced
        nn.Conv2d(8, 8, 3, padding=1, groups=8),  # 11: depthwise
    )


def test_replace_convs_swaps_every_convolution_it_takes_and_reports_the_others(tmp_path):
    item = from_file(EXAMPLES / "conv2d.json", CONV_SMALL)
    exported = load_module(write_text(tmp_path / "conv_op.py", torch_source(item, replace_helper=True)))
    torch.manual_seed(0)
    net = _network().train()
    x = torch.randn(4, 3, 10, 10)
    with torch.no_grad():
        before = net.eval()(x)
    net.train()
    stats = net[1].running_mean.clone()
    originals = {name: net[int(name)] for name in ("0", "2", "4", "5", "7", "10")}

    report = exported.replace_convs(net, torch.randn(1, 3, 10, 10), copy_weights=True)

    assert [name for name, _ in report.replaced] == ["0", "2", "4", "5", "7", "10"]
    assert dict(report.left) == {
        "6": "grouped (groups=2)",
        "8": "3x3, stride 2: strided convolutions not asked for (kinds=('standard', 'pointwise'))",
        "9": "dilated (dilation (2, 2))",
        "11": "depthwise",
    }
    assert isinstance(net[2], exported.WithBias) and isinstance(net[4], exported.Conv2d)
    assert net.training and net[4].training  # the network's mode is kept; batch statistics untouched
    torch.testing.assert_close(net[1].running_mean, stats)
    with torch.no_grad():  # with the convolutions' own weights, the operator computes what they computed
        torch.testing.assert_close(net[2].bias, originals["2"].bias)
        after = net.eval()(x)
        torch.testing.assert_close(after, before, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(net.eval()(x[:, :, :7, :9]).shape, before[:, :, :4, :5].shape)  # any size
    loss = net.train()(x).square().mean()
    loss.backward()  # and it trains
    assert net[4].w_share.grad is not None
    strided = _network()
    report = exported.replace_convs(strided, x, kinds=("standard", "strided"))
    assert "8" in dict(report.replaced) and "10" in dict(report.left)
    assert strided(x).shape == before.shape


def test_replace_convs_warns_when_nothing_is_replaced_and_refuses_weights_it_cannot_copy(tmp_path):
    item = from_file(EXAMPLES / "syno_operator1.json")
    exported = load_module(write_text(tmp_path / "syno_op.py", torch_source(item, replace_helper=True)))
    net = nn.Sequential(nn.Conv2d(16, 400, 3, padding=1), nn.Conv2d(400, 400, 3, padding=1))
    with pytest.warns(UserWarning, match="replaced no convolution"):
        report = exported.replace_convs(net, torch.randn(1, 16, 8, 8))
    assert dict(report.left)["1"] == (
        "SynoOperator1(C_in=400, C_out=400, K=3, g=32, s=2, stride=1): C_in/g = 400/32 is not a whole number; "
        "it is with C_in=384 or C_in=416, or with g=25 or g=40 (the rest as given)"
    )
    assert len(exported.replace_convs(net, torch.randn(1, 16, 8, 8), g=8).replaced) == 2  # a coefficient passed
    with pytest.raises(ValueError, match="SynoOperator1 is not a convolution"):
        exported.replace_convs(net, torch.randn(1, 16, 8, 8), copy_weights=True)


def test_replace_convs_without_a_kernel_size_takes_any_odd_square_kernel(tmp_path):
    item = from_file(EXAMPLES / "shift_conv.json", {"C_in": 8, "C_out": 8, "H": 6, "W": 6})
    exported = load_module(write_text(tmp_path / "shift_op.py", torch_source(item, replace_helper=True)))
    net = nn.Sequential(nn.Conv2d(8, 8, 5, padding=2), nn.Conv2d(8, 8, 1), nn.Conv2d(8, 8, (1, 3), padding=(0, 1)))
    assert exported.TAKES_KERNEL is False
    report = exported.replace_convs(net, torch.randn(1, 8, 6, 6))
    assert [name for name, _ in report.replaced] == ["0", "1"]
    assert dict(report.left) == {"2": "kernel size 1x3 not taken (square and odd only)"}
    assert net(torch.randn(2, 8, 6, 6)).shape == (2, 8, 6, 6)


def test_replace_helper_needs_a_convolution_shaped_operator():
    pooled = chain(
        ["C_in", "H", "W"],
        ["C_in", "W"],
        [("pool", "fold", {"dim": 1, "fn": "avg"}, ["input"])],
        bindings={"C_in": 4, "H": 6, "W": 6},
    )
    pooled.set_declaration(name="pooled")
    item = from_document(to_document(pooled), "test")
    assert "class Pooled(nn.Module)" in torch_source(item)
    with pytest.raises(
        ExportError,
        match=r"pooled: replace_convs needs an operator mapping \[C, H, W\] to "
        r"\[C', H, W\] like a convolution; this one maps \[4, 6, 6\] to \[4, 6\]",
    ):
        torch_source(item, replace_helper=True)


def test_unbound_sizes_are_named_with_a_hint():
    document = read_document(EXAMPLES / "conv2d.json")
    del document["bindings"]
    item = from_document(document, "operator 3 in results store r.db", {"C_in": 8})
    with pytest.raises(ExportError, match=r"no size for C_out, H, K, W; pass e.g. --bind C_out=\.\.\.,H="):
        torch_source(item)
