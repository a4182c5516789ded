"""The results store: one SQLite file shared by the GUI, the CLI and worker processes.

Every write is one short BEGIN IMMEDIATE transaction (see connection.py); rows
hold JSON text only, so reading a store never executes anything. A store is checked with
SQLite's quick_check when opened; one found damaged (then, or by any later read) is never
written again, and its results are read around the damaged pages.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import sqlite_utils

from core.ir.graph import OperatorGraph
from core.ir.serialize import canonical_json, graph_from_document

from .connection import StoreConnection, open_database, why_read_only, write_transaction
from .errors import StoreDamaged, StoreError, damaged, read_only
from .location import default_store_path
from .measurement import Measurement
from .pareto import MAXIMIZE, MINIMIZE, pareto_front, reliable
from .records import measurement_row, operator_cost, score_row
from .result_fields import NUMERIC
from .result_filter import ResultFilter
from .salvage import Salvage, salvage
from .schema import SCHEMA_VERSION, migrate, schema_version
from .score import Score
from .stored_values import numbers_only, stored_json
from .upgraded_copy import upgraded_copy

#: why a store opened by a command that only reads is not written
READING = "this command only reads it"
#: reads of a store that another process changed meanwhile, before damage found is believed
PROBES = 3


def _file_state(path: Path) -> tuple:
    """What changes when a process writes to the store: its main and -wal files' sizes and times."""
    state: list[tuple[int, int] | None] = []
    for file in (path, path.with_name(path.name + "-wal")):
        try:
            stat = file.stat()
            state.append((stat.st_size, stat.st_mtime_ns))
        except OSError:
            state.append(None)
    return tuple(state)


#: numeric columns of the results view and the direction in which each is better
RESULT_OBJECTIVES = {
    "latency_ms": MINIMIZE,
    "latency_std_ms": MINIMIZE,
    "flops": MINIMIZE,
    "params": MINIMIZE,
    "gflops": MAXIMIZE,
    "trial_count": MINIMIZE,
    "torch_latency_ms": MINIMIZE,
    "speedup": MAXIMIZE,
    "fisher_potential": MAXIMIZE,
    "accuracy": MAXIMIZE,
    "e2e_latency_ms": MINIMIZE,
    "e2e_speedup": MAXIMIZE,
    "test_accuracy": MAXIMIZE,
    "test_difference": MAXIMIZE,
}


