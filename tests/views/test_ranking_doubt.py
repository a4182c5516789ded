"""A number in doubt never ranks: a measurement whose timing is in doubt (a speedup whose
interval is too wide) is left off every front of timed values (the store's, the Gallery's, the
Explorer plot's) unless the user asks, the Gallery says how many it left off and marks them
when asked, and the plot draws them hollow; one click (or `tessera submit --doubtful`) queues
them to be measured again. On a store file with real widgets."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtCore import Qt

from app.cli import main
from core.compile.payloads import MeasurePayload
from core.compile.remeasure import RemeasureDoubtful
from core.ir.serialize import read_document
from core.jobs.queue import JobQueue
from core.jobs.submit import submit
from core.store import Store
from core.store.fronts import doubtful, operator_front
from tests.support import EXAMPLES, QUICK
from views.explorer.pareto_plot import ParetoPlot
from views.explorer.result_panel import ResultPanel
from views.explorer.selection import ResultSelection
from views.explorer.session import ExplorerSession
from views.gallery import OperatorGallery
from views.result_columns import cell_text

pytestmark = pytest.mark.gui

WIDE = "the speedup over PyTorch's 95% interval is wider than +-12%: 16.5 [0.6, 34.5]"
# name, latency ms, FLOPs, speedup, timing note: the doubtful shift_conv would dominate both others
RESULTS = [
    ("conv2d", 1.0, 2e6, 3.0, None),
    ("grouped_conv", 2.0, 1e6, 2.0, None),
    ("shift_conv", 0.05, 5e5, 16.5, WIDE),
]


@pytest.fixture
def store_path(tmp_path):
    path = tmp_path / "results.db"
    with Store(path) as store:
        for name, latency, flops, speedup, note in RESULTS:
            doc = read_document(EXAMPLES / f"{name}.json")
            oid = store.add_operator(doc, name, "hand-made")
            job = JobQueue(store).submit("measure", MeasurePayload(doc, **QUICK).to_dict(), operator_id=oid)
            store.add_measurement(
                oid,
                None,
                {
                    "latency_ms": latency,
                    "flops": flops,
                    "params": flops / 100,
                    "speedup": speedup,
                    "speedup_low": 0.6 if note else 0.95 * speedup,
                    "speedup_high": 34.5 if note else 1.05 * speedup,
                    "timing_note": note,
                    "bindings": doc["bindings"],
                },
                job,
            )
    return path


def _names(rows) -> list[str]:
    return [r["operator_name"] for r in rows]


def test_the_stores_fronts_leave_a_timing_in_doubt_off_unless_asked(store_path):
    with Store(store_path) as store:
        assert _names(store.pareto(["latency_ms", "flops"])) == ["conv2d", "grouped_conv"]
        assert _names(store.pareto(["latency_ms", "flops"], with_doubtful=True)) == ["shift_conv"]
        assert _names(operator_front(store, "speedup", "flops")) == ["conv2d", "grouped_conv"]
        assert doubtful(store, "latency_ms", "flops") == 1
        # FLOPs and parameters are not timed: the same result ranks there
        assert "shift_conv" in _names(store.pareto(["flops", "params"]))
        assert doubtful(store, "flops", "params") == 0
        row = next(r for r in store.results() if r["operator_name"] == "shift_conv")
        assert (row["in_doubt"], row["speedup_low"], row["speedup_high"]) == (1, 0.6, 34.5)
    assert cell_text(row, "speedup") == "16.50× [0.60, 34.50] ⚠"  # the interval beside it, and the mark


def test_the_gallery_flags_a_timing_in_doubt_and_ranks_it_only_when_asked(qtbot, store_path):
    gallery = OperatorGallery(store_path)
    qtbot.addWidget(gallery)
    gallery.set_front("latency_ms", "flops")
    assert [c.name for c in gallery.cards] == ["conv2d", "grouped_conv"]
    assert "1 result with timings in doubt left off ⚠" in gallery.status.text()
    gallery.doubtful_box.setChecked(True)
    assert [c.name for c in gallery.cards] == ["shift_conv"]
    card = gallery.list.item(0)
    assert card.text().splitlines()[-1] == "timing in doubt ⚠"
    gallery.set_front("speedup", "flops")  # a speedup shows its interval
    assert gallery.list.item(0).text().splitlines()[2] == "Speedup 16.50× [0.60, 34.50] ⚠  ·  FLOPs 500.0k"
    gallery.set_front("latency_ms", "flops")
    card = gallery.list.item(0)
    assert WIDE in card.toolTip() and "left off" not in gallery.status.text()
    gallery.doubtful_box.setChecked(False)
    assert gallery.remeasure_button.isVisibleTo(gallery)  # one click queues it again ...
    gallery.remeasure_button.click()
    assert gallery.status.text().startswith("Queued 1 measurement in doubt again")
    gallery.remeasure_button.click()  # ... once
    assert gallery.status.text().startswith("Queued 0 measurements in doubt again")
    with Store(store_path) as store:
        (again,) = [j for j in JobQueue(store).jobs() if j.input_key == "remeasure:3"]
        first = JobQueue(store).get(3)
    assert (again.kind, again.payload, again.state) == ("measure", first.payload, "queued")


def test_the_command_line_ranks_a_timing_in_doubt_only_when_asked_and_queues_it_again(store_path, capsys):
    front = ["results", "--store", str(store_path), "--pareto", "latency_ms,flops"]
    assert main(front) == 0
    assert "shift_conv" not in capsys.readouterr().out
    assert main([*front, "--with-doubtful"]) == 0
    assert "shift_conv" in capsys.readouterr().out
    assert main(["submit", "--doubtful", "--store", str(store_path)]) == 0
    assert "queued 1 measurement(s) in doubt again" in capsys.readouterr().out
    assert main(["submit", "--store", str(store_path)]) == 1
    assert "tessera submit needs an operator FILE (or --doubtful)" in capsys.readouterr().err


def test_the_command_line_shows_each_speedup_with_its_interval_and_marks_those_in_doubt(store_path, capsys):
    assert main(["results", "--store", str(store_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    shift = next(line for line in lines if "shift_conv" in line)
    conv = next(line for line in lines if " conv2d " in line)
    assert "16.50x [0.60, 34.50]*" in shift and "0.05*" in shift
    assert "3.00x [2.85, 3.15]" in conv and "*" not in conv
    assert lines[-1].startswith("* in doubt: the timing's 95% interval is too wide to rank by")
    assert main(["results", "--store", str(store_path), "--pareto", "latency_ms,flops"]) == 0
    assert "in doubt" not in capsys.readouterr().out  # none of the front is
    assert main(["results", "--store", str(store_path), "--json"]) == 0
    rows = {r["operator_name"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows["shift_conv"]["speedup_low"], rows["shift_conv"]["speedup_high"], rows["shift_conv"]["in_doubt"]) == (
        0.6,
        34.5,
        1,
    )
    assert rows["conv2d"]["in_doubt"] == 0


def test_the_plot_keeps_a_timing_in_doubt_off_its_front_and_draws_it_hollow(qtbot, store_path):
    session = ExplorerSession(store_path)
    try:
        qtbot.waitUntil(lambda: session.loaded and session.frame.count == 3, timeout=20_000)
        plot = ParetoPlot(session, ResultSelection())
        qtbot.addWidget(plot)
        plot.resize(800, 500)
        plot.show()
        qtbot.waitExposed(plot)
        plot.set_axes("latency_ms", "flops", True, True)
        doubtful_id = int(session.frame.ids[session.frame.values["in_doubt"] == 1][0])
        assert doubtful_id not in plot.front_ids().tolist() and len(plot.front_ids()) == 2
        plot.fit()
        qtbot.waitUntil(lambda: plot.redraw() or len(plot.markers.points()) == 3, timeout=5_000)
        spots = {int(p.data()): p for p in plot.markers.points()}
        assert spots[doubtful_id].brush().style() == Qt.BrushStyle.NoBrush  # hollow
        assert all(p.brush().style() == Qt.BrushStyle.SolidPattern for i, p in spots.items() if i != doubtful_id)
        plot.toolbar.doubt_button.click()  # the user asks
        assert plot.front_ids().tolist() == [doubtful_id]
        plot.set_axes("flops", "params", True, True)  # untimed axes: it ranks
        plot.toolbar.doubt_button.click()
        assert doubtful_id in plot.front_ids().tolist()
    finally:
        session.shutdown()


def test_the_explorers_result_panel_measures_a_point_in_doubt_again_with_one_click(qtbot, store_path):
    session = ExplorerSession(store_path)
    session.autostart_workers = False  # the job is queued; no worker runs it here
    try:
        qtbot.waitUntil(lambda: session.loaded and session.frame.count == 3, timeout=20_000)
        panel = ResultPanel(session, ResultSelection())
        qtbot.addWidget(panel)
        panel.show()
        ids = {session.row(int(i))["operator_name"]: int(i) for i in session.frame.ids}
        panel.show_result(ids["conv2d"])
        assert not panel.remeasure_button.isVisibleTo(panel)  # its timing holds
        panel.show_result(ids["shift_conv"])
        assert panel.remeasure_button.isVisibleTo(panel)
        panel.remeasure_button.click()
        assert panel.doubt.text().endswith("Queued 1 measurement in doubt again: a worker measures them.")
        panel.remeasure_button.click()  # already queued: not twice
        assert panel.doubt.text().splitlines()[-1].startswith("Queued 0 measurements in doubt again")
        with Store(store_path) as store:
            again = [j for j in JobQueue(store).jobs() if (j.input_key or "").startswith("remeasure:")]
            assert [(j.input_key, j.state) for j in again] == [(f"remeasure:{ids['shift_conv']}", "queued")]
            assert submit(store, RemeasureDoubtful(measurements=(ids["conv2d"],))).ids == []  # only those asked
    finally:
        session.shutdown()


def test_an_idle_worker_queues_a_timing_in_doubt_again_once_when_the_machine_is_quiet(store_path, monkeypatch):
    import core.compile.remeasure as remeasure

    with Store(store_path) as store:
        monkeypatch.setattr(remeasure, "free_cores", lambda cores: 1 if cores > 1 else cores)  # a core is taken
        busy = 0 if len(os.sched_getaffinity(0)) > 1 else 1
        assert remeasure.when_quiet(store) == busy
        monkeypatch.setattr(remeasure, "free_cores", lambda cores: cores)  # every core free
        assert remeasure.when_quiet(store) == 1 - busy
        assert remeasure.when_quiet(store) == 0  # once: never again, whatever became of that job
        (again,) = [j for j in JobQueue(store).jobs() if j.input_key == "remeasure:3"]
        store.add_measurement(again.operator_id, None, {"latency_ms": 0.06, "timing_note": WIDE}, again.id)
        assert remeasure.when_quiet(store) == 0  # its own result, in doubt again, is not measured over and over
        assert len(submit(store, remeasure.RemeasureDoubtful()).ids) == 1  # by hand: the new one (the first is queued)
