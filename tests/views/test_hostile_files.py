"""Hostile files through the window: the loaders' fuzz (tests/hostile_files.py) opened with
File > Open, as a user opens a file from a colleague. Each one either shows in its editor or
is refused in a dialog that names the file; no exception escapes into Qt, and the window
stays usable for the next file."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QFileDialog

from tests.hostile_files import OPERATORS, SEQUENCES, mutated

pytestmark = pytest.mark.gui
CASES = int(os.environ.get("GUI_FUZZ_CASES", "120"))
SECONDS = 5.0  # one file, opened and shown, on a loaded 2-core machine


@settings(
    max_examples=CASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    derandomize=True,
    database=None,
)
@given(text=st.one_of(mutated(OPERATORS), mutated(SEQUENCES)))
def test_file_open_of_a_hostile_file_shows_it_or_says_why(qtbot, window, dialogs, monkeypatch, tmp_path, text):
    path = tmp_path / "colleague.json"
    path.write_text(text)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(path), "")))
    calls = len(dialogs.calls)
    started = time.perf_counter()
    window.commands["open"].trigger()
    qtbot.waitUntil(window.is_idle, timeout=20_000)
    assert time.perf_counter() - started < SECONDS
    refused = [c for c in dialogs.calls[calls:] if c[0] != "question"]  # not "save the last one?"
    if refused:
        [(kind, title, message)] = refused
        assert (kind, title) == ("critical", "Cannot open the file") and message.startswith(str(path)), message
    elif window.pages.current == "sequences":
        assert window.sequences.path == path
    else:
        assert window.pages.current == "editor" and window.document.path == path
        assert window.diagnostics.messages()  # every problem is listed where the user looks
