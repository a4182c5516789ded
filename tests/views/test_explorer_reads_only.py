"""The Explorer reads a damaged store of an older schema (from a copy brought up to date in
memory) and leaves all its files as they were; another program's SQLite file is refused by
name and left as it was."""

from __future__ import annotations

import sqlite3

import pytest

from core.store import StoreError
from tests.core.test_store_reading import files
from tests.store_damage import ROWS, build_old_store, damage_page
from views.explorer.session import ExplorerSession


def test_the_explorer_reads_a_damaged_older_store_and_changes_none_of_its_files(qtbot, tmp_path):
    path = tmp_path / "results.db"
    build_old_store(path, 4)
    damage_page(path, b'{"M": 10500}')
    before = files(path)
    session = ExplorerSession(path)
    try:
        qtbot.waitUntil(lambda: session.loaded and session.frame.count > 0, timeout=20_000)
        assert ROWS * 0.8 < session.frame.count < ROWS
        assert "lost: measurements" in session.lost
    finally:
        session.shutdown()
    assert files(path) == before


def test_the_explorer_refuses_another_programs_database_and_leaves_it(tmp_path):
    path = tmp_path / "notes.db"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    before = files(path)
    with pytest.raises(StoreError, match="is a SQLite database of another program"):
        ExplorerSession(path)
    assert files(path) == before