class Store:
    """Open (creating or migrating) the store at `path`, default default_store_path().

    A store whose file or folder may not be written opens read-only; one that fails
    SQLite's quick_check opens damaged (`check=False` skips the check, for a second
    connection of a process that made it). Both are read as usual; writing raises
    StoreReadOnly or StoreDamaged, saying what to do.

    `reading=True` (commands that only read: results, jobs list, a CSV export, the explorer's
    reader) changes none of the store's files: a missing store is StoreMissing, not created, and
    one of an older schema (or damaged, or read-only) is read from an up-to-date copy in
    memory (`db`), never migrated. Every store is first opened that way, so a file that is not
    a Tessera store, or one of a newer Tessera, is refused before anything is written to it,
    and a damaged one is never opened for writing."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        busy_timeout: float = 10.0,
        patience: float = 60.0,
        check: bool = True,
        reading: bool = False,
    ):
        self.path = Path(path).expanduser() if path else default_store_path()
        self.patience = patience
        self._salvage: Salvage | None = None
        self._file = self._open(busy_timeout, check, reading)
        self.db: sqlite_utils.Database = self._file
        try:
            # a damaged store of an older schema is read from what salvage saves, brought up to date
            if schema_version(self._file) != SCHEMA_VERSION and not self.damage:
                if self.read_only:
                    self.db = upgraded_copy(self._file, self.path)
                else:
                    with self.write():
                        migrate(self.db, self.path)
            if reading and self.damage:  # jobs, devices and results: whatever can still be read
                self.db = self.salvaged().db
        except BaseException:
            self.close()
            raise

    def _open(self, busy_timeout: float, check: bool, reading: bool) -> sqlite_utils.Database:
        """The file, first opened to read only (and checked, with `check`); opened again to be
        written when it may be: not `reading`, not damaged, its file and folder writable."""
        if not (reading or (check and self.path.exists())):  # a new store, or a second connection
            return open_database(self.path, busy_timeout, self.patience)
        refusal = why_read_only(self.path) or (READING if reading else None)
        for probe in range(PROBES):
            state = _file_state(self.path)
            db = open_database(self.path, busy_timeout, self.patience, refusal or READING)
            try:
                if check:
                    self._check(db)
            except BaseException:
                db.close()
                raise
            conn = typing.cast(StoreConnection, db.conn)
            if not conn.damage or _file_state(self.path) == state or probe == PROBES - 1:
                break
            db.close()  # another process wrote to it while it was read as it was (immutable): read again
        if refusal or conn.damage:
            conn.refusal = refusal
            return db
        db.close()
        return open_database(self.path, busy_timeout, self.patience)

    def check(self) -> str | None:
        """SQLite's own check of every page (about 50 ms for 50 MB): what is damaged, or None.
        Damage found here or by any read is remembered: the store is not written again."""
        return self._check(self._file)

    @staticmethod
    def _check(db: sqlite_utils.Database) -> str | None:
        conn = typing.cast(StoreConnection, db.conn)
        try:
            problems = [row[0] for row in db.execute("PRAGMA quick_check").fetchall()]
        except StoreDamaged:
            return conn.damage  # the connection remembers it
        if problems != ["ok"]:
            conn.damage = "; ".join(problems[:3])
        return conn.damage

    def note_damage(self, detail: str) -> None:
        """Damage another connection to the file met: this one refuses writes from now on too."""
        self._connection.damage = self._connection.damage or detail

    def ensure_writable(self) -> None:
        """StoreDamaged or StoreReadOnly, saying what to do, if the store must not be written."""
        if self.damage:
            raise damaged(self.path, self.damage)
        if self.read_only:
            raise read_only(self.path, self.read_only)

    def reading_note(self) -> str | None:
        """For readers of a damaged store: what they see is what could still be read, and what
        was lost; of a store read without its -wal file: what they see may be out of date."""
        if self._connection.stale and not self.damage:
            return f"the results store {self.path} may not show its latest changes: {self._connection.stale}"
        if not self.damage:
            return None
        return (
            f"the results store {self.path} is damaged ({self.damage}): showing what can still be read; "
            f"{self.salvaged().note()}"
        )

    def salvaged(self) -> Salvage:
        """What can still be read of a damaged store, copied into memory once (salvage.salvage)."""
        if self._salvage is None:
            self._salvage = salvage(self._file, self.path)
        return self._salvage

    @property
    def readable(self) -> sqlite_utils.Database:
        """The database the results are read from: the file, or what could be saved of it when damaged."""
        return self.salvaged().db if self.damage else self.db

    @property
    def damage(self) -> str | None:
        """What SQLite found damaged in the file, or None."""
        return self._connection.damage

    @property
    def may_be_written(self) -> bool:
        """Whether a command that writes may write to the file as it is: undamaged, of the current
        schema, its file and folder writable (whether or not this Store was opened to read)."""
        return not self.damage and self.db is self._file and why_read_only(self.path) is None

    @property
    def read_only(self) -> str | None:
        """Why the store may not be written (a read-only file or folder), or None."""
        return self._connection.refusal

    @property
    def _connection(self) -> StoreConnection:
        return typing.cast(StoreConnection, self._file.conn)  # open_database made it

    def close(self) -> None:
        if self.db is not self._file:
            self.db.close()
        self._file.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def write(self):
        """Context manager: one write transaction, waiting for other writers (joins an open one).
        StoreDamaged or StoreReadOnly at once if the store must not be written."""
        self.ensure_writable()
        return write_transaction(self.db, self.path, self.patience)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads inside see one state of the file (one read transaction), whatever other
        processes commit meanwhile."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.conn.commit()

    @property
    def schema_version(self) -> int:
        return schema_version(self.db)

    # -- things that are measured ----------------------------------------------
    def add_operator(
        self,
        operator: dict | OperatorGraph,
        name: str = "",
        origin: str = "hand-made",
        sequence: dict | None = None,
        network: str = "",
    ) -> int:
        """Save an operator (its document, or its graph already read) in canonical form with
        its own bindings and its cost at them; the same operator saved again (same content
        hash, core.ir.serialize.content_hash) returns the existing row's id. `sequence`: the
        transformation-sequence document it was found by, kept with it unless it has one.
        `network`: a row of its own for the operator in a network it does not make by itself (a
        discovery run's reference, e.g. the template in a narrowed backbone), whose identity
        (hash) is the operator's and this text's together: saved again with the same text, the
        same row."""
        graph = operator if isinstance(operator, OperatorGraph) else graph_from_document(operator)
        with self.write():
            operator_id = self._add_unique(
                "operators",
                canonical_json(graph),
                name,
                origin,
                {**operator_cost(graph), "bindings": json.dumps(graph.bindings) if graph.bindings else None},
                network,
            )
            if sequence is not None and self.operator_sequence(operator_id) is None:
                sequence_id = self.add_sequence(sequence, name, origin)
                self.db.execute("UPDATE operators SET sequence_id = ? WHERE id = ?", [sequence_id, operator_id])
            return operator_id

    def operator_sequence(self, operator_id: int) -> dict | None:
        """The sequence document the operator was found by, or None (drawn, or sampled otherwise)."""
        row = self.db.execute(
            "SELECT s.document FROM operators AS o JOIN sequences AS s ON s.id = o.sequence_id WHERE o.id = ?",
            [operator_id],
        ).fetchone()
        return None if row is None else stored_json(row[0], "operators", operator_id, "sequence's document")

    def add_sequence(self, doc: dict, name: str = "", origin: str = "hand-made") -> int:
        """Save a transformation-sequence document; equal documents (as sorted JSON) are one row."""
        return self._add_unique("sequences", json.dumps(doc, sort_keys=True, separators=(",", ":")), name, origin)

    def _add_unique(
        self, table: str, text: str, name: str, origin: str, extra: dict | None = None, network: str = ""
    ) -> int:
        """Insert unless a row with the same hash (sha256 of `text`, and of `network` after it
        when given) exists; return the row's id."""
        digest = hashlib.sha256((text + (f"\n{network}" if network else "")).encode()).hexdigest()
        with self.write():
            self.db.table(table).insert(
                {
                    "hash": digest,
                    "document": text,
                    "name": name,
                    "origin": origin,
                    "created": time.time(),
                    **(extra or {}),
                },
                ignore=True,
            )
            return self.db.execute(f"SELECT id FROM {table} WHERE hash = ?", [digest]).fetchone()[0]

    def operator(self, operator_id: int) -> dict:
        """The operators row with `document` parsed back into a dict, carrying the bindings
        the operator was first saved with."""
        row = self._get("operators", operator_id)
        document = stored_json(row["document"], "operators", operator_id, "document")
        if row["bindings"]:
            document["bindings"] = stored_json(row["bindings"], "operators", operator_id, "bindings")
        return {**row, "document": document}

    def add_device(self, name: str, kind: str = "local", config: dict | None = None) -> int:
        """Create or update the device called `name` (kind 'local' or 'rpc'); returns its id."""
        if kind not in ("local", "rpc"):
            raise StoreError(f"device {name!r}: kind must be 'local' or 'rpc', got {kind!r}")
        with self.write():
            self.db.table("devices").upsert({"name": name, "kind": kind, "config": config or {}}, pk="name")
            return self.db.execute("SELECT id FROM devices WHERE name = ?", [name]).fetchone()[0]

    def rename_operator(self, operator_id: int, name: str) -> None:
        name = name.strip()
        if not name:
            raise StoreError("an operator needs a non-empty name")
        with self.write():
            if self.db.execute("UPDATE operators SET name = ? WHERE id = ?", [name, operator_id]).rowcount != 1:
                raise StoreError(f"no operator {operator_id} in {self.path}")

    def devices(self) -> list[dict]:
        return [
            {**row, "config": stored_json(row["config"], "devices", row["id"], "config")}
            for row in self.db["devices"].rows_where(order_by="id")
        ]

    def _get(self, table: str, row_id: int) -> dict:
        try:
            return self.db.table(table).get(row_id)
        except sqlite_utils.db.NotFoundError:
            raise StoreError(f"no row {row_id} in {table} of {self.path}") from None

    # -- results ----------------------------------------------------------------
    def add_measurement(
        self, operator_id: int, device_id: int | None, result: Measurement | dict, job_id: int | None = None
    ) -> int:
        """Record one measurement (core.store.measurement; its JSON is read first) and its trials."""
        row, trials = measurement_row(result if isinstance(result, Measurement) else Measurement.from_dict(result))
        with self.write():
            measurement_id = self._insert(
                "measurements",
                {**row, "job_id": job_id, "operator_id": operator_id, "device_id": device_id, "created": time.time()},
            )
            self.db.table("trials").insert_all(
                {"measurement_id": measurement_id, "job_id": job_id, "trial_index": i, "latency_ms": t}
                for i, t in trials
            )
        return measurement_id

    def delete_measurements(self, ids: Sequence[int]) -> int:
        """Delete measurements (and their tuning trials); operators stay. Returns how many went."""
        marks = json.dumps([int(i) for i in ids])
        with self.write():
            self.db.execute("DELETE FROM trials WHERE measurement_id IN (SELECT value FROM json_each(?))", [marks])
            return self.db.execute(
                "DELETE FROM measurements WHERE id IN (SELECT value FROM json_each(?))", [marks]
            ).rowcount

    def add_score(self, operator_id: int, score: Score | dict, job_id: int | None = None) -> int:
        """Record one score (core.store.score; its JSON is read first)."""
        row = score_row(score if isinstance(score, Score) else Score.from_dict(score))
        with self.write():
            return self._insert("scores", {**row, "job_id": job_id, "operator_id": operator_id, "created": time.time()})

    def _insert(self, table: str, row: dict) -> int:
        """Insert `row` (inside the caller's transaction); its id."""
        return typing.cast(int, self.db.table(table).insert(row).last_pk)

    def trials(self, measurement_id: int) -> list[tuple[int, float]]:
        """(trial index, latency ms) of the measurement's tuning trials, in trial order."""
        return [
            (r["trial_index"], r["latency_ms"])
            for r in self.db["trials"].rows_where("measurement_id = ?", [measurement_id], order_by="trial_index")
        ]

    def results(
        self, where: str | None = None, where_args: Sequence = (), order_by: str = "created, result_key"
    ) -> Iterator[dict]:
        """Rows of the results view: measurements joined with operators, devices and the
        operator's latest score, plus operators not measured yet (measurement_id NULL);
        each row has a `result_key`; `bindings` stays JSON text. From a damaged store: the
        rows that can still be read (Store.readable)."""
        rows = self.readable["results"].rows_where(where, where_args, order_by=order_by)
        return (numbers_only(row, NUMERIC) for row in rows)

    def pareto(
        self,
        columns: Sequence[str],
        directions: Sequence[str] | None = None,
        where: ResultFilter | None = None,
        with_doubtful: bool = False,
    ) -> list[dict]:
        """Results rows on the Pareto front of two or three numeric columns of the results view
        (rows missing one of them are left out, and those `where` rejects; where a column is
        timed, those whose timing is in doubt unless `with_doubtful`: core.store.pareto),
        sorted by the first column. Directions default to RESULT_OBJECTIVES ('min' for latency,
        'max' for accuracy, ...)."""
        unknown = [c for c in columns if c not in RESULT_OBJECTIVES]
        if unknown or not 2 <= len(columns) <= 3:
            raise StoreError(
                f"a Pareto front needs 2 or 3 of {', '.join(RESULT_OBJECTIVES)}; got {', '.join(columns) or 'none'}"
            )
        directions = list(directions or [RESULT_OBJECTIVES[c] for c in columns])
        selected = ", ".join(columns)
        ranked = [*(f"{c} IS NOT NULL" for c in columns), "" if with_doubtful else reliable(columns)]
        wanted = (where or ResultFilter()).and_(" AND ".join(filter(None, ranked)))
        rows = self.readable.execute(
            f"SELECT result_key, {selected} FROM results WHERE {wanted.where}", wanted.args
        ).fetchall()
        if not rows:
            return []
        keys = [r[0] for r in rows]
        table = np.array([r[1:] for r in rows], dtype=float)
        front = pareto_front(table, directions)
        front = front[np.argsort(table[front, 0], kind="stable")]
        chosen = [keys[i] for i in front]
        found = {
            r["result_key"]: r
            for r in self.results("result_key IN (SELECT value FROM json_each(?))", [json.dumps(chosen)])
        }
        return [found[k] for k in chosen]
