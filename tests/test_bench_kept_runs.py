"""The deploy benchmark's runs resume where they stopped (tests/benchmarks/kept_runs.py): a
finished network is not tuned again, and a network cut short starts again from the databases
as the network before it left them, not from its own half-tuned kernels."""

from __future__ import annotations

import pytest

from core.networks.results import EndToEnd
from tests.benchmarks.kept_runs import KeptRun
from tests.core.test_job_results import KEPT

CONFIGURATION = {"operator": "3f2a", "deploy": "resnet18/w64@224px", "trials": 128, "threads": 2}
RESULT = EndToEnd.from_dict({key: value for key, value in KEPT["e2e"].items() if key != "score"})


def _tune(run: KeptRun, line: str) -> None:
    """Stands in for a network's tuning: one more line in the run's database."""
    database = run.tuning / "local" / "networks" / "database_tuning_record.json"
    database.parent.mkdir(parents=True, exist_ok=True)
    with database.open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def _database(run: KeptRun) -> list[str]:
    return (run.tuning / "local" / "networks" / "database_tuning_record.json").read_text().splitlines()


def test_a_stopped_run_resumes_from_the_last_finished_network(tmp_path):
    run = KeptRun(tmp_path / "run-1", CONFIGURATION)
    run.restore()
    _tune(run, "survivor and the original")
    run.finish("survivor", RESULT)
    _tune(run, "half of the narrowed")  # then the process is stopped

    resumed = KeptRun(tmp_path / "run-1", CONFIGURATION)
    assert resumed.result("survivor") == RESULT and resumed.result("narrowed") is None
    resumed.restore()
    assert _database(resumed) == ["survivor and the original"]
    _tune(resumed, "the narrowed")
    resumed.finish("narrowed", RESULT)
    assert sorted(p.name for p in (tmp_path / "run-1").iterdir()) == ["results.json", "tuning", "tuning.after-narrowed"]

    again = KeptRun(tmp_path / "run-1", CONFIGURATION)
    again.restore()
    assert _database(again) == ["survivor and the original", "the narrowed"]


def test_a_folder_of_another_configuration_is_refused_by_name(tmp_path):
    run = KeptRun(tmp_path / "run-1", CONFIGURATION)
    run.restore()
    _tune(run, "survivor")
    run.finish("survivor", RESULT)
    with pytest.raises(SystemExit, match="run-1 holds a run of .*'trials': 128.*give --deploy-dir another folder"):
        KeptRun(tmp_path / "run-1", {**CONFIGURATION, "trials": 32})


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda text: text[: len(text) // 2].encode(), "Expecting|Unterminated"),  # cut short
        (lambda text: b"[]", "not an object of configuration, networks and resume_from"),
        (lambda text: text.replace("tuning.after-survivor", "elsewhere").encode(), "names elsewhere"),
        (lambda text: text.replace('"latency_ms"', '"latency"', 1).encode(), "the end-to-end timing"),
        (lambda text: b"\xff\xfe" + text.encode(), "can't decode"),
    ],
)
def test_a_damaged_results_file_is_refused_with_its_name_not_a_traceback(tmp_path, damage, said):
    run = KeptRun(tmp_path / "run-1", CONFIGURATION)
    run.restore()
    _tune(run, "survivor")
    run.finish("survivor", RESULT)
    results = tmp_path / "run-1" / "results.json"
    results.write_bytes(damage(results.read_text(encoding="utf-8")))
    with pytest.raises(SystemExit, match=rf"results.json cannot be resumed from \(.*({said}).*move its folder away"):
        KeptRun(tmp_path / "run-1", CONFIGURATION)
