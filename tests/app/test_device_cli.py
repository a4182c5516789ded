"""`tessera device add|list|default|remove` on the store's device list."""

from __future__ import annotations

import json

from app.cli import main

TARGET = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mcpu": "cortex-a72"}


def test_cli_add_list_default_remove(store_path, capsys):
    store = ["--store", str(store_path)]
    assert (
        main(
            [
                "device",
                "add",
                "rasp4",
                "--tracker",
                "10.0.0.5:9190",
                "--key",
                "rasp4",
                "--target",
                json.dumps(TARGET),
                "--wait",
                "5",
                *store,
            ]
        )
        == 0
    )
    assert "added device rasp4: key rasp4 at tracker 10.0.0.5:9190" in capsys.readouterr().out
    assert main(["device", "default", "rasp4", *store]) == 0
    assert "default device: rasp4" in capsys.readouterr().out
    assert main(["device", "list", *store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "default", "kind", "tracker", "key", "target", "last", "check"]
    assert (
        lines[1].split()[:2] == ["local", "local"]
        and lines[2].split()[:5] == ["rasp4", "*", "rpc", "10.0.0.5:9190", "rasp4"]
        and "never checked" in lines[2]
    )
    assert main(["device", "list", "--json", *store]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[1]["target"] == TARGET and listed[1]["default"] is True and listed[1]["wait"] == 5.0
    assert main(["device", "add", "x", "--tracker", "nowhere", "--key", "k", *store]) == 1
    assert "tessera device: --tracker must be HOST:PORT" in capsys.readouterr().err
    assert main(["device", "check", "rasp5", *store]) == 1
    assert "there is no device called 'rasp5'" in capsys.readouterr().err
    assert main(["device", "remove", "rasp4", *store]) == 0
    assert "Default device: local" in capsys.readouterr().out
    assert main(["device", "default", *store]) == 0
    assert "default device: local (this machine's CPU)" in capsys.readouterr().out
