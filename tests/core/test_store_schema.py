"""Schema versions: a new file is created at the current version, an older one is
migrated in place keeping its rows, a newer or foreign file is refused clearly."""

import json
import sqlite3

import pytest
import sqlite_utils

from core.ir.serialize import load_operator, read_document
from core.store import InvalidResult, Store, StoreError
from core.store.schema import MIGRATIONS, SCHEMA_VERSION
from tests.support import EXAMPLES

# What Tessera with schema version 1 wrote: no attempts/max_attempts/lease on jobs,
# no trials table, no results view.
VERSION_1_SQL = """
CREATE TABLE operators (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, document TEXT NOT NULL,
                        name TEXT, origin TEXT, created REAL);
CREATE UNIQUE INDEX idx_operators_hash ON operators (hash);
CREATE TABLE sequences (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, document TEXT NOT NULL,
                        name TEXT, origin TEXT, created REAL);
CREATE UNIQUE INDEX idx_sequences_hash ON sequences (hash);
CREATE TABLE devices (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, config TEXT);
CREATE UNIQUE INDEX idx_devices_name ON devices (name);
CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL,
                   operator_id INTEGER REFERENCES operators(id), device_id INTEGER REFERENCES devices(id),
                   state TEXT NOT NULL, error TEXT, result TEXT, worker_host TEXT, worker_pid INTEGER,
                   heartbeat REAL, created REAL, started REAL, finished REAL, progress REAL,
                   message TEXT, input_key TEXT, input_version TEXT);
CREATE INDEX idx_jobs_state ON jobs (state);
CREATE INDEX idx_jobs_input_key ON jobs (input_key);
CREATE TABLE measurements (id INTEGER PRIMARY KEY, job_id INTEGER REFERENCES jobs(id),
                           operator_id INTEGER NOT NULL REFERENCES operators(id),
                           device_id INTEGER REFERENCES devices(id), bindings TEXT,
                           latency_ms REAL NOT NULL, latency_std_ms REAL, gflops REAL, flops REAL,
                           params REAL, tuned INTEGER, trial_count INTEGER, torch_latency_ms REAL,
                           speedup REAL, created REAL);
CREATE INDEX idx_measurements_operator_id ON measurements (operator_id);
CREATE TABLE scores (id INTEGER PRIMARY KEY, job_id INTEGER REFERENCES jobs(id),
                     operator_id INTEGER NOT NULL REFERENCES operators(id), dataset TEXT NOT NULL,
                     backbone TEXT, fisher_potential REAL, epochs INTEGER, accuracy REAL,
                     accuracy_per_epoch TEXT, created REAL);
CREATE INDEX idx_scores_operator_id ON scores (operator_id);
INSERT INTO operators VALUES (1, 'f00d', '{"format": "tessera.operator"}', 'old conv', 'hand-made', 1700000000.0);
INSERT INTO devices VALUES (1, 'laptop', 'local', '{}');
INSERT INTO jobs (id, kind, payload, operator_id, device_id, state, created, finished, progress)
    VALUES (1, 'measure', '{"bindings": {"C_in": 64}}', 1, 1, 'done', 1700000000.0, 1700000010.0, 1.0),
           (2, 'measure', '{"bindings": {"C_in": 32}}', 1, 1, 'queued', 1700000020.0, NULL, 0.0);
INSERT INTO measurements (id, job_id, operator_id, device_id, bindings, latency_ms, gflops, tuned, trial_count)
    VALUES (1, 1, 1, 1, '{"C_in": 64}', 3.25, 120.5, 0, 0);
INSERT INTO scores (id, operator_id, dataset, backbone, accuracy) VALUES (1, 1, 'cifar10', 'resnet18', 0.91);
PRAGMA user_version = 1;
"""


@pytest.fixture
def version_1_file(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(VERSION_1_SQL)
    conn.close()
    return path


def test_new_store_is_current_and_in_wal_mode(tmp_path):
    with Store(tmp_path / "sub" / "results.db") as store:
        assert store.schema_version == SCHEMA_VERSION == 15
        assert store.db.journal_mode == "wal"
        assert {"operators", "sequences", "devices", "jobs", "measurements", "scores", "trials"} <= set(
            store.db.table_names()
        )
        assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] > 0


def test_version_1_store_is_migrated_and_keeps_its_rows(version_1_file):
    from core.jobs.queue import JobQueue

    with Store(version_1_file) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.db.journal_mode == "wal"
        assert store.operator(1)["name"] == "old conv"
        jobs = JobQueue(store).jobs()
        assert [(j.id, j.state, j.attempts, j.max_attempts) for j in jobs] == [(1, "done", 0, 3), (2, "queued", 0, 3)]
        [row] = store.results()
        assert (row["latency_ms"], row["gflops"], row["operator_name"], row["device_name"], row["accuracy"]) == (
            3.25,
            120.5,
            "old conv",
            "laptop",
            0.91,
        )
        # the new parts work on the old rows: the queued job runs with retries, trials are kept
        job = JobQueue(store).claim(["measure"])
        assert (job.id, job.attempts) == (2, 1)
        measurement = store.add_measurement(1, 1, {"latency_ms": 2.0, "trials": [[0, 2.5], [1, 2.0]]}, job_id=2)
        assert store.trials(measurement) == [(0, 2.5), (1, 2.0)]
    with Store(version_1_file) as again:  # opening a migrated file changes nothing
        assert again.schema_version == SCHEMA_VERSION
        assert again.db["measurements"].count == 2


