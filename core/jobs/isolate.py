"""Run one function in a fresh spawned process and return its JSON result.

Used where the calling process must stay small and safe: `tessera measure`
never imports TVM itself, and a segfault inside TVM ends only the child.
Arguments, progress and the result cross the pipe as JSON, never pickles (a typed result,
core.typed_json, as its JSON).
"""

from __future__ import annotations

import json
import multiprocessing
import time
import traceback
from collections.abc import Callable

from ..typed_json import JsonRecord
from .code_paths import resolve
from .errors import WorkerCrashed, WorkerError
from .processes import describe_exit, end_group, enter_own_group, kill_tree

ProgressCallback = Callable[[float, str], None]


def call_in_subprocess(
    target: str, kwargs: dict, on_progress: ProgressCallback | None = None, timeout: float | None = None
):
    """Call `target` ("package.module:function") with `kwargs` in a spawned process.

    If `on_progress` is given, the function receives one more keyword argument,
    `progress(fraction: float, message: str)`, whose calls arrive here as
    `on_progress(fraction, message)` while the function runs.
    Returns the function's (JSON-able) return value. Raises WorkerError if the
    function raised (its message kept), WorkerCrashed if the process died
    (e.g. "... was killed by signal SIGSEGV") or ran longer than `timeout` seconds.
    """
    try:
        arguments = json.dumps(kwargs)
    except (TypeError, ValueError) as exc:
        raise WorkerError(f"arguments for {target} are not JSON: {exc}", type(exc).__name__) from None
    mp = multiprocessing.get_context("spawn")
    receiver, sender = mp.Pipe(duplex=False)
    process = mp.Process(
        target=_child, args=(target, arguments, sender, on_progress is not None), name=f"tessera: {target}"
    )
    process.start()
    sender.close()  # the child holds the only writing end, so its death reads as EOF here
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                kill_tree(process)
                raise WorkerCrashed(
                    f"process {process.pid} running {target} took longer than {timeout:g} s and was killed",
                    process.exitcode,
                )
            if not receiver.poll(remaining):
                continue
            try:
                message = json.loads(receiver.recv_bytes())
            except EOFError:
                process.join()
                raise WorkerCrashed(
                    f"process {process.pid} running {target} {describe_exit(process.exitcode)}", process.exitcode
                ) from None
            if message["kind"] == "progress":
                if on_progress is not None:  # sent only when it was given
                    on_progress(message["fraction"], message["message"])
            elif message["kind"] == "result":
                return message["value"]
            else:
                detail = ": ".join(filter(None, (message["type"], message["message"])))
                raise WorkerError(f"{target} failed: {detail}", message["type"], message["traceback"])
    finally:
        receiver.close()
        process.join(timeout=1)  # it exits right after answering; if not (interrupted), kill it
        kill_tree(process)


def _child(target: str, arguments: str, sender, with_progress: bool) -> None:
    """Entry point of the spawned process: one call, one JSON answer on the pipe."""
    enter_own_group()

    def send(kind: str, **fields) -> None:
        try:
            sender.send_bytes(json.dumps({"kind": kind, **fields}).encode())
        except BrokenPipeError:  # the caller is gone (killed): no one to answer, so end with all this started
            end_group()

    try:
        kwargs = json.loads(arguments)
        if with_progress:
            kwargs["progress"] = lambda fraction, message="": send(
                "progress", fraction=float(fraction), message=str(message)
            )
        value = resolve(target)(**kwargs)
        if isinstance(value, JsonRecord):  # a typed result (a measurement, a search's) goes as its JSON
            value = value.to_dict()
    except Exception as exc:  # every failure goes back as a message; the caller raises it
        send("error", type=type(exc).__name__, message=str(exc), traceback=traceback.format_exc())
        return
    try:
        answer = json.dumps({"kind": "result", "value": value})
    except (TypeError, ValueError) as exc:
        send("error", type=type(exc).__name__, message=f"its result is not JSON: {exc}", traceback="")
        return
    sender.send_bytes(answer.encode())
