"""The contract of a job: a frozen dataclass per job kind for its payload (what it is asked)
and for its result (what it found), read from and written to the JSON the store keeps
(core.typed_json), refusing an unknown or missing field or a value of the wrong type with a
message naming the field and the kind: a PayloadError for a payload, an InvalidResult for a
result. Each kind's package declares both (core.jobs.registry)."""

from __future__ import annotations

import typing

from ..store import InvalidResult
from ..typed_json import JsonRecord
from .errors import PayloadError


class _OfKind(JsonRecord):
    """A record of one job kind, named in messages as 'the <kind> <noun>'."""

    kind: typing.ClassVar[str]
    noun: typing.ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            cls.what = f"the {cls.kind} {cls.noun}"


class Payload(_OfKind):
    """A job kind's payload: a frozen dataclass with `kind` naming the job kind."""

    noun = "payload"
    error = PayloadError


class Result(_OfKind):
    """A job kind's result, as its handler returns it and the store keeps it on the job row."""

    noun = "result"
    error = InvalidResult