def test_newer_store_is_refused_without_touching_it(tmp_path):
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE things (x)")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match=f"schema version 99, newer than this program's {SCHEMA_VERSION}"):
        Store(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 99
    conn.close()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    before = path.read_bytes()
    for reading in (False, True):
        with pytest.raises(StoreError, match="the results store .*notes.db is not a SQLite database .it starts with"):
            Store(path, reading=reading)
    assert path.read_bytes() == before


def test_version_3_lists_unmeasured_operators_with_their_cost(tmp_path):
    import json

    from tests.support import EXAMPLES

    doc = json.loads((EXAMPLES / "conv2d.json").read_text())
    with Store(tmp_path / "r.db") as store:
        op = store.add_operator(doc, "conv", "search:random")
        [row] = store.results()
        assert (row["result_key"], row["measurement_id"], row["flops"], row["params"]) == (
            f"o{op}",
            None,
            2 * 64 * 64 * 9 * 56 * 56,
            64 * 64 * 9,
        )
        store.add_score(op, {"dataset": "digits", "backbone": "resnet18", "fisher_potential": 2.5})
        assert [r["fisher_potential"] for r in store.results()] == [2.5]
        assert [r["result_key"] for r in store.pareto(["flops", "fisher_potential"])] == [f"o{op}"]
        m = store.add_measurement(op, None, {"latency_ms": 3.0, "flops": 1e6})
        [row] = store.results()  # measured now: the measurement row replaces the bare operator
        assert (row["result_key"], row["flops"], row["fisher_potential"]) == (f"m{m}", 1e6, 2.5)


def old_store(tmp_path, version: int) -> tuple:
    """(path, database) of a store exactly as Tessera with schema `version` created it."""
    path = tmp_path / f"v{version}.db"
    db = sqlite_utils.Database(path)
    for step in MIGRATIONS[:version]:
        step(db)
    db.execute(f"PRAGMA user_version = {version}")
    return path, db


def test_version_3_store_gains_where_jobs_run(tmp_path):
    """Version 4 adds jobs.runs_on: old jobs keep None, a new claim says where it runs."""
    path, db = old_store(tmp_path, 3)
    db["jobs"].insert_all(
        [
            {
                "id": 1,
                "kind": "fisher",
                "payload": "{}",
                "state": "done",
                "attempts": 1,
                "max_attempts": 3,
                "worker_host": "laptop",
                "worker_pid": 812,
            },
            {"id": 2, "kind": "fisher", "payload": "{}", "state": "queued", "attempts": 0, "max_attempts": 3},
        ]
    )
    db.conn.commit()
    db.close()
    from core.jobs.queue import HOST, JobQueue

    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        queue = JobQueue(store)
        assert [(j.id, j.state, j.worker_pid, j.runs_on) for j in queue.jobs()] == [
            (1, "done", 812, None),
            (2, "queued", None, None),
        ]
        job = queue.claim(["fisher"])
        assert (job.id, job.runs_on) == (2, f"worker {job.worker_pid} on {HOST}")
        assert queue.place(job, "Ray node 3f2a9c1b (10.0.0.5), worker 4121")
        assert queue.get(2).runs_on == "Ray node 3f2a9c1b (10.0.0.5), worker 4121"


def test_version_6_operators_keep_their_own_bindings(tmp_path):
    """A search candidate never measured keeps the sizes its sampler solved (here a coefficient
    s): the results view and Store.operator give them back; a v5 file's operators have none."""
    import json

    from core.ir.serialize import content_hash
    from tests.support import EXAMPLES

    doc = json.loads((EXAMPLES / "conv2d.json").read_text())
    doc["bindings"] = {**doc["bindings"], "s": 2}
    path, db = old_store(tmp_path, 5)
    db["operators"].insert({"hash": "f00d", "document": '{"format": "tessera.operator"}', "name": "old"})
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert "bindings" not in store.operator(1)["document"]
        op = store.add_operator(doc, "mcts-1", "search:mcts")
        assert store.add_operator({**doc, "bindings": {"C_in": 8}}, "again") == op  # the first bindings stay
        rows = {r["operator_name"]: r for r in store.results()}
        assert rows["old"]["bindings"] is None and json.loads(rows["mcts-1"]["bindings"]) == doc["bindings"]
        stored = store.operator(op)
        assert stored["document"]["bindings"] == doc["bindings"] and content_hash(stored["document"]) == stored["hash"]


def test_version_7_shows_only_end_to_end_speedups_of_tuned_networks(tmp_path):
    """A v6 store's end-to-end score (both networks untuned) stays but is not a speedup the
    results show; a score of tuned networks is, with its deployment size and torch's times."""
    path, db = old_store(tmp_path, 6)
    db["operators"].insert({"hash": "f00d", "document": '{"format": "tessera.operator"}', "name": "old"})
    db["scores"].insert(
        {
            "operator_id": 1,
            "dataset": "digits@16px",
            "backbone": "resnet18/w16",
            "e2e_latency_ms": 100.0,
            "e2e_baseline_ms": 300.0,
            "e2e_speedup": 3.0,
        }
    )
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        (row,) = store.results()
        assert row["e2e_speedup"] is None  # untuned: no basis for a speedup
        store.add_score(
            1,
            {
                "dataset": "digits@16px",
                "backbone": "resnet18/w16",
                "e2e_latency_ms": 2.0,
                "e2e_baseline_ms": 3.0,
                "e2e_tuned": True,
                "deploy": "resnet18/w64@32px",
                "e2e_torch_ms": 4.0,
                "e2e_torch_baseline_ms": 3.5,
            },
        )
        (row,) = store.results()
        assert row["e2e_speedup"] == pytest.approx(1.5) and row["e2e_latency_ms"] == 2.0
        assert (row["e2e_torch_ms"], row["e2e_torch_baseline_ms"]) == (4.0, 3.5)  # PyTorch eager, beside TVM
        score = store.db["scores"].get(2)
        assert (score["e2e_tuned"], score["deploy"], score["e2e_torch_ms"]) == (1, "resnet18/w64@32px", 4.0)
        with pytest.raises(InvalidResult, match="the score: e2e_tuned must be true or false, got 'yes'"):
            store.add_score(1, {"dataset": "d", "backbone": "b", "e2e_latency_ms": 1.0, "e2e_tuned": "yes"})


def test_version_9_keeps_each_measurements_correctness_check_and_timing_doubts(tmp_path):
    path, db = old_store(tmp_path, 8)
    db["operators"].insert({"hash": "f00d", "document": '{"format": "tessera.operator"}', "name": "old"})
    db["measurements"].insert({"operator_id": 1, "bindings": "{}", "latency_ms": 2.0, "tuned": 0})
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        (old,) = store.results()
        assert old["max_abs_error"] is None and old["timing_note"] is None  # not checked back then
        store.add_measurement(
            1,
            None,
            {"latency_ms": 0.002, "max_abs_error": 3e-7, "timing_note": "unreliable: too short to time"},
        )
        new = next(r for r in store.results() if r["latency_ms"] == 0.002)
        assert new["max_abs_error"] == 3e-7 and new["timing_note"] == "unreliable: too short to time"


def test_version_10_operators_keep_the_sequence_they_were_found_by(tmp_path):
    path, db = old_store(tmp_path, 9)
    db["operators"].insert({"hash": "f00d", "document": '{"format": "tessera.operator"}', "name": "old"})
    db.conn.commit()
    db.close()
    first = {"format": "tessera.sequence", "version": 1, "nest": "conv2d", "steps": [{"op": "unroll", "loop": "kw"}]}
    second = {**first, "steps": [{"op": "unroll", "loop": "kh"}]}
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.operator_sequence(1) is None  # saved before sequences were kept
        conv = load_operator(EXAMPLES / "conv2d.json")
        found = store.add_operator(conv, "sequences-1", "search:sequences", first)
        assert store.operator_sequence(found) == first
        # the same operator found again by another sequence keeps the first
        assert store.add_operator(conv, "sequences-2", "search:sequences", second) == found
        assert store.operator_sequence(found) == first
        assert store.db["sequences"].count == 1
        drawn = store.add_operator(load_operator(EXAMPLES / "grouped_conv.json"))
        assert store.operator_sequence(drawn) is None


def test_version_11_reads_the_canvas_samplers_old_key_as_canvas(tmp_path):
    """Rows written when the Canvas sampler's key was "random" read as "canvas": the origin and
    names of its operators, a discovery run's settings and a queued search job's."""
    path, db = old_store(tmp_path, 10)
    document = json.dumps(read_document(EXAMPLES / "shift_conv.json"))
    db["operators"].insert_all(
        [
            {"hash": "a1", "document": document, "name": "random-1f2e3d4c", "origin": "search:random"},
            {"hash": "b2", "document": document, "name": "random-kept", "origin": "hand-made"},
        ]
    )
    db["searches"].insert({"key": "k", "name": "old run", "config": json.dumps({"strategy": "random", "seed": 3})})
    db["jobs"].insert({"kind": "search", "payload": json.dumps({"config": {"strategy": "random"}}), "state": "queued"})
    db.conn.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        rows = list(store.db.query("SELECT name, origin FROM operators ORDER BY id"))
        assert rows == [
            {"name": "canvas-1f2e3d4c", "origin": "search:canvas"},
            {"name": "random-kept", "origin": "hand-made"},
        ]
        [run] = store.db["searches"].rows
        assert json.loads(run["config"]) == {"strategy": "canvas", "seed": 3}
        [job] = store.db["jobs"].rows
        assert json.loads(job["payload"])["config"]["strategy"] == "canvas"
