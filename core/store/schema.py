"""The store's tables and the ordered migrations that build them.

MIGRATIONS[i] takes a database from version i to i + 1 (version 0 is an empty
file), so a new file and an old one reach the current schema the same way.
The version lives in PRAGMA user_version and is set in the same transaction.
"""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from .errors import StoreError

RESULTS_VIEW = """
SELECT m.id AS measurement_id, m.job_id, m.operator_id,
       o.name AS operator_name, o.origin, o.hash AS operator_hash,
       m.device_id, d.name AS device_name, m.bindings,
       m.latency_ms, m.latency_std_ms, m.gflops, m.flops, m.params,
       m.tuned, m.trial_count, m.torch_latency_ms, m.speedup,
       s.dataset, s.backbone, s.fisher_potential, s.accuracy,
       m.created
FROM measurements AS m
JOIN operators AS o ON o.id = m.operator_id
LEFT JOIN devices AS d ON d.id = m.device_id
LEFT JOIN scores AS s ON s.id = (SELECT MAX(id) FROM scores WHERE operator_id = m.operator_id)
"""


def _create_v1(db: sqlite_utils.Database) -> None:
    """Version 1: operators, sequences, devices, jobs (no retries), measurements, scores."""
    for name in ("operators", "sequences"):
        db[name].create(
            {"id": int, "hash": str, "document": str, "name": str, "origin": str, "created": float},
            pk="id",
            not_null={"hash", "document"},
        )
        db[name].create_index(["hash"], unique=True)
    db["devices"].create({"id": int, "name": str, "kind": str, "config": str}, pk="id", not_null={"name", "kind"})
    db["devices"].create_index(["name"], unique=True)
    db["jobs"].create(
        {
            "id": int,
            "kind": str,
            "payload": str,
            "operator_id": int,
            "device_id": int,
            "state": str,
            "error": str,
            "result": str,
            "worker_host": str,
            "worker_pid": int,
            "heartbeat": float,
            "created": float,
            "started": float,
            "finished": float,
            "progress": float,
            "message": str,
            "input_key": str,
            "input_version": str,
        },
        pk="id",
        not_null={"kind", "payload", "state"},
        foreign_keys=[("operator_id", "operators"), ("device_id", "devices")],
    )
    db["jobs"].create_index(["state"])
    db["jobs"].create_index(["input_key"])
    db["measurements"].create(
        {
            "id": int,
            "job_id": int,
            "operator_id": int,
            "device_id": int,
            "bindings": str,
            "latency_ms": float,
            "latency_std_ms": float,
            "gflops": float,
            "flops": float,
            "params": float,
            "tuned": int,
            "trial_count": int,
            "torch_latency_ms": float,
            "speedup": float,
            "created": float,
        },
        pk="id",
        not_null={"operator_id", "latency_ms"},
        foreign_keys=[("job_id", "jobs"), ("operator_id", "operators"), ("device_id", "devices")],
    )
    db["measurements"].create_index(["operator_id"])
    db["scores"].create(
        {
            "id": int,
            "job_id": int,
            "operator_id": int,
            "dataset": str,
            "backbone": str,
            "fisher_potential": float,
            "epochs": int,
            "accuracy": float,
            "accuracy_per_epoch": str,
            "created": float,
        },
        pk="id",
        not_null={"operator_id", "dataset"},
        foreign_keys=[("job_id", "jobs"), ("operator_id", "operators")],
    )
    db["scores"].create_index(["operator_id"])


def _add_retries_and_trials(db: sqlite_utils.Database) -> None:
    """Version 2: jobs retry after a crash (attempts, max_attempts, a lease per claim),
    every tuning trial is kept, and the results view joins measurements with scores."""
    db["jobs"].add_column("attempts", int, not_null_default=0)
    db["jobs"].add_column("max_attempts", int, not_null_default=3)
    db["jobs"].add_column("lease", str)
    db["trials"].create(
        {"id": int, "measurement_id": int, "job_id": int, "trial_index": int, "latency_ms": float},
        pk="id",
        not_null={"measurement_id", "latency_ms"},
        foreign_keys=[("measurement_id", "measurements"), ("job_id", "jobs")],
    )
    db["trials"].create_index(["measurement_id"])
    db.create_view("results", RESULTS_VIEW)


