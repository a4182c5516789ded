"""Job kinds and the handler that runs each, as 'module:function' paths, and which kinds
may also run as tasks on a cluster (core.jobs.ray_runner) with what one job needs there.

Workers import a handler only when they run its first job, so heavy imports
(TVM, torch) stay out of the GUI and the supervisor. A handler is called as
handler(payload: dict, ctx: JobContext) -> dict.
"""

from __future__ import annotations

from dataclasses import dataclass

HANDLERS: dict[str, str] = {
    "measure": "core.compile.jobs:measure_job",
    "transfer": "core.compile.jobs:transfer_job",
    "fisher": "core.train.jobs:fisher_job",
    "train": "core.train.jobs:train_job",
    "e2e": "core.train.jobs:e2e_job",
    "search": "core.search.driver:search_job",
}


@dataclass(frozen=True)
class TaskResources:
    """What one job of a kind takes on a cluster node: CPUs, and a GPU if it can use one
    (asked for only where the cluster has GPUs; elsewhere it runs on CPUs)."""

    cpus: float = 1.0
    gpu: bool = False


#: Kinds a cluster may run. The others stay in local workers: "measure" and "e2e" time
#: kernels on this machine's or RPC devices, "search" writes to the store as it goes.
CLUSTER_KINDS: dict[str, TaskResources] = {
    "fisher": TaskResources(),
    "train": TaskResources(gpu=True),
}
