"""Where the results store lives unless a caller says otherwise."""

from __future__ import annotations

import os
from pathlib import Path


def default_store_path() -> Path:
    """$TESSERA_STORE if set, else $XDG_DATA_HOME/tessera/results.db (~/.local/share/tessera/results.db)."""
    override = os.environ.get("TESSERA_STORE")
    if override:
        return Path(override).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data_home).expanduser() / "tessera" / "results.db"
