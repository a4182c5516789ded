"""Canvas's early stop against operators known to learn: recorded curves of real trainings on
the default task replayed through the rule (tests/core/data/early_stop_curves.json says how they
were recorded; bench_discovery's early-stop section records more and prints the false-stop rate)."""

import json

import pytest

from core.train.early_stop import stop_epoch
from core.train.proxy import CHANCE_FACTOR
from core.train.settings import TrainConfig
from tests.support import ROOT

RECORDED = json.loads((ROOT / "tests" / "core" / "data" / "early_stop_curves.json").read_text())
EPOCHS, THETA = RECORDED["epochs"], TrainConfig.theta
FLOOR = CHANCE_FACTOR / 10  # the first epoch's bar, 10 classes


def test_stop_epoch_replays_the_rule():
    best = [0.8] * 4
    assert stop_epoch([0.5, 0.7, 0.9, 0.9], 4, best) is None
    assert stop_epoch([0.5, 0.4, 0.9, 0.9], 4, best) == 2  # 0.4 < (0.5 + 0.5 * 2 / 4) * 0.8
    assert stop_epoch([0.1, 0.1, 0.1, 0.1], 4, None) is None  # no best curve: every epoch runs
    assert stop_epoch([0.9, 0.9, 0.9, 0.1], 4, best) is None  # the last epoch is no stop
    assert stop_epoch([0.3, 0.2, 0.9, 0.9], 4, best, floor=0.15) == 2  # the first epoch only against the floor
    assert stop_epoch([0.1, 0.9, 0.9, 0.9], 4, best, floor=0.15) == 1


@pytest.mark.parametrize("name", sorted(RECORDED["learners"]))
def test_the_early_stop_keeps_operators_known_to_learn(name):
    """Every recorded curve of the equal operator, depthwise-separable and shift_conv runs to the
    end against every recorded curve of the original as the best so far (the loop's comparison
    while the original is its best finished run): a rule that stopped them would decide the loop
    by noise."""
    for curve in RECORDED["learners"][name]:
        for best in RECORDED["original"]:
            assert stop_epoch(curve, EPOCHS, best, THETA, FLOOR) is None, (curve, best)


def test_the_early_stop_still_ends_a_network_that_does_not_learn():
    """What the rule is for: a network at chance (10 classes) stops after its first epoch."""
    for best in RECORDED["original"]:
        assert stop_epoch([0.1] * EPOCHS, EPOCHS, best, THETA, FLOOR) == 1
