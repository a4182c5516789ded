"""Commands that only read change nothing: `results`, `results --json`, `jobs list` and a CSV
export, on another program's SQLite file, a store of a newer Tessera (in either journal mode), a
damaged store with an unmerged -wal file, and a damaged store of an older schema, leave every one
of its files (main, -wal, -shm) as it was, byte for byte, and create none. Another program's file
and a newer store are refused by name, by writing commands too; the damaged ones are read, and
every command a message recommends works on the store that produced it."""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
from pathlib import Path

import pytest

from core.jobs.queue import JobQueue
from core.store import Store, StoreError, StoreMissing
from core.store.schema import SCHEMA_VERSION
from tests.store_damage import ROWS, build_old_store, build_store, damage_page, damage_table, with_unmerged_wal
from tests.support import run_here

READERS = (["results"], ["results", "--json"], ["jobs", "list"], ["export", "--format", "csv", "--force"])
NEW_ROWS = [(1, 5000.0 + i, f"late-{i}") for i in range(10)]
ADD_DEVICE = ["device", "add", "board", "--tracker", "127.0.0.1:9190", "--key", "board"]
ADD_MEASUREMENTS = "INSERT INTO measurements (operator_id, latency_ms, layout) VALUES (?, ?, ?)"


def files(path: Path) -> dict[str, bytes]:
    """Every file of the store at `path` (main, -wal, -shm, -journal), by name."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name)}


def read_with_every_command(path: Path, capsys, out: Path) -> list[tuple[int, str, str]]:
    """What each reading command said, having checked it left the store's files as they were."""
    before = files(path)
    said = []
    for argv in READERS:
        extra = ["--out", str(out / "saved.csv")] if argv[0] == "export" else []
        said.append(run_here(capsys, *argv, *extra, "--store", str(path)))
        assert files(path) == before, f"`tessera {' '.join(argv)}` changed the store's files"
    try:
        with Store(path, reading=True) as store:  # what the explorer's reader opens
            list(store.results())
    except StoreError:
        pass  # refused: the commands said so
    assert files(path) == before
    return said


def foreign(path: Path, wal: bool) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA journal_mode = {'WAL' if wal else 'DELETE'}")
    with conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO notes (text) VALUES ('my own data')")
    conn.close()
    if wal:
        with_unmerged_wal(path, "INSERT INTO notes (text) VALUES (?)", [("more",)])


def future(path: Path, wal: bool) -> None:
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.execute(f"PRAGMA journal_mode = {'WAL' if wal else 'DELETE'}")
    conn.close()
    if wal:
        with_unmerged_wal(path, "INSERT INTO devices (name, kind) VALUES (?, 'local')", [("board",)])


@pytest.mark.parametrize(
    "make, wal, refusal",
    [
        (foreign, False, "is a SQLite database of another program (its tables: notes), not a Tessera results store"),
        (foreign, True, "is a SQLite database of another program (its tables: notes), not a Tessera results store"),
        (future, False, f"has schema version 99, newer than this program's {SCHEMA_VERSION}"),
        (future, True, f"has schema version 99, newer than this program's {SCHEMA_VERSION}"),
    ],
    ids=["foreign-rollback", "foreign-wal", "future-rollback", "future-wal"],
)
def test_a_file_tessera_may_not_write_is_refused_and_left_as_it_was(tmp_path, capsys, examples_dir, make, wal, refusal):
    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    make(path, wal)
    assert ("results.db-wal" in files(path)) == wal
    before = files(path)
    for code, out, err in read_with_every_command(path, capsys, tmp_path):
        assert code == 1 and out == "" and refusal in err and "Traceback" not in err
    code, _, err = run_here(capsys, "submit", str(examples_dir / "conv2d.json"), "--store", str(path))
    assert code == 1 and refusal in err
    code, _, err = run_here(capsys, *ADD_DEVICE, "--store", str(path))
    assert code == 1 and refusal in err
    assert files(path) == before
    header = path.read_bytes()[:20]
    assert header[18] == (2 if wal else 1)  # never switched to WAL mode


@pytest.mark.parametrize("shm", [True, False], ids=["with-shm", "without-shm"])
def test_a_damaged_store_with_an_unmerged_wal_is_read_and_never_merged(tmp_path, capsys, examples_dir, shm):
    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    build_store(path, examples_dir)
    damage_page(path, b"marker-00500")
    with_unmerged_wal(path, ADD_MEASUREMENTS, NEW_ROWS)
    if not shm:
        path.with_name("results.db-shm").unlink()
    before = files(path)
    said = read_with_every_command(path, capsys, tmp_path)
    assert all(code == 0 for code, _, _ in said), said
    results = json.loads(said[1][1])
    assert ROWS * 0.8 < len(results) < ROWS + len(NEW_ROWS)
    assert {r["latency_ms"] for r in results} >= {row[1] for row in NEW_ROWS}  # the -wal file's rows are read
    assert "is damaged" in said[1][2] and "showing what can still be read" in said[1][2]
    code, _, err = run_here(capsys, "submit", str(examples_dir / "conv2d.json"), "--store", str(path))
    assert code == 1 and "is damaged" in err
    assert files(path) == before


