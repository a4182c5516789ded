"""Where a kernel runs: this machine, or an RPC device behind a tracker. One small object
answers everything measuring, tuning and transfer-tuning ask about it: the TVM target to
build for, the cores it has, where MetaSchedule times its trials, how a built kernel is
loaded there with its arguments, and whether PyTorch is timed beside it (only here: this
CPU's torch time would say nothing about another device).

Both places are context managers (`place_for`). Entering an RPC device asks its tracker for
a session at once, so a device that cannot be reached fails the job before any tuning, and
completes an LLVM target without "num-cores" with the server's thread count (MetaSchedule
needs it). The measurement's kernels share one session, opened when the first is loaded; a
tuning trial has a session of its own (a session may last only the device's session
timeout). A TVM error on a session becomes a DeviceError: SessionLost (retryable) if the
server is gone, so the job queue runs the measurement again and the tracker hands the next
attempt another server of the key. Imports TVM: worker processes only."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import tvm
from tvm.s_tir import meta_schedule as ms

from core.errors import TesseraError

from ..devices.device import Device
from ..devices.session import Session, open_session
from .remote import device_target, upload
from .target import local_target, use_threads
from .timing import TRIAL


@dataclass
class Loaded:
    """A built kernel where it runs: its module, that device, its arguments there (output last)."""

    module: Any
    device: Any
    args: list

    def run(self) -> np.ndarray:
        """Call the kernel once; its output, copied here."""
        self.module["main"](*self.args)
        return self.args[-1].numpy()


class Place(Protocol):
    """Where kernels are built for, loaded, run and timed (see the module's doc)."""

    times_torch: bool  # PyTorch's module is timed beside the kernel (on this machine only)

    @property
    def target(self) -> tvm.target.Target:
        """What kernels are built for."""
        ...

    @property
    def threads(self) -> int | None:
        """The cores a kernel runs on (the target's "num-cores"; None where it has none)."""
        ...

    def runner(self) -> ms.runner.Runner:
        """Where MetaSchedule times tuning trials."""
        ...

    def load(self, executable: Any, args: list) -> Loaded:
        """A kernel built for `target` loaded with copies of `args` (host tensors), in the
        measurement's session."""
        ...

    def trial(self, executable: Any, args: list) -> AbstractContextManager[Loaded]:
        """Like `load`, for one tuning trial: in a session of its own, dropped on leaving."""
        ...


class ThisMachine:
    """This CPU, for kernels built for `target` (core.compile.target.local_target)."""

    times_torch = True

    def __init__(self, target: tvm.target.Target):
        self.target = target

    @property
    def threads(self) -> int | None:
        return _cores(self.target)

    def __enter__(self) -> ThisMachine:
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        return None

    def runner(self) -> ms.runner.Runner:
        return ms.runner.LocalRunner(timeout_sec=60, evaluator_config=trial_evaluator())

    def load(self, executable: Any, args: list) -> Loaded:
        return Loaded(executable.mod, tvm.cpu(), args)

    @contextlib.contextmanager
    def trial(self, executable: Any, args: list) -> Iterator[Loaded]:
        yield self.load(executable, args)


class RpcDevice:
    """An RPC device (core.devices); use it as a context manager (see the module's doc)."""

    times_torch = False

    def __init__(self, device: Device):
        self.device = device
        self._target: tvm.target.Target | None = None
        self._session: Session | None = None

    def __enter__(self) -> RpcDevice:
        self._target = device_target(self.device, open_session(self.device, self.device.wait))
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        session, self._session = self._session, None
        if session is not None and isinstance(exc, RuntimeError) and not isinstance(exc, TesseraError):
            raise session.translate(exc, "running and timing the kernel") from None

    @property
    def target(self) -> tvm.target.Target:
        if self._target is None:
            raise RuntimeError(f"device {self.device.name} is used outside its `with` block")
        return self._target

    @property
    def threads(self) -> int | None:
        return _cores(self.target)

    def runner(self) -> ms.runner.Runner:
        """MetaSchedule's RPCRunner: one session per trial, from the tracker."""
        config = ms.runner.RPCConfig(
            tracker_host=self.device.tracker_host,
            tracker_port=self.device.tracker_port,
            tracker_key=self.device.key,
            session_timeout_sec=math.ceil(self.device.session_timeout),
        )
        return ms.runner.RPCRunner(rpc_config=config, evaluator_config=trial_evaluator())

    def load(self, executable: Any, args: list) -> Loaded:
        """Upload to a free server (the one already in use, when several kernels are compared)."""
        if self._session is None:
            self._session = open_session(self.device, self.device.wait)
        return self._upload(self._session, executable, args)

    @contextlib.contextmanager
    def trial(self, executable: Any, args: list) -> Iterator[Loaded]:
        session = open_session(self.device, self.device.wait)
        loaded = self._upload(session, executable, args)
        try:
            yield loaded
        except RuntimeError as exc:
            raise session.translate(exc, "timing a tuning trial") from None

    def _upload(self, session: Session, executable: Any, args: list) -> Loaded:
        """The kernel linked and loaded by the server, its arguments copied there."""
        module, dev = upload(session, executable, self.target), session.device_for(self.target)
        try:
            return Loaded(module, dev, [tvm.runtime.tensor(arg.numpy(), dev) for arg in args])
        except RuntimeError as exc:
            raise session.translate(exc, "copying the inputs") from None


def trial_evaluator() -> ms.runner.EvaluatorConfig:
    """How a trial is timed, wherever it runs (core.compile.timing.TRIAL)."""
    return ms.runner.EvaluatorConfig(**TRIAL)


def place_for(device: Device, threads: int) -> ThisMachine | RpcDevice:
    """The place a job's kernels run: this machine with `threads` cores (TVM and torch both
    set to use them), or the RPC device."""
    if not device.is_local:
        return RpcDevice(device)
    use_threads(threads)
    return ThisMachine(local_target(threads))


def _cores(target: tvm.target.Target) -> int | None:
    cores = target.attrs.get("num-cores")
    return int(cores) if cores is not None else None
