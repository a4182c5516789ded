"""Kernels on an RPC device: compile for its target here, run and time them there.

measure_operator takes a RemoteDevice (instead of this CPU) as a context: entering it asks
the tracker for a session at once, so a device that cannot be reached fails the job before
any tuning, and completes an LLVM target without "num-cores" with the server's thread
count (MetaSchedule needs it). Tuning measures through MetaSchedule's RPCRunner (one
session per trial, from the tracker). For the final measurement the kernel is exported as
a tar of object files (so no cross-linker is needed here: the server links it), uploaded,
loaded, checked and timed there. A TVM error on the session becomes a DeviceError when the
context exits: SessionLost (retryable) if the server is gone, so the job queue runs the
measurement again and the tracker hands the next attempt another server of the key."""

from __future__ import annotations

import contextlib
import json
import math
import time

import numpy as np
import tvm
from tvm import te
from tvm.s_tir import dlight
from tvm.s_tir import meta_schedule as ms
from tvm.support import utils
from tvm.support.tar import tar

from ..devices.device import Device
from ..devices.errors import DeviceError
from ..devices.session import Session, open_session
from ..ir.errors import TesseraError


class RemoteDevice:
    """An RPC device for measure_operator; use it as a context manager (see the module's doc)."""

    def __init__(self, device: Device):
        self.device = device
        self.target: tvm.target.Target | None = None
        self._session: Session | None = None

    def __enter__(self) -> RemoteDevice:
        self.target = device_target(self.device, open_session(self.device, self.device.wait))
        return self

    def __exit__(self, kind, exc, traceback) -> None:
        session, self._session = self._session, None
        if session is not None and isinstance(exc, RuntimeError) and not isinstance(exc, TesseraError):
            raise session.translate(exc, "running and timing the kernel") from None

    @property
    def rpc_config(self) -> ms.runner.RPCConfig:
        """Where MetaSchedule's RPCRunner measures the trials."""
        return ms.runner.RPCConfig(
            tracker_host=self.device.tracker_host,
            tracker_port=self.device.tracker_port,
            tracker_key=self.device.key,
            session_timeout_sec=math.ceil(self.device.session_timeout),
        )

    def load(self, executable, args: list) -> tuple:
        """Upload a kernel built for self.target to a free server (the one already in use, when
        several kernels are compared there), and copy its arguments (tensors here) there: (the
        kernel's module there, the server's device, the arguments there)."""
        if self._session is None:
            self._session = open_session(self.device, self.device.wait)
        session = self._session
        module, dev = upload(session, executable, self.target), session.device_for(self.target)
        try:
            return module, dev, [tvm.runtime.tensor(arg.numpy(), dev) for arg in args]
        except RuntimeError as exc:
            raise session.translate(exc, "copying the inputs") from None


def on_device(device: Device):
    """The context measure_operator runs in: a RemoteDevice, or None (nothing) for the local CPU."""
    return contextlib.nullcontext() if device.is_local else RemoteDevice(device)


def device_target(device: Device, session: Session) -> tvm.target.Target:
    """The device's TVM target; an LLVM CPU target without "num-cores" gets the server's thread count."""
    config = dict(device.target)
    try:
        if config["kind"] == "llvm" and "num-cores" not in config:
            config["num-cores"] = session.num_threads()
    except RuntimeError as exc:
        raise session.translate(exc, "asking for its thread count") from None
    try:
        return tvm.target.Target(config)
    except (ValueError, RuntimeError, TypeError) as exc:
        message = [line for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        raise DeviceError(
            f"device {device.name}: TVM does not accept its target "
            f"{json.dumps(device.target, sort_keys=True)}: {message[-1].strip()}"
        ) from None


def default_schedule(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.IRModule:
    """An untuned kernel as it can run on the target: as lowered for a CPU; for a GPU, with
    dlight's fallback schedule binding its loops to blocks and threads (TVM refuses unbound ones)."""
    if "gpu" not in target.keys:
        return mod
    with target:
        return dlight.ApplyDefaultSchedule(dlight.gpu.Fallback())(mod)


def upload(session: Session, executable, target: tvm.target.Target):
    """Export a built kernel as a tar of objects, upload it, have the server link and load it."""
    folder = utils.tempdir()
    path = folder.relpath("kernel.tar")
    executable.export_library(path, fcompile=tar)
    try:
        session.remote.upload(path)
        return session.remote.load_module("kernel.tar")
    except RuntimeError as exc:
        raise session.translate(exc, "uploading the kernel") from None


def round_trip(device: Device, timeout: float) -> float:
    """Milliseconds for a tiny kernel's round trip to the device: a session from the tracker,
    upload, link, run, result back (the build here is not counted). Its output is checked."""
    n = 256
    a = te.placeholder((n,), "float32", name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0 + 1.0, name="b")
    mod = tvm.IRModule({"main": te.create_prim_func([a, b])})
    data = np.arange(n, dtype="float32")
    started = time.perf_counter()
    session = open_session(device, timeout)
    opened = time.perf_counter()
    target = device_target(device, session)
    executable = tvm.compile(default_schedule(mod, target), target=target)
    sent = time.perf_counter()
    module = upload(session, executable, target)
    try:
        dev = session.device_for(target)
        out = tvm.runtime.empty((n,), "float32", dev)
        module["main"](tvm.runtime.tensor(data, dev), out)
        result = out.numpy()
    except RuntimeError as exc:
        raise session.translate(exc, "running the check kernel") from None
    finished = time.perf_counter()
    if not np.allclose(result, data * 2 + 1):
        raise DeviceError(f"device {device.name}: the check kernel computed wrong numbers on server {session.server}")
    return (opened - started + finished - sent) * 1e3