def test_a_damaged_store_of_an_older_schema_is_read_without_migrating(tmp_path, capsys, examples_dir, monkeypatch):
    """Every way of reading works on it, from a copy brought up to date in memory; what the
    refusal of a write recommends, run as written, works too."""
    path = tmp_path / "store" / "results.db"
    path.parent.mkdir()
    build_old_store(path, 4)
    damage_page(path, b'{"M": 10500}')
    before = files(path)
    said = read_with_every_command(path, capsys, tmp_path)
    assert all(code == 0 for code, _, _ in said), said
    results = json.loads(said[1][1])
    assert ROWS * 0.8 < len(results) < ROWS
    assert {r["operator_name"] for r in results} == {"old conv"}
    assert said[2][1].splitlines()[1].split()[:3] == ["1", "measure", "done"]  # jobs list
    assert len((tmp_path / "saved.csv").read_text().splitlines()) == len(results) + 1

    code, _, refused = run_here(capsys, "submit", str(examples_dir / "conv2d.json"), "--store", str(path))
    assert code == 1 and "is damaged" in refused
    recommended = re.findall(r"`tessera ([^`]+)`", refused)
    assert len(recommended) == 2
    monkeypatch.chdir(tmp_path)
    for command in recommended:
        code, _, err = run_here(capsys, *shlex.split(command))
        assert code == 0 and "Traceback" not in err, (command, err)
    assert len((tmp_path / "results.csv").read_text().splitlines()) == len(results) + 1
    assert files(path) == before


def test_an_older_store_is_read_as_it_is_and_migrated_only_by_a_write(tmp_path, capsys, examples_dir):
    path = tmp_path / "results.db"
    build_old_store(path, 4, rows=20)
    before = files(path)
    said = read_with_every_command(path, capsys, tmp_path)
    assert [code for code, _, _ in said] == [0, 0, 0, 0] and len(json.loads(said[1][1])) == 20
    assert files(path) == before
    assert run_here(capsys, *ADD_DEVICE, "--store", str(path))[0] == 0
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION and len(list(store.results())) == 20


def test_reading_creates_no_store(tmp_path, capsys):
    path = tmp_path / "none" / "results.db"
    assert run_here(capsys, "results", "--store", str(path)) == (0, "no results yet\n", "")
    assert run_here(capsys, "jobs", "list", "--store", str(path)) == (0, "no jobs yet\n", "")
    code, _, err = run_here(capsys, "export", "--format", "csv", "--store", str(path), "--out", str(tmp_path / "a.csv"))
    assert code == 1 and f"no results store at {path}" in err
    with pytest.raises(StoreMissing):
        Store(path, reading=True)
    assert not path.parent.exists()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_folder_or_fifo_as_the_store_is_named_as_such(tmp_path, capsys, kind):
    path = tmp_path / "results.db"
    if kind == "folder":
        path.mkdir()
    else:
        import os

        os.mkfifo(path)
    said = "a folder" if kind == "folder" else "a FIFO (named pipe)"
    for argv in (*READERS, ADD_DEVICE):
        extra = ["--out", str(tmp_path / "saved.csv")] if argv[0] == "export" else []
        code, _, err = run_here(capsys, *argv, *extra, "--store", str(path))
        assert code == 1 and f"the results store {path} is {said}, not a file" in err, (argv, err)
    with pytest.raises(StoreError, match=re.escape(said)):
        Store(path)


def test_jobs_list_on_a_damaged_store_lists_what_it_can(tmp_path, capsys, examples_dir):
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    with Store(path) as store:
        for seconds in (1, 2):
            JobQueue(store).submit("sleep", {"seconds": seconds})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    damage_table(path, "operators")  # which every job's row is read with (its operator's name)
    before = files(path)
    code, out, err = run_here(capsys, "jobs", "list", "--store", str(path))
    assert code == 0 and f"the results store {path} is damaged" in err
    assert [line.split()[:3] for line in out.splitlines()[1:]] == [["1", "sleep", "queued"], ["2", "sleep", "queued"]]
    assert files(path) == before


def test_damage_met_while_another_process_wrote_is_checked_again(tmp_path, examples_dir, monkeypatch):
    """A store without a -wal file is read as it is (immutable): a process that merges its
    changes into the main file meanwhile can make the read see pages torn. Found damaged while
    the file changed, the store is read again before it is believed damaged."""
    path = tmp_path / "results.db"
    build_store(path, examples_dir, rows=5)
    check, calls = Store._check, []

    def torn_once(db):
        calls.append(db)
        if len(calls) > 1:
            return check(db)
        os.utime(path, ns=(1, 1))  # another process wrote to it meanwhile
        db.conn.damage = "database disk image is malformed"
        return db.conn.damage

    monkeypatch.setattr(Store, "_check", staticmethod(torn_once))
    with Store(path) as store:
        assert store.damage is None
        store.add_device("board")
    assert len(calls) == 2
