"""The loop section runs `tessera discover` with its own seed, and the deploy benchmark takes
its survivor from a loop run before (bench_discovery --skip loop --deploy --store PATH): the
newest run's best, with the test reports the loop recorded for it and its references, so the
deploy table shows the loop's own figures."""

from __future__ import annotations

import pytest

from core.store import Store
from core.store.searches import open_run
from tests.benchmarks import bench_discovery
from tests.benchmarks.bench_discovery import report
from tests.views.discovery_data import TEMPLATE, held_out, run_with_references


def test_the_best_survivor_of_a_stored_run_comes_with_its_recorded_test_reports(tmp_path, capsys):
    with Store(tmp_path / "discovery.db") as store:
        run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.0)
    survivor = report(tmp_path / "discovery.db")
    assert survivor is not None and survivor.graph.name == "mcts-1"
    assert sorted(survivor.tests) == ["depthwise-separable", "narrowed", "original", "survivor"]
    assert survivor.tests["survivor"].test.difference == pytest.approx(-0.002)
    assert survivor.tests["narrowed"].test.difference == pytest.approx(-0.003)
    assert survivor.trained_scale == 0.4375  # the narrowed original's multiplier on the proxy task
    shown = capsys.readouterr().out
    assert f"Discovery run 'run' in {tmp_path / 'discovery.db'}" in shown
    assert "headline: 1.25x faster than resnet18 narrowed" in shown


def test_the_survivor_keeps_the_kinds_of_convolution_its_run_replaced(tmp_path):
    strided = ["standard", "pointwise", "strided"]
    with Store(tmp_path / "discovery.db") as store:
        run_with_references(store, held_out(-0.003, -0.008, 0.002), 2.0, deploy={"replace": strided})
    survivor = report(tmp_path / "discovery.db")
    assert survivor is not None and survivor.replace == tuple(strided)


def test_a_store_that_is_missing_or_holds_no_run_is_named(tmp_path):
    with pytest.raises(SystemExit, match=r"missing.db: no such store \(give the --store of a discovery run\)"):
        report(tmp_path / "missing.db")
    with Store(tmp_path / "empty.db"):
        pass
    with pytest.raises(SystemExit, match="empty.db holds no discovery run$"):
        report(tmp_path / "empty.db")
    with pytest.raises(SystemExit, match="empty.db holds no discovery run called bench_discovery"):
        report(tmp_path / "empty.db", "bench_discovery")


def test_a_run_whose_settings_cannot_be_read_is_named(tmp_path):
    with Store(tmp_path / "old.db") as store:
        open_run(store, "k", "an older run", {"template": TEMPLATE, "strategy": "annealing", "minutes": 5})
    with pytest.raises(SystemExit, match="the run 'an older run' has settings this version cannot read: strategy"):
        report(tmp_path / "old.db")


def test_the_loop_runs_discover_with_its_seed_and_reports_that_run(tmp_path, monkeypatch, capsys):
    commands = []

    def discover(args):  # stands in for the `tessera discover` subprocess: records a run as it would
        commands.append(args)
        with Store(args[args.index("--store") + 1]) as store:
            open_run(store, "k", args[args.index("--name") + 1], {"template": TEMPLATE, "seed": 1, "minutes": 5})
        return 0

    monkeypatch.setattr(bench_discovery, "tessera", discover)
    assert bench_discovery.loop(5, tmp_path / "loop.db", ("standard",), seed=1) is None
    [command] = commands
    assert command[command.index("--seed") + 1] == "1"
    assert "no best survivor: none within the margin has a tuned speedup" in capsys.readouterr().out
