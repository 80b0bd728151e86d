"""Turning raw bytes from a topic into an :class:`InputTurn`, or a reason it can't be one.

Error details name fields and error types only; they never quote the payload, so they are
safe to log and to put in the dead-letter topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from .schemas import InputTurn


@dataclass(frozen=True, slots=True)
class ParseFailure:
    reason: str  # one of schemas.DlqReason
    detail: str


def _describe_validation_error(exc: ValidationError) -> tuple[str, str]:
    parts = []
    reason = "schema"
    for err in exc.errors(include_input=False, include_url=False):
        loc = ".".join(str(p) for p in err.get("loc", ())) or "<root>"
        etype = err.get("type", "invalid")
        if loc == "text" and etype == "value_error":
            reason = "empty_text" if len(exc.errors()) == 1 else reason
        parts.append(f"{loc}:{etype}")
    return reason, ", ".join(parts[:8])


def _has_lone_surrogate(obj: object) -> bool:
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (RecursionError, ValueError):
        return False
    return False


def parse_turn(raw: bytes | None, max_bytes: int) -> InputTurn | ParseFailure:
    if raw is None:
        return ParseFailure("schema", "null payload (tombstone)")
    if len(raw) > max_bytes:
        return ParseFailure("too_large", f"payload is {len(raw)} bytes, limit {max_bytes}")
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ParseFailure("invalid_utf8", f"invalid UTF-8 at byte {exc.start}")
    try:
        obj = json.loads(decoded)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nesting too deep"
        pos = f" at char {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
        return ParseFailure("not_json", f"{msg}{pos}")
    if ("\\ud" in decoded or "\\uD" in decoded) and _has_lone_surrogate(obj):
        return ParseFailure("invalid_utf8", "JSON escapes encode a lone UTF-16 surrogate")
    if not isinstance(obj, dict):
        return ParseFailure("not_object", f"top-level JSON is {type(obj).__name__}, expected object")
    try:
        return InputTurn.model_validate(obj)
    except ValidationError as exc:
        reason, detail = _describe_validation_error(exc)
        return ParseFailure(reason, detail)
    except RecursionError:
        return ParseFailure("schema", "metadata nesting too deep")
