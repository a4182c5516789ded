"""Executors: how the jobs of some kinds run. An executor names the runner processes a
Supervisor spawns, watches and restarts; each runner claims jobs from the store and is
the one process writing their progress and outcome there.

- LocalPool (the default): worker processes on this machine, each running one job at a time.
- RayExecutor: one runner process that sends jobs to a Ray cluster as tasks, or to a
  local Ray instance it starts for the session, and writes what the tasks return.

Nothing here imports Ray: the Ray runner's module is named by path and imported by the
runner process only, so the GUI and the supervisor stay free of it.
"""

from __future__ import annotations

import ipaddress
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .code_paths import resolve
from .errors import ExecutorError
from .registry import TaskResources, cluster_kinds
from .worker import worker_main

EXECUTORS = ("local", "ray")
RAY_RUNNER = "core.jobs.ray_runner:ray_runner_main"


@dataclass(frozen=True)
class Runner:
    """What every runner process is given. `stop` is a multiprocessing Event; `current` a
    shared integer, the id of the job a local worker runs (0 when idle); `notes` the sending
    end of a pipe for sentences the supervisor reports (a connection made or refused)."""

    store_path: str
    handlers: dict[str, str]
    stop: object
    current: object
    heartbeat_interval: float
    cancel_grace: float
    notes: object


class Executor(ABC):
    """Runs the jobs of `kinds(handlers)` through `processes` runner processes."""

    processes: int

    @abstractmethod
    def kinds(self, handlers: Mapping[str, str]) -> dict[str, str]:
        """The handlers (kind -> 'module:function') of the kinds this executor takes."""

    @abstractmethod
    def runner(self, given: Runner) -> tuple[Callable, tuple]:
        """Entry point of a runner process and its arguments (picklable for spawn)."""

    @abstractmethod
    def describe(self, kinds: Mapping[str, str]) -> str:
        """'2 local worker processes', for people."""


@dataclass(frozen=True)
class LocalPool(Executor):
    """`processes` worker processes on this machine, each running one job at a time itself."""

    processes: int

    def kinds(self, handlers: Mapping[str, str]) -> dict[str, str]:
        return dict(handlers)

    def runner(self, given: Runner) -> tuple[Callable, tuple]:
        return worker_main, (given.store_path, given.handlers, given.stop, given.current, given.heartbeat_interval)

    def describe(self, kinds: Mapping[str, str]) -> str:
        return f"{self.processes} local worker process{'es' if self.processes != 1 else ''} for {', '.join(kinds)}"


@dataclass(frozen=True)
class RayExecutor(Executor):
    """Jobs of the kinds in `resources` run as Ray tasks, each taking those resources.

    `address` ("HOST:PORT" of a running cluster's head) or None: a local Ray instance with
    `cpus` CPUs, started by the runner for the session and stopped with it. One runner
    process claims the jobs, sends them and writes what they return; tasks never open
    the store.
    """

    address: str | None = None
    cpus: int = 2
    resources: Mapping[str, TaskResources] = field(default_factory=cluster_kinds)
    processes: int = field(default=1, init=False)

    def __post_init__(self):
        if self.address is not None:
            host, _, port = self.address.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ExecutorError(f"Ray address {self.address!r} is not HOST:PORT, e.g. 10.0.0.5:6379")
        if isinstance(self.cpus, bool) or not isinstance(self.cpus, int) or self.cpus < 1:
            raise ExecutorError(f"a local Ray instance needs at least 1 CPU, got {self.cpus!r}")

    @property
    def where(self) -> str:
        return f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"

    @property
    def loopback(self) -> bool:
        """A session instance, or a cluster on this machine's loopback address."""
        if self.address is None:
            return True
        host = self.address.rpartition(":")[0].strip("[]")
        try:
            return host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def kinds(self, handlers: Mapping[str, str]) -> dict[str, str]:
        return {kind: target for kind, target in handlers.items() if kind in self.resources}

    def runner(self, given: Runner) -> tuple[Callable, tuple]:
        return run_by_path, (RAY_RUNNER, given, self)

    def describe(self, kinds: Mapping[str, str]) -> str:
        size = "" if self.address else f" ({self.cpus} CPUs)"
        return f"{self.where}{size} for {', '.join(kinds)}"


def run_by_path(target: str, *args) -> None:
    """Entry point of a runner whose code the parent must not import (Ray's)."""
    resolve(target)(*args)


def choose_executor(name: str, address: str | None = None, cpus: int = 2) -> RayExecutor | None:
    """The executor a setting names: 'local' -> None (local workers run everything),
    'ray' -> a RayExecutor for `address` (None: a local Ray instance for the session)."""
    if name == "local":
        if address:
            raise ExecutorError(f"a Ray address ({address}) was given, but the executor is 'local'")
        return None
    if name == "ray":
        return RayExecutor(address or None, cpus)
    raise ExecutorError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