RESULTS_VIEW_V3 = """
SELECT 'm' || m.id AS result_key, m.id AS measurement_id, m.job_id, m.operator_id,
       o.name AS operator_name, o.origin, o.hash AS operator_hash,
       m.device_id, d.name AS device_name, m.bindings,
       m.latency_ms, m.latency_std_ms, m.gflops,
       m.flops, m.params,
       m.tuned, m.trial_count, m.torch_latency_ms, m.speedup,
       s.dataset, s.backbone, s.fisher_potential, s.accuracy,
       e.e2e_latency_ms, e.e2e_speedup,
       m.created
FROM measurements AS m
JOIN operators AS o ON o.id = m.operator_id
LEFT JOIN devices AS d ON d.id = m.device_id
LEFT JOIN scores AS s ON s.id = (SELECT MAX(id) FROM scores
                                 WHERE operator_id = m.operator_id AND e2e_latency_ms IS NULL)
LEFT JOIN scores AS e ON e.id = (SELECT MAX(id) FROM scores
                                 WHERE operator_id = m.operator_id AND e2e_latency_ms IS NOT NULL)
UNION ALL
SELECT 'o' || o.id, NULL, NULL, o.id, o.name, o.origin, o.hash, NULL, NULL, NULL,
       NULL, NULL, NULL, o.flops, o.params, NULL, NULL, NULL, NULL,
       s.dataset, s.backbone, s.fisher_potential, s.accuracy,
       e.e2e_latency_ms, e.e2e_speedup, o.created
FROM operators AS o
LEFT JOIN scores AS s ON s.id = (SELECT MAX(id) FROM scores WHERE operator_id = o.id AND e2e_latency_ms IS NULL)
LEFT JOIN scores AS e ON e.id = (SELECT MAX(id) FROM scores
                                 WHERE operator_id = o.id AND e2e_latency_ms IS NOT NULL)
WHERE NOT EXISTS (SELECT 1 FROM measurements WHERE operator_id = o.id)
"""


RESULTS_VIEW_V5 = RESULTS_VIEW_V3.replace(
    "m.tuned, m.trial_count,", "m.tuned, m.trial_count, m.algorithm, m.layout, m.schedule_source,"
).replace(
    "NULL, NULL, NULL, o.flops, o.params, NULL, NULL, NULL, NULL,",
    "NULL, NULL, NULL, o.flops, o.params, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
)


def _operator_costs(db: sqlite_utils.Database) -> None:
    """Version 3: operators carry FLOPs, MACs and parameters at their own bindings, and the
    results view also lists operators not yet measured (found by a search, scored only),
    each row keyed by `result_key` ('m<measurement id>' or 'o<operator id>'). A measured
    row keeps the measurement's own figures, which belong to its bindings. Scores can hold
    whole-network (end-to-end) latency; the view shows the latest of each kind of score."""
    for column in ("flops", "macs", "params"):
        db["operators"].add_column(column, float)
    for column in ("e2e_latency_ms", "e2e_baseline_ms", "e2e_speedup"):
        db["scores"].add_column(column, float)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V3)


def _job_placement(db: sqlite_utils.Database) -> None:
    """Version 4: a job says where it runs (a local worker process, a node of a Ray cluster)."""
    db["jobs"].add_column("runs_on", str)


def _measurement_variants(db: sqlite_utils.Database) -> None:
    """Version 5: a measurement says which variant of the operator ran: the algorithm
    (TVM's default lowering, grouped spatial pack, ...), the data layout, and where its
    schedule came from (untuned, tuned, reused from another kernel's tuning), so the
    explorer can compare algorithm x layout x tuning for one operator and device."""
    for column in ("algorithm", "layout", "schedule_source"):
        db["measurements"].add_column(column, str)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V5)


RESULTS_VIEW_V6 = RESULTS_VIEW_V5.replace("o.hash, NULL, NULL, NULL,", "o.hash, NULL, NULL, o.bindings,")


def _operator_bindings(db: sqlite_utils.Database) -> None:
    """Version 6: an operator keeps the bindings it was first saved with (the canonical
    document drops them), so one never measured, such as a search candidate whose dynamic
    variables the sampler solved, can be opened and measured at its own sizes."""
    db["operators"].add_column("bindings", str)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V6)


# the view's end-to-end columns come from the latest score whose networks were both tuned
RESULTS_VIEW_V7 = RESULTS_VIEW_V6.replace(
    "e2e_latency_ms IS NOT NULL)", "e2e_latency_ms IS NOT NULL AND e2e_tuned = 1)"
)


def _tuned_network_latency(db: sqlite_utils.Database) -> None:
    """Version 7: end-to-end scores say whether both networks ran with tuned kernels (the only
    basis for a speedup; untuned scores of older versions stay, unshown in the results), at what
    deployment size (e.g. 'resnet18/w64@32px'), and PyTorch's eager time of both networks."""
    db["scores"].add_column("e2e_tuned", int)
    db["scores"].add_column("deploy", str)
    for column in ("e2e_torch_ms", "e2e_torch_baseline_ms"):
        db["scores"].add_column(column, float)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V7)


