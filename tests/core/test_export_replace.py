"""Every bundled example, exported with replace_convs, dropped into a network holding what real
models hold (tests/core/conv_zoo.py): what it takes is replaced, what it does not is left with
the reason, and the network trains at two resolutions (32 and 224 px) and goes through torch.export."""

from __future__ import annotations

import textwrap
import warnings

import pytest
import torch

from core.export import from_file, torch_source, write_text
from tests.core.conv_zoo import build
from tests.support import EXAMPLES, load_module

ALL_KINDS = ("standard", "pointwise", "strided")
REASONS = {"grouped": "grouped (groups=4)", "depthwise": "depthwise", "dilated": "dilated (dilation (2, 2))"}


QUICK = ("conv2d", "involution", "syno_operator1")  # the others (as thorough, ~10 s each on a loaded machine) are slow
EXAMPLE_PARAMS = [
    pytest.param(p.stem, marks=() if p.stem in QUICK else pytest.mark.slow) for p in sorted(EXAMPLES.glob("*.json"))
]


@pytest.mark.parametrize("example", EXAMPLE_PARAMS)
def test_every_example_replaces_the_convolutions_it_takes_and_the_network_still_works(tmp_path, example):
    exported = load_module(
        write_text(tmp_path / f"{example}.py", torch_source(from_file(EXAMPLES / f"{example}.json"), True))
    )
    torch.manual_seed(0)
    net = build()
    report = exported.replace_convs(net, torch.randn(1, 3, 32, 32), kinds=ALL_KINDS)
    left = dict(report.left)
    assert {name: left[name] for name in REASONS} == REASONS
    assert report.replaced, str(report)
    assert len(report.replaced) + len(report.left) == 9
    for side in (32, 224):  # the smallest and the largest input real models take here
        net.zero_grad()
        y = net.train()(torch.randn(2, 3, side, side))
        y.square().mean().backward()
        assert y.shape == (2, 10) and torch.isfinite(y).all()
        assert any(p.grad is not None and p.grad.abs().sum() > 0 for name, p in net.named_parameters() if "w_" in name)
    batch = torch.export.Dim("batch", min=2)
    program = torch.export.export(net.eval(), (torch.randn(2, 3, 32, 32),), dynamic_shapes={"x": {0: batch}})
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        torch.testing.assert_close(program.module()(x), net(x), atol=1e-5, rtol=1e-5)


def test_the_usage_in_the_docstring_runs(tmp_path):
    source = torch_source(from_file(EXAMPLES / "syno_operator2.json"), True)
    exported = load_module(write_text(tmp_path / "syno_operator2.py", source))
    usage = source.split("Usage:\n", 1)[1].split('"""', 1)[0]
    namespace = {**vars(exported), "model": build()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each of its replace_convs replaces something
        exec(textwrap.dedent(usage), namespace)  # the file's own text, as a user would paste it
    assert namespace["y"].shape == (8, 64, 56, 56) and namespace["report"].replaced


def test_the_built_in_replacement_says_at_which_sizes_it_keeps_a_shared_conv():
    """core.data's stand-ins are built for one input size (unlike the exported, shape-generic
    module): the zoo's head, called at 4x4 and 2x2, is kept, and its report line says so."""
    from core.data.swap_convs import replace_convs

    report = replace_convs(build(), from_file(EXAMPLES / "shift_conv.json").graph, 32)
    (head,) = [line for line in report.lines() if " head " in line]
    assert "512->64 @4x4 k3" in head, head
    assert head.endswith("called at several input sizes, 4x4, 2x2 (a stand-in is built for one)"), head
