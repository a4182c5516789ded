"""Build, check, measure and tune operators with TVM, here or on RPC devices.

The parts, each in its own module: the algorithm registry (`algorithms`, no TVM), the
request's `settings`, the `workload` (the operator with its torch reference), the `kernels`
behind one protocol (`kernels.protocol`: TVM's default lowering, GSPC), the `place` a kernel
runs (this machine or an RPC device), `timing` and the correctness check, and `measure` /
`transfer_operator`, short functions over them returning a core.store.measurement.Measurement.
The job handlers (`handlers.measure_job`, `transfer_job`) sit on top. Every module imports
TVM (worker processes only) except `algorithms`, `errors`, `kinds`, `payloads`, `requests`,
`settings`, `health` and `warm`."""
