"""Selection and report kept apart: the paired interval rule, the training device, selection that
never reads the test split, and a network trained again over seeds and tested on it."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.data.backbones import build_backbone
from core.ir.serialize import read_document
from core.train import screening
from core.train.device import training_device
from core.train.errors import EvaluationError
from core.train.handlers import fisher_job, held_out_job, train_job
from core.train.paired import paired_difference, report_seeds, verdict
from core.train.payloads import FisherPayload, HeldOutPayload, TrainPayload
from core.train.proxy import train_proxy
from core.train.results import HeldOutResult, SeedRun
from core.train.seeds import originals_known, train_over_seeds
from core.train.sequential import UNDECIDED, WITHIN, SeedRule
from core.train.settings import TrainConfig
from tests.core.accuracy_settings import SHORT, TINY
from tests.support import EXAMPLES, Ctx

torch.set_num_threads(1)


# -- the interval rule ---------------------------------------------------------------------------------
def test_the_paired_t_interval_and_the_margin_rule_in_words():
    # differences 1, 2, 3 points: mean 2, sd 1, t(0.975, 2) = 4.3027, so 2 +- 4.3027 / sqrt(3) = -0.484 .. 4.484
    within = paired_difference([0.91, 0.92, 0.93], [0.90, 0.90, 0.90])
    assert within.mean == pytest.approx(0.02) and within.interval == pytest.approx((-0.0048414, 0.0448414), abs=1e-6)
    assert within.within(0.01) is True
    assert (
        within.verdict(0.01) == "within 1 point: the 95% interval of the difference, -0.5 to +4.5 points, lies above -1"
    )
    # differences -2, 0, +1 points: mean -0.33, sd 1.53: -4.1 .. +3.5 reaches below -1, though the mean is above
    wide = paired_difference([0.88, 0.90, 0.91], [0.90, 0.90, 0.90])
    assert wide.mean > -0.01 and wide.within(0.01) is False
    assert wide.verdict(0.01) == (
        "not shown within 1 point: the 95% interval of the difference, -4.1 to +3.5 points, reaches below -1"
    )
    assert wide.within(0.05) is True and "within 5 points" in wide.verdict(0.05)
    one = paired_difference([0.95], [0.90])
    assert one.interval is None and one.within(0.01) is None
    assert one.verdict(0.005) == "cannot tell whether within 0.5 points: a 95% interval needs at least 2 seeds"
    same = paired_difference([0.9, 0.8], [0.91, 0.81])  # no spread: the interval is the point
    assert same.interval == pytest.approx((-0.01, -0.01)) and same.within(0.01) is False
    assert verdict((-0.004, 0.02), 0.01).startswith("within 1 point")
    with pytest.raises(ValueError, match="the same seeds on both sides"):
        paired_difference([0.9, 0.9], [0.9])
    assert report_seeds(0, 3) == (1, 2, 3) and report_seeds(7, 1) == (8,)  # never the selecting seed


# -- where training runs -------------------------------------------------------------------------------
def test_the_device_is_chosen_in_one_place_and_asking_for_a_missing_gpu_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert training_device("auto") == torch.device("cpu") and training_device("cpu") == torch.device("cpu")
    with pytest.raises(
        EvaluationError, match=r"training on CUDA was asked for \(--train-device cuda\), but torch sees no"
    ):
        training_device("cuda")
    with pytest.raises(EvaluationError, match=r"mixed precision \(--amp\) needs a CUDA GPU"):
        training_device("auto", amp=True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # as in a Ray task given a GPU
    assert training_device("auto") == training_device("cuda") == torch.device("cuda")
    assert training_device("cpu") == torch.device("cpu") and training_device("auto", amp=True).type == "cuda"
    with pytest.raises(EvaluationError, match="training device must be one of auto, cpu, cuda, got 'tpu'"):
        TrainConfig(device="tpu")
    with pytest.raises(EvaluationError, match=r"mixed precision \(amp\) needs a CUDA GPU"):
        TrainConfig(device="cpu", amp=True)


def test_the_model_and_every_batch_are_on_the_chosen_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    split = screening.load_split(TINY)
    net = build_backbone(TINY.spec, split.train.num_classes, 0)
    seen: set[torch.device] = set()
    net.register_forward_pre_hook(lambda module, inputs: seen.add(inputs[0].device))
    train_proxy(net, split, dataclasses.replace(SHORT, device="auto"))
    assert seen == {torch.device("cpu")} and {p.device for p in net.parameters()} == {torch.device("cpu")}
    with pytest.raises(EvaluationError, match="torch sees no CUDA GPU"):
        train_proxy(net, split, dataclasses.replace(SHORT, device="cuda"))


# -- selection apart from the report --------------------------------------------------------------------
class Sealed:
    """A test split that fails whoever reads it."""

    def __getattr__(self, name):
        raise AssertionError(f"read the test split's {name}")

    def __len__(self):
        raise AssertionError("read the test split's length")


@pytest.mark.slow
def test_selection_never_reads_the_test_split(monkeypatch):
    """Fisher screening and proxy training with its early stop (what chooses candidates) run with the
    test split sealed; the report over seeds is what reads it."""
    split_dataset = screening.split_dataset
    monkeypatch.setattr(
        screening, "split_dataset", lambda *a, **k: dataclasses.replace(split_dataset(*a, **k), test=Sealed())
    )
    screening._screen.cache_clear()
    document = read_document(EXAMPLES / "depthwise_separable.json")
    settings = dataclasses.replace(TINY, seed=5)  # a setting no other test has screened in this process
    fisher_job(FisherPayload(document, settings).to_dict(), Ctx())
    trained = train_job(TrainPayload(document, settings, SHORT, best_curve=(0.99,)).to_dict(), Ctx())
    assert trained.outcome in ("trained", "stopped early", "did not learn") and trained.accuracy_per_epoch
    with pytest.raises(AssertionError, match="read the test split"):
        train_over_seeds(None, settings, SHORT, (1,))
    screening._screen.cache_clear()


@pytest.mark.slow
def test_a_network_is_trained_again_over_seeds_and_paired_with_the_original_on_the_test_split():
    document = read_document(EXAMPLES / "depthwise_separable.json")
    training = TrainConfig(epochs=2, max_batches=4, batch_size=16)
    ctx = Ctx()
    result = held_out_job(HeldOutPayload(document, TINY, training, (1, 2)).to_dict(), ctx)
    test_size = len(screening.load_split(TINY).test)
    assert [r.seed for r in result.runs] == [1, 2] and len(result.original) == 2
    assert all(
        a is None or abs(a * test_size - round(a * test_size)) < 1e-6 for a in [*result.accuracies, *result.original]
    )
    assert any("the original, seed 2" in message for _, message in ctx.seen)  # it trained the original too
    # the same seeds train the same original network: the pairing is seed by seed
    again = train_over_seeds(None, TINY, training, (1, 2))
    assert [r.accuracy for r in again] == list(result.original)
    score = result.score
    assert score.test_seeds == 2 and score.test_accuracy == pytest.approx(sum(result.accuracies) / 2)
    assert score.test_margin == 0.01 and score.accuracy is None and score.epochs == 2
    paired = result.paired
    assert score.test_difference == pytest.approx(paired.mean)
    assert (score.test_difference_low, score.test_difference_high) == pytest.approx(paired.interval)
    assert result.lines()[-2].endswith(paired.verdict(0.01)) and "2 seeds" in result.lines()[0]
    # a fixed count says what it could have detected: the smallest difference, at 80% power
    assert result.lines()[-1].startswith("smallest difference from the margin this run could detect (80% power")
    given = held_out_job(HeldOutPayload(document, TINY, training, (1, 2), original=(0.5, 0.5)).to_dict(), Ctx())
    assert given.original == (0.5, 0.5) and [r.accuracy for r in given.runs] == [r.accuracy for r in result.runs]
    alone = held_out_job(HeldOutPayload(None, TINY, training, (1,), pair=False).to_dict(), Ctx())
    assert alone.original is None and alone.score.test_difference is None and alone.score.test_margin is None


@pytest.mark.slow
def test_a_seed_rule_adds_seeds_until_the_interval_decides_and_says_why_it_stopped():
    # the backbone against itself: the same seed trains the same network, so every difference is 0
    rule = SeedRule(margin=0.0, first=2, step=1, cap=4)
    ctx = Ctx()
    undecided = held_out_job(
        HeldOutPayload(None, TINY, SHORT, report_seeds(0, 4), margin=0.0, rule=rule).to_dict(), ctx
    )
    # an interval of [0, 0] is never entirely above -0 (nor below): seeds are added up to the cap
    assert [r.seed for r in undecided.runs] == [1, 2, 3, 4] and undecided.original == tuple(undecided.accuracies)
    assert (undecided.decision.outcome, undecided.decision.finished) == (UNDECIDED, True)
    assert undecided.lines()[-1].endswith("stopped: the cap of 4 seeds, undecided")
    assert undecided.score.test_seeds == 4 and any("the original, seed 4" in m for _, m in ctx.seen)
    margin = dataclasses.replace(rule, margin=0.01)
    payload = HeldOutPayload(None, TINY, SHORT, report_seeds(0, 4), margin=0.01, rule=margin)
    decided = held_out_job(payload.to_dict(), Ctx())
    assert [r.seed for r in decided.runs] == [1, 2] and decided.decision.outcome == WITHIN  # at the first look
    assert decided.lines()[-1].endswith("stopped: the interval decided")
    with pytest.raises(Exception, match="rule"):  # a rule needs its cap's seeds
        HeldOutPayload(None, TINY, SHORT, (1, 2), rule=SeedRule(cap=4))


def test_the_originals_trainings_are_shared_by_seed_through_the_store(tmp_path):
    from core.jobs.queue import JobQueue
    from core.store import Store

    payload = HeldOutPayload(read_document(EXAMPLES / "conv2d.json"), TINY, SHORT, (1, 2))
    runs = [SeedRun(1, 0.5, 0.5, "trained", 1.0), SeedRun(2, 0.6, 0.6, "trained", 1.0)]
    found = HeldOutResult.of(runs, [0.7, 0.8], 0.01, 1, TINY.dataset_label, TINY.spec.label)
    with Store(tmp_path / "s.db") as store:
        queue, operator = JobQueue(store), store.add_operator(payload.operator, "conv2d")
        queue.submit("test", payload.to_dict(), operator_id=operator)
        other = dataclasses.replace(payload, training=dataclasses.replace(SHORT, epochs=2))
        queue.submit("test", other.to_dict(), operator_id=operator)  # another task: its original is another network
        for _ in range(2):
            job = queue.claim(["test"])
            assert queue.complete(job, found.to_dict())
        assert originals_known(store, TINY, SHORT) == {1: 0.7, 2: 0.8}
        assert originals_known(store, dataclasses.replace(TINY, width=8), SHORT) == {}
    assert originals_known(None, TINY, SHORT) == {}


def test_the_store_is_looked_up_once_for_each_seed_the_original_lacks(tmp_path, monkeypatch):
    """The finished jobs are read once per seed whose original accuracy is neither given nor
    found yet, not again before the original is trained (the trainings planted)."""
    from core.store import Store
    from core.train import handlers

    def planted(stand_in, settings, config, seeds, *rest) -> list[SeedRun]:
        return [SeedRun(s, 0.9, 0.9, "trained", 1.0) for s in seeds]

    looked: list[tuple] = []
    monkeypatch.setattr(handlers, "train_over_seeds", planted)
    monkeypatch.setattr(handlers, "originals_known", lambda *args: looked.append(args) or originals_known(*args))
    payload = HeldOutPayload(read_document(EXAMPLES / "conv2d.json"), TINY, SHORT, (1, 2, 3), original=(0.8,))
    with Store(tmp_path / "s.db") as store:
        ctx = Ctx()
        ctx.store = store  # type: ignore[attr-defined]
        result = held_out_job(payload.to_dict(), ctx)
    assert result.original == (0.8, 0.9, 0.9) and len(looked) == 2  # seeds 2 and 3, once each


def test_the_store_shares_an_unpaired_test_of_the_original_and_a_paired_jobs_named_original(tmp_path):
    """The discovery loop's original is its template under the run's settings: its unpaired test
    counts for that network only, and a narrowed network's job (other settings) names it."""
    from core.jobs.queue import JobQueue
    from core.store import Store

    template = read_document(EXAMPLES / "conv2d.json")
    narrowed = dataclasses.replace(TINY, scale=0.5)
    tested = HeldOutPayload(template, TINY, SHORT, (1, 2), pair=False)  # the loop's up-front test
    paired = HeldOutPayload(None, narrowed, SHORT, (3,), original_operator=template, original_settings=TINY)
    labels = (1, TINY.dataset_label, TINY.spec.label)
    alone = HeldOutResult.of(
        [SeedRun(1, 0.5, 0.5, "trained", 1.0), SeedRun(2, 0.6, 0.6, "trained", 1.0)], None, 0.01, *labels
    )
    pair = HeldOutResult.of([SeedRun(3, 0.4, 0.4, "trained", 1.0)], [0.7], 0.01, *labels)
    with Store(tmp_path / "s.db") as store:
        queue, operator = JobQueue(store), store.add_operator(template, "conv2d")
        for payload, result in ((tested, alone), (paired, pair)):
            queue.submit("test", payload.to_dict(), operator_id=operator)
            assert queue.complete(queue.claim(["test"]), result.to_dict())
        assert originals_known(store, TINY, SHORT, template) == {1: 0.5, 2: 0.6, 3: 0.7}
        assert originals_known(store, TINY, SHORT) == {}  # the backbone as it is: another network
        assert originals_known(store, narrowed, SHORT, template) == {}  # never the narrowed network's own
