"""A build that will take minutes says so before it starts, and Ctrl-C cancels it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

from core.compile.build_time import SLOW_BUILD_NODES, slow_build_note
from core.ir.serialize import graph_from_document
from tests.support import ROOT, relu_chain_document


def test_a_large_operator_is_said_to_build_for_minutes_and_ctrl_c_ends_it(tmp_path):
    path = tmp_path / "chain.json"
    path.write_text(json.dumps(relu_chain_document(1000)))
    run = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "measure", str(path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        first = run.stderr.readline()
        assert first == (
            "note: chain1000 has 1,000 nodes: building its kernel with TVM will take minutes, "
            "the longer the more nodes; Ctrl-C cancels it\n"
        )
        assert run.stderr.readline().startswith("[")  # the build's process is at work
        run.send_signal(signal.SIGINT)
        assert run.wait(timeout=60) == 130
    finally:
        run.kill()
        run.wait()
    assert "interrupted" in run.stderr.read()


def _as_from_a_terminal() -> None:
    """Ctrl-C reaches a command started from a terminal. A process that ignores SIGINT passes
    that on to what it starts (as a shell does to background jobs, so that Ctrl-C leaves them
    running), and the test's process sometimes ignores it (set by something an earlier test in
    the same pytest worker ran), so the command is started with SIGINT's default disposition."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_small_operator_builds_without_a_note():
    small = graph_from_document(relu_chain_document(SLOW_BUILD_NODES - 1))
    assert slow_build_note(small, "") is None
    assert slow_build_note(graph_from_document(relu_chain_document(SLOW_BUILD_NODES)), "") is not None
