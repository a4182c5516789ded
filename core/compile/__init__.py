"""Build, check, measure and tune operators with TVM on the local CPU.

Every module here except `errors`, `warm`, `jobs` and `requests` imports TVM (and torch):
they run in worker processes only. `jobs.measure_job` is the entry point the
job system and `tessera measure` call, in a spawned process."""
