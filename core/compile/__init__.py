"""Build, check, measure and tune operators with TVM on the local CPU.

Every module here except `errors`, `warm`, `algorithms`, `handlers`, `kinds`, `payloads` and
`requests` imports TVM (and torch): they run in worker processes only. The job handlers
(`handlers.measure_job`, `transfer_job`) are the entry points the job system and `tessera
measure` call, in a spawned process."""
