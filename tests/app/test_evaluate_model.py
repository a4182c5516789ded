"""`tessera evaluate OP --model FILE.py:FUNCTION --input C,H,W`: the operator timed in a user's
own network (tests/core/conv_zoo.py), built only in a worker process; a built-in backbone is an
entry of the same mechanism; mistakes get one clear message."""

from __future__ import annotations

import re

import pytest
from torch import nn

from core.networks.user_models import ModelError, ModelRef, parse_input
from tests.support import EXAMPLES, ROOT, tessera

ZOO = "tests/core/conv_zoo.py:build"


def test_a_model_reference_names_a_file_and_its_function_or_a_backbone(tmp_path):
    ref = ModelRef.parse(ZOO)
    assert ref.path == str(ROOT / "tests/core/conv_zoo.py") and ref.factory == "build"
    assert isinstance(ref.build((3, 32, 32)), nn.Module)
    backbone = ModelRef.parse("resnet18")
    assert backbone.label == "resnet18" and isinstance(backbone.build((3, 32, 32)), nn.Module)
    (tmp_path / "m.py").write_text("def build():\n    return 42\n")
    with pytest.raises(ModelError, match=r"m\.py:build returned int, not a torch nn\.Module"):
        ModelRef.parse(f"{tmp_path}/m.py:build").build((3, 8, 8))
    with pytest.raises(ModelError, match=r"has no function make"):
        ModelRef.parse(f"{tmp_path}/m.py:make").build((3, 8, 8))
    for text, message in (
        ("model.py", "give FILE.py:FUNCTION"),
        ("resnet99", "give FILE.py:FUNCTION"),
        ("nowhere.py:build", "no such file nowhere.py"),
    ):
        with pytest.raises(ModelError, match=message):
            ModelRef.parse(text)
    assert parse_input("3,96,96") == (3, 96, 96)
    with pytest.raises(ModelError, match="three positive integers"):
        parse_input("3,96")


def test_mistakes_are_refused_before_any_worker_starts():
    out = tessera("evaluate", str(EXAMPLES / "shift_conv.json"), "--model", "nowhere.py:build")
    assert (
        out.returncode == 1 and out.stderr == "tessera evaluate: --model 'nowhere.py:build': no such file nowhere.py\n"
    )


@pytest.mark.slow
@pytest.mark.tvm
def test_the_operator_in_a_users_model_against_the_model_unreplaced(tmp_path):
    """Tuned for real, into an empty tuning folder, at the smallest budget that tunes every
    kernel (one trial each) of the smallest network that has convolutions to replace (the zoo's
    own report is checked without tuning, in tests/core/test_export_replace.py)."""
    out = tessera(
        "evaluate",
        str(EXAMPLES / "shift_conv.json"),
        "--model",
        "tests/core/conv_zoo.py:tiny",
        "--input",
        "3,16,16",
        "--trials",
        "1",
        "--no-transfer",
        "--tuning-dir",
        str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "shift_conv: replaced 2 of 2 convolutions" in text, text
    assert "FLOPs (torch's count, batch 1)" in text and "parameters" in text and "PyTorch eager" in text
    for network in ("original", "candidate"):  # the candidate tunes the kernels the original has not
        assert re.search(rf"{network}: tuning (\d+) kernel\(s\) with up to \1 trials", text), text
    row = re.search(r"^TVM, tuned +(\S+) ms +(\S+) ms +[\d.]+x", text, re.M)
    assert row, text  # every kernel of both networks tuned: no "NOT all tuned"
    assert float(row[1]) > 0 and float(row[2]) > 0
