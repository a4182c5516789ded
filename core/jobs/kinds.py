"""Job kinds and the handler that runs each, as 'module:function' paths.

Workers import a handler only when they run its first job, so heavy imports
(TVM, torch) stay out of the GUI and the supervisor. A handler is called as
handler(payload: dict, ctx: JobContext) -> dict.
"""
HANDLERS: dict[str, str] = {
    "measure": "core.compile.jobs:measure_job",
    "fisher": "core.train.jobs:fisher_job",
    "train": "core.train.jobs:train_job",
    "e2e": "core.train.jobs:e2e_job",
    "search": "core.search.driver:search_job",
}