def _discovery(db: sqlite_utils.Database) -> None:
    """Version 8: the discovery loop's runs (a search with its settings, the baseline's
    accuracy) and where each candidate of a run stands (the stage it reached, the reward the
    strategy was told, why), so a run can be resumed and its stages counted."""
    db["searches"].create(
        {"id": int, "key": str, "name": str, "config": str, "baseline_accuracy": float, "created": float},
        pk="id",
        not_null={"key", "config"},
    )
    db["searches"].create_index(["key"], unique=True)
    db["search_candidates"].create(
        {
            "id": int,
            "search_id": int,
            "operator_id": int,
            "stage": str,
            "job_id": int,
            "reward": float,
            "accuracy": float,
            "fisher_ratio": float,
            "e2e_speedup": float,
            "detail": str,
            "updated": float,
        },
        pk="id",
        not_null={"search_id", "operator_id", "stage"},
        foreign_keys=[("search_id", "searches"), ("operator_id", "operators"), ("job_id", "jobs")],
    )
    db["search_candidates"].create_index(["search_id", "operator_id"], unique=True)
    db["searches"].add_column("baseline_job_id", int, fk="jobs")


RESULTS_VIEW_V9 = RESULTS_VIEW_V7.replace(
    "m.algorithm, m.layout, m.schedule_source,",
    "m.algorithm, m.layout, m.schedule_source, m.max_abs_error, m.timing_note,",
).replace(
    "NULL, NULL, NULL, o.flops, o.params, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
    "NULL, NULL, NULL, o.flops, o.params, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
)


def _honest_timings(db: sqlite_utils.Database) -> None:
    """Version 9: a measurement keeps its correctness check (largest difference from PyTorch's
    output) and why its timing cannot be trusted (runs spread widely, a kernel too short to
    time, a tuned kernel far behind its best trial), shown with every result."""
    db["measurements"].add_column("max_abs_error", float)
    db["measurements"].add_column("timing_note", str)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V9)


def _operator_sequences(db: sqlite_utils.Database) -> None:
    """Version 10: an operator found by a transformation-sequence search keeps the sequence it
    was found by (the first one, when several give the same operator), so it can be opened in
    the sequence editor and timed with its own schedule."""
    db["operators"].add_column("sequence_id", int, fk="sequences")


def _canvas_sampler_key(db: sqlite_utils.Database) -> None:
    """Version 11: the Canvas sampler's key is "canvas" (it was "random", a name kept for
    uniform random sampling): its operators' origin and names, the discovery runs' settings
    and queued search jobs are renamed, so rows written before read as the new key."""
    db.execute(
        "UPDATE operators SET name = 'canvas-' || substr(name, 8) "
        "WHERE origin = 'search:random' AND name LIKE 'random-%'"
    )
    db.execute("UPDATE operators SET origin = 'search:canvas' WHERE origin = 'search:random'")
    db.execute(
        "UPDATE searches SET config = json_set(config, '$.strategy', 'canvas') "
        "WHERE json_valid(config) AND json_extract(config, '$.strategy') = 'random'"
    )
    db.execute(
        "UPDATE jobs SET payload = json_set(payload, '$.config.strategy', 'canvas') "
        "WHERE kind = 'search' AND json_valid(payload) AND json_extract(payload, '$.config.strategy') = 'random'"
    )


#: the latest score reporting test accuracy over seeds (core.train.seeds), paired with the original
_TEST_JOIN = """
LEFT JOIN scores AS t ON t.id = (SELECT MAX(id) FROM scores WHERE operator_id = {id} AND test_seeds IS NOT NULL)"""
TEST_COLUMNS = (
    "test_accuracy",
    "test_accuracy_std",
    "test_seeds",
    "test_difference",
    "test_difference_low",
    "test_difference_high",
    "test_margin",
)
RESULTS_VIEW_V11 = (
    RESULTS_VIEW_V9.replace("AND e2e_latency_ms IS NULL)", "AND e2e_latency_ms IS NULL AND test_seeds IS NULL)")
    .replace(
        "e.e2e_latency_ms, e.e2e_speedup,",
        f"e.e2e_latency_ms, e.e2e_speedup, {', '.join('t.' + c for c in TEST_COLUMNS)},",
    )
    .replace("\nUNION ALL", _TEST_JOIN.format(id="m.operator_id") + "\nUNION ALL")
    .replace("\nWHERE NOT EXISTS", _TEST_JOIN.format(id="o.id") + "\nWHERE NOT EXISTS")
)


