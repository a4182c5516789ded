"""The contract of a job's payload: a frozen dataclass per job kind, read from and written
to the JSON the store keeps (core.typed_json), refusing an unknown or missing field or a
value of the wrong type with a PayloadError that names the field and the kind."""

from __future__ import annotations

import typing
from typing import Any, TypeVar

from ..typed_json import read, write
from .errors import PayloadError

T = TypeVar("T")


class Payload:
    """A job kind's payload: a frozen dataclass with `kind` naming the job kind."""

    kind: typing.ClassVar[str]

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:
        return read(cls, data, f"the {cls.kind} payload", PayloadError)  # type: ignore[attr-defined]

    def to_dict(self) -> dict:
        return write(self)
