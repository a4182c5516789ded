"""Store faults on real files: a store with damaged pages, a read-only file, a read-only
folder, and a writer that must wait for another's lock. Every one gets a clear message
from the CLI (never a sqlite3 traceback), and what can be read is read."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from core.jobs.processes import pid_alive
from core.jobs.queue import DONE, QUEUED, JobQueue
from core.jobs.supervisor import Supervisor
from core.store import Store, StoreDamaged, StoreError, StoreReadOnly, connection
from tests.store_damage import ROWS, build_store, damage_page, damage_table
from tests.support import run_here

from .job_kinds import TEST_HANDLERS

REPO = Path(__file__).resolve().parents[2]


def test_a_damaged_store_is_found_refused_for_writes_and_read_around(damaged_store, examples_dir, tmp_path, capsys):
    with Store(damaged_store) as store:
        assert store.damage == "database disk image is malformed"
        with pytest.raises(StoreDamaged) as refused:
            store.add_device("board")
        readable = list(store.results())
    message = str(refused.value)
    assert f"the results store {damaged_store} is damaged" in message
    assert f"tessera export --format csv --store {damaged_store}" in message
    assert ROWS * 0.8 < len(readable) < ROWS  # one page of rows is lost, the rest is read
    assert [r["created"] for r in readable] == sorted(r["created"] for r in readable)

    code, out, err = run_here(capsys, "submit", str(examples_dir / "conv2d.json"), "--store", str(damaged_store))
    assert code == 1 and "Traceback" not in err and out == ""
    assert err.startswith(f"tessera submit: the results store {damaged_store} is damaged")

    code, out, err = run_here(capsys, "results", "--store", str(damaged_store), "--json")
    assert code == 0 and "showing what can still be read" in err
    assert len(json.loads(out)) == len(readable)

    csv_file = tmp_path / "saved.csv"
    code, out, err = run_here(
        capsys, "export", "--format", "csv", "--store", str(damaged_store), "--out", str(csv_file)
    )
    assert code == 0, err
    assert len(csv_file.read_text().splitlines()) == len(readable) + 1  # and the header

    code, out, err = run_here(capsys, "jobs", "list", "--store", str(damaged_store))
    assert code == 0 and "Traceback" not in err


def test_damage_met_by_a_read_stops_all_writes(tmp_path, examples_dir):
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    with Store(path, check=False) as store:  # not checked on opening: the read finds it
        damage_page(path, b"marker-00500")
        with pytest.raises(StoreDamaged, match="database disk image is malformed"):
            store.db.execute("SELECT sum(length(layout)) FROM measurements").fetchall()
        with pytest.raises(StoreDamaged):
            JobQueue(store).submit("sleep", {})


def test_workers_stop_writing_to_a_store_damaged_under_them(tmp_path, examples_dir):
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    with Store(path) as store:
        queue = JobQueue(store)
        first = queue.submit("sleep", {"seconds": 1.0, "steps": 10})
        later = queue.submit("sleep", {"seconds": 0.1, "steps": 1})
    supervisor = Supervisor(path, workers=1, handlers=TEST_HANDLERS)
    supervisor.start()
    workers = supervisor.worker_pids
    try:
        with Store(path, check=False) as store:
            deadline = time.monotonic() + 20
            while JobQueue(store).get(first).state == QUEUED:
                assert time.monotonic() < deadline
                supervisor.poll()
                time.sleep(0.05)
        damage_page(path, b"marker-00500")
        with pytest.raises(StoreDamaged, match=f"the results store {path} is damaged"):
            poll_for(supervisor, 20)
        assert not any(pid_alive(pid) for pid in workers)
    finally:
        supervisor.stop()
    with Store(path) as store:  # damaged: read only; the job queued later was never taken
        assert JobQueue(store).get(later).state == QUEUED
        assert JobQueue(store).get(first).state == DONE


def poll_for(supervisor: Supervisor, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        supervisor.poll()
        time.sleep(0.05)


def read_only(path: Path) -> None:
    path.chmod(
        stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH) * path.is_dir()
    )


def test_a_read_only_file_is_read_and_never_written(tmp_path, examples_dir, capsys):
    path = tmp_path / "results.db"
    build_store(path, examples_dir, rows=20)
    read_only(path)
    before = path.read_bytes()
    with Store(path) as store:
        assert store.read_only == "the file is read-only" and store.damage is None
        assert len(list(store.results())) == 20
        with pytest.raises(StoreReadOnly, match=f"the results store {path} is read-only .the file is read-only."):
            JobQueue(store).submit("sleep", {})
    code, out, err = run_here(capsys, "results", "--store", str(path))
    assert code == 0 and len(out.splitlines()) == 21
    assert run_here(capsys, "jobs", "list", "--store", str(path))[0] == 0
    code, out, err = run_here(capsys, "submit", str(examples_dir / "conv2d.json"), "--store", str(path))
    assert code == 1 and err.startswith(f"tessera submit: the results store {path} is read-only")
    with pytest.raises(StoreReadOnly):
        Supervisor(path, workers=1, handlers=TEST_HANDLERS).start()
    assert path.read_bytes() == before


def cli_in_read_only_folder(folder: Path, *argv: str) -> subprocess.CompletedProcess:
    """`tessera ARGV` in a process that cannot write to `folder`: by its permissions, or as
    root (whom permissions do not stop) on a read-only bind mount in a mount namespace of
    its own."""
    command = [sys.executable, "-m", "app.cli", *argv]
    if os.geteuid() != 0:
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    return with_mount('mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"', folder, command)


def with_mount(mount: str, folder: Path, command: list[str]) -> subprocess.CompletedProcess:
    """`command` in a mount namespace of its own (a user namespace too unless root), after the
    shell command `mount` ($0 is `folder`). Skips where this process may not mount."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare to mount a file system in a namespace of its own")
    user = [] if os.geteuid() == 0 else ["-r"]
    script = f'{mount} || exit 99; exec "$@"'
    run = subprocess.run(
        ["unshare", "-m", *user, "sh", "-c", script, str(folder), *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode == 99:
        pytest.skip(f"no right to mount a file system in a namespace of its own: {run.stderr}")
    return run


def test_a_store_in_a_read_only_folder_is_read(tmp_path, examples_dir):
    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "results.db"
    build_store(path, examples_dir, rows=20)
    read_only(folder)
    try:
        assert [p.name for p in folder.iterdir()] == ["results.db"]  # no -shm file to read the WAL with
        run = cli_in_read_only_folder(folder, "results", "--store", str(path), "--json")
        assert run.returncode == 0, run.stderr
        assert len(json.loads(run.stdout)) == 20
        with Store(path) as store:
            assert store.read_only.startswith("its folder is read-only")
            assert len(list(store.results())) == 20
        run = cli_in_read_only_folder(folder, "jobs", "retry", "1", "--store", str(path))
        assert run.returncode == 1 and run.stderr.startswith(f"tessera jobs: the results store {path} is read-only")
    finally:
        folder.chmod(0o755)


def test_a_writer_waits_for_another_process_lock_past_its_busy_timeout(tmp_path):
    """SQLite's own wait (busy_timeout) runs out after 50 ms here; the retry loop keeps trying."""
    path = tmp_path / "results.db"
    Store(path).close()
    holder = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    threading.Timer(0.6, holder.execute, ["COMMIT"]).start()
    with Store(path, busy_timeout=0.05, patience=10) as store:
        started = time.monotonic()
        store.add_device("board")
        assert time.monotonic() - started >= 0.5
        assert [d["name"] for d in store.devices()] == ["board"]
    holder.close()


def test_a_lock_held_past_the_patience_is_a_clear_error(tmp_path):
    path = tmp_path / "results.db"
    Store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        locked = f"the results store {path} stayed locked by another process for 0.3 s"
        with Store(path, busy_timeout=0.05, patience=0.3) as store, pytest.raises(StoreError, match=locked):
            store.add_device("board")
    finally:
        holder.close()


def test_a_table_lost_to_damage_leaves_the_others_readable(tmp_path, examples_dir, capsys):
    """The operators table's first page damaged: every measurement is still read (its operator's
    columns empty), by `results`, `--json` and the CSV export, each saying what was lost."""
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    damage_table(path, "operators")
    lost = "lost: operators (every row: its first page is damaged)"

    code, out, err = run_here(capsys, "results", "--store", str(path), "--json")
    assert code == 0 and lost in err
    rows = json.loads(out)
    assert sorted(r["measurement_id"] for r in rows) == list(range(1, ROWS + 1))
    assert {r["operator_name"] for r in rows} == {None}

    code, out, err = run_here(capsys, "results", "--store", str(path))
    assert code == 0 and lost in err and len(out.splitlines()) == ROWS + 1

    csv_file = tmp_path / "saved.csv"
    code, out, err = run_here(capsys, "export", "--format", "csv", "--store", str(path), "--out", str(csv_file))
    assert code == 0 and lost in err
    assert len(csv_file.read_text().splitlines()) == ROWS + 1

    with Store(path) as store:
        assert len(store.pareto(["latency_ms", "flops"])) >= 1


def test_what_a_damaged_page_took_is_said_by_ids(damaged_store):
    with Store(damaged_store) as store:
        lost = store.salvaged().lost
        read = {r["measurement_id"] for r in store.results()}
    assert list(lost) == ["measurements"]
    first, last = (int(i) for i in lost["measurements"].removeprefix("ids ").split("-"))
    assert read == set(range(1, ROWS + 1)) - set(range(first, last + 1))


def test_a_full_disk_keeps_a_finished_job_result_until_space_is_freed(tmp_path):
    """A worker whose result write meets a full disk (a small tmpfs, filled by the job) says
    so, keeps the result and its attempt, and writes it once space is freed; a reader of the
    store on a full disk reads it all the same (reading creates no -shm file)."""
    folder = tmp_path / "small"
    folder.mkdir()
    run = with_mount(
        'mount -t tmpfs -o size=8m tmpfs "$0"', folder, [sys.executable, "-m", "tests.core.full_disk", str(folder)]
    )
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    seen = json.loads(run.stdout)
    assert seen["while full"] == {"state": "running", "worker alive": True}
    assert f"the disk holding the results store {folder / 'results.db'} is full" in run.stderr
    assert "the outcome of job 1 (fill) waits to be written" in run.stderr
    assert seen["after"] == {"attempts": 1, "result": 600_000}
    assert seen["results exit"] == 0 and seen["results said"] == ""  # reading needs no space: it writes nothing


def test_an_empty_file_is_refused_as_a_store(tmp_path, examples_dir, capsys):
    """SQLite would take 0 bytes for a new store; it is more likely one truncated: said, and left as it is."""
    path = tmp_path / "results.db"
    path.touch()
    for argv in (["submit", str(examples_dir / "conv2d.json")], ["worker"]):
        code, _, err = run_here(capsys, *argv, "--store", str(path))
        assert code == 1 and err.startswith(f"tessera {argv[0]}: the results store {path} is an empty file (0 bytes)")
    assert path.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["results.db"]


def no_space(*args):
    raise OSError(28, "No space left on device")


def test_a_store_with_a_wal_but_no_shm_is_read_whole_from_a_copy(tmp_path, examples_dir, monkeypatch, capsys):
    """A copy of a store in use (its -wal file holding the last 50 measurements, no -shm file) in a
    read-only folder: read from a copy of both made elsewhere, all of it, leaving the folder as it
    was; where no copy can be made either, the main file alone, and `results` and `jobs list` say
    that the latest changes may be missing."""
    path = tmp_path / "results.db"
    build_store(path, examples_dir)
    folder = tmp_path / "shared"
    folder.mkdir()
    with Store(path) as store:
        with store.write():
            for i in range(50):
                store.add_measurement(1, None, {"latency_ms": 1.0 + i})
        for name in ("results.db", "results.db-wal"):
            shutil.copy(tmp_path / name, folder / name)
    read_only(folder)
    try:
        run = cli_in_read_only_folder(folder, "results", "--store", str(folder / "results.db"), "--json")
        assert run.returncode == 0 and run.stderr == "", run.stderr
        assert len(json.loads(run.stdout)) == ROWS + 50
        monkeypatch.setattr(connection, "_connect_copy", no_space)
        code, out, err = run_here(capsys, "results", "--store", str(folder / "results.db"), "--json")
        assert code == 0 and len(json.loads(out)) == ROWS  # the main file's
        stale = f"warning: the results store {folder / 'results.db'} may not show its latest changes: its -wal file"
        assert err.startswith(stale)
        code, out, err = run_here(capsys, "jobs", "list", "--store", str(folder / "results.db"))
        assert code == 0 and err.startswith(stale), err
        assert sorted(p.name for p in folder.iterdir()) == ["results.db", "results.db-wal"]
    finally:
        folder.chmod(0o755)


def test_another_programs_exclusive_lock_is_waited_for_on_opening(tmp_path):
    """A program holding the file in SQLite's exclusive locking mode blocks even reading it:
    opening waits past SQLite's busy timeout (here 50 ms) for the store's patience too."""
    path = tmp_path / "results.db"
    Store(path).close()
    holder = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("COMMIT")  # the lock stays held until the connection closes
    threading.Timer(0.6, holder.close).start()
    started = time.monotonic()
    with Store(path, busy_timeout=0.05, patience=10) as store:
        assert time.monotonic() - started >= 0.5
        store.add_device("board")