def _held_out_accuracy(db: sqlite_utils.Database) -> None:
    """Version 12: accuracy reported apart from selection. A score may hold test accuracy over
    seeds (mean, std, how many) and its seed-by-seed difference from the original's with the
    95% interval and the margin it was judged against; the results view shows the latest such
    score beside the latest validation score. A discovery run keeps the original's test job and
    accuracies per seed; a candidate its test figures and how many candidates it was selected from."""
    for column in TEST_COLUMNS:
        db["scores"].add_column(column, int if column == "test_seeds" else float)
    db["searches"].add_column("baseline_test_job_id", int, fk="jobs")
    db["searches"].add_column("baseline_test", str)  # JSON: the original's test accuracy per seed
    for column in (
        "test_accuracy",
        "test_accuracy_std",
        "test_difference",
        "test_difference_low",
        "test_difference_high",
    ):
        db["search_candidates"].add_column(column, float)
    db["search_candidates"].add_column("selected_from", int)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V11)


def _references(db: sqlite_utils.Database) -> None:
    """Version 13: references beside a discovery run's survivors (core.search.references): the
    original narrowed to a survivor's FLOPs and depthwise-separable, kept among the run's rows
    with `reference` naming which (NULL for a candidate), each on an operator row of its own
    (origin 'reference'); a narrowed one keeps its width multipliers where it is trained and
    where it is timed (scale, deploy_scale). Every row keeps its network's FLOPs against the
    original's where it was tested and where it was timed (JSON), its tuned latency and the
    original's, and whether that timing ran with no other job of the run in flight."""
    table = db["search_candidates"]
    for column, kind in (
        ("reference", str),
        ("scale", float),
        ("deploy_scale", float),
        ("test_flops", str),
        ("e2e_flops", str),
        ("e2e_latency_ms", float),
        ("e2e_baseline_ms", float),
        ("timed_alone", int),
    ):
        table.add_column(column, kind)


RESULTS_VIEW_V14 = (
    RESULTS_VIEW_V11.replace(
        "m.torch_latency_ms, m.speedup,",
        "m.torch_latency_ms, m.speedup, m.speedup_low, m.speedup_high, (m.timing_note IS NOT NULL) AS in_doubt,",
    )
    .replace(
        "o.flops, o.params, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
        "o.flops, o.params, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,",
    )
    .replace(
        "e.e2e_latency_ms, e.e2e_speedup,", "e.e2e_latency_ms, e.e2e_speedup, e.e2e_torch_ms, e.e2e_torch_baseline_ms,"
    )
)


def _paired_timing(db: sqlite_utils.Database) -> None:
    """Version 14: a measurement's speedup over PyTorch is the median of per-round ratios of
    interleaved timing (core.compile.rounds) with its 95% interval; it keeps the threads it was
    timed on and the machine's load. The results view shows the interval and whether the
    result's timing is in doubt (`in_doubt`: it has a timing note), so a plot or a ranking can
    leave such results out without parsing notes, and beside a network's tuned latency PyTorch's
    eager latency of both networks (what a user runs without TVM)."""
    for column in ("speedup_low", "speedup_high", "load"):
        db["measurements"].add_column(column, float)
    db["measurements"].add_column("threads", int)
    db["results"].drop()
    db.create_view("results", RESULTS_VIEW_V14)


def _threads_per_side(db: sqlite_utils.Database) -> None:
    """Version 15: each side of a measurement runs on its faster thread count of those free
    (core.compile.target.fastest_threads), so PyTorch's count is kept beside the kernel's."""
    db["measurements"].add_column("torch_threads", int)


MIGRATIONS = [
    _create_v1,
    _add_retries_and_trials,
    _operator_costs,
    _job_placement,
    _measurement_variants,
    _operator_bindings,
    _tuned_network_latency,
    _discovery,
    _honest_timings,
    _operator_sequences,
    _canvas_sampler_key,
    _held_out_accuracy,
    _references,
    _paired_timing,
    _threads_per_side,
]
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(db: sqlite_utils.Database) -> int:
    return db.execute("PRAGMA user_version").fetchone()[0]


def migrate(db: sqlite_utils.Database, path: Path) -> None:
    """Apply the missing migrations; the caller holds the write transaction, so the version
    read here is final even when several processes open a new file at once."""
    version = schema_version(db)
    refuse_newer(version, path)
    for step in MIGRATIONS[version:]:
        step(db)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def refuse_newer(version: int, path: Path) -> None:
    """StoreError if schema `version` is newer than this program's."""
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the results store {path} has schema version {version}, newer than this "
            f"program's {SCHEMA_VERSION}; update Tessera or use another store"
        )
