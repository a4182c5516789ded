"""Tuning runs of the deploy benchmark kept in a folder, so a run cut short after hours resumes.

One run tunes several networks in turn into the same tuning databases (the original's kernels
tuned once, for the first). Each finished network's result (core.networks.results.EndToEnd) is
written beside a copy of the databases as that network left them. A network cut short leaves
kernels with part of their budget, which network tuning would take as they are (a kernel with
a record is reused), so a resumed run starts its next network from that copy: every network is
tuned in one go on the state the networks before it left, as in a run that was never stopped.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from core.atomic import write_text_atomically
from core.networks.results import EndToEnd


class KeptRun:
    """One tuning run in `folder`: `tuning` is the tuning root the networks use; results.json
    names the copy the run resumes from (tuning.after-<network>), written only once complete."""

    def __init__(self, folder: Path, configuration: dict):
        self.folder, self.tuning = folder, folder / "tuning"
        self._results = folder / "results.json"
        folder.mkdir(parents=True, exist_ok=True)
        self._configuration = configuration
        self._finished: dict[str, EndToEnd] = {}
        self._resume_from: str | None = None
        if self._results.exists():
            kept, self._finished, self._resume_from = _read(self._results)
            if kept != configuration:
                raise SystemExit(
                    f"{folder} holds a run of {kept}, not of {configuration}: give --deploy-dir another folder"
                )

    def result(self, kind: str) -> EndToEnd | None:
        """The network's result if this run finished it."""
        return self._finished.get(kind)

    def restore(self) -> None:
        """The tuning databases as the last finished network left them (none before the first)."""
        shutil.rmtree(self.tuning, ignore_errors=True)
        if self._resume_from is not None:
            shutil.copytree(self.folder / self._resume_from, self.tuning)

    def finish(self, kind: str, found: EndToEnd) -> None:
        """Keep the network's result and a copy of the databases as it left them; the copy is
        named in results.json only once it is complete, and the older one then goes."""
        older, copy = self._resume_from, f"tuning.after-{kind}"
        shutil.rmtree(self.folder / copy, ignore_errors=True)
        shutil.copytree(self.tuning, self.folder / copy)
        self._finished[kind], self._resume_from = found, copy
        kept = {
            "configuration": self._configuration,
            "networks": {name: result.to_dict() for name, result in self._finished.items()},
            "resume_from": copy,
        }
        write_text_atomically(self._results, json.dumps(kept, indent=1))
        if older is not None and older != copy:
            shutil.rmtree(self.folder / older, ignore_errors=True)


def _read(path: Path) -> tuple[dict, dict[str, EndToEnd], str | None]:
    """results.json's configuration, its networks' results and the copy it resumes from, or
    SystemExit saying what in the file is wrong."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(kept, dict) or set(kept) != {"configuration", "networks", "resume_from"}:
            raise ValueError("not an object of configuration, networks and resume_from")
        if not isinstance(kept["networks"], dict) or not isinstance(kept["resume_from"], str | None):
            raise ValueError("networks must be an object and resume_from a folder name or null")
        if kept["resume_from"] is not None and not (path.parent / kept["resume_from"]).is_dir():
            raise ValueError(f"resume_from names {kept['resume_from']}, which is not in the folder")
        finished = {kind: EndToEnd.from_dict(found) for kind, found in kept["networks"].items()}
        return kept["configuration"], finished, kept["resume_from"]
    except (OSError, UnicodeDecodeError, ValueError, EndToEnd.error) as exc:
        raise SystemExit(
            f"{path} cannot be resumed from ({exc}): move its folder away to tune that run again from the start"
        ) from None
