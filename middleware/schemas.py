"""Message contract: what plainsight reads and writes (JSON on the wire, key = session_id).

These models are the only thing the transport (consumers/) and the core (middleware/) share.
Output models never carry raw PII: entity positions refer to the *output* text, and dead
letters carry a hash of the payload, never the payload.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr, field_validator

SCHEMA_VERSION = 1

#: Roles plainsight knows. Other role strings are accepted but treated as free text
#: (a dialogue export may put a student's *name* in the speaker field).
#: Speaker roles (case-folded). One list for the whole pipeline: a speaker field that is one of
#: these stays as it is in the outputs and is never a name to the name finder; anything else may
#: be a person's name and is replaced like one (and shown to the LLM as "participant").
KNOWN_ROLES = frozenset(
    {"student", "tutor", "teacher", "assistant", "system", "multiple students", "parent", "moderator", "user",
     "bot", "ai", "instructor", "learner", "human", "model", "agent", "ta", "mentor", "coach", "unknown",
     "students", "class", "speaker", "other", "observer"}
)


class InputTurn(BaseModel):
    """One chat turn on the input topic (`chat.turns` or `tutor.replies`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    session_id: StrictStr = Field(min_length=1, max_length=256)
    turn_id: StrictStr | StrictInt
    role: StrictStr = Field(min_length=1, max_length=64)
    text: StrictStr
    sent_at: StrictFloat | StrictInt = Field(description="epoch seconds")
    metadata: dict[str, Any] | None = None
    #: A tutor reply: the ``reply_token`` of the plainsight output it answers (``tutor.replies``).
    reply_token: StrictStr | None = Field(default=None, max_length=200)

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("text is empty")
        return v

    @field_validator("sent_at")
    @classmethod
    def _sane_time(cls, v: float) -> float:
        if not (0 <= v < 1e11):
            raise ValueError("sent_at is not epoch seconds")
        return v

    @property
    def turn_key(self) -> str:
        return str(self.turn_id)


class EntityOut(BaseModel):
    """A replaced entity, located in the *output* text. Never holds the raw value."""

    model_config = ConfigDict(frozen=True)

    start: int
    end: int
    label: str
    source: str


class OutputTurn(BaseModel):
    """A de-identified turn on `chat.turns.deid` / `chat.logs.deid` (or a re-identified reply)."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    turn_id: str | int
    role: str
    text: str
    entities: list[EntityOut] = Field(default_factory=list)
    degraded: bool = False
    mode: Literal["surrogate", "tag", "redact", "reidentified"] = "tag"
    sent_at: float
    metadata: dict[str, Any] | None = None
    #: Not part of the JSON payload (so that a replayed turn is byte-identical): the worker
    #: sends them as the Kafka headers ``plainsight-timings-ms`` and ``plainsight-processed-at``.
    processed_at: float = Field(default_factory=time.time, exclude=True)
    timings_ms: dict[str, float] = Field(default_factory=dict, exclude=True)
    #: Set by the worker on outputs to the tutor topic (``middleware.reply_token``); written as
    #: the payload's last field there and nowhere else (``consumers.producer.payload``).
    reply_token: str | None = Field(default=None, exclude=True)


DlqReason = Literal[
    "not_json",
    "invalid_utf8",
    "schema",
    "empty_text",
    "too_large",
    "not_object",
    "processing_error",
    "produce_rejected",
    "reply_token",
    "deadline",
    "erased_session",
    "forged_control",
]


class DeadLetter(BaseModel):
    """A record plainsight could not process. Carries a digest of the payload, never its text."""

    schema_version: int = SCHEMA_VERSION
    reason: DlqReason
    detail: str = Field(description="what was wrong, in terms of fields and types, never values")
    topic: str
    partition: int
    offset: int
    payload_sha256: str
    payload_bytes: int
    key_sha256: str | None = None
    failed_at: float = Field(default_factory=time.time)


def sha256_hex(data: bytes | None) -> str | None:
    if data is None:
        return None
    return hashlib.sha256(data).hexdigest()
