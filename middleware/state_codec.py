"""Serialising a session's state (detector memory + replacement mapping) for storage.

The plaintext is JSON; it holds real values, so it only ever leaves the process sealed by the
cipher (AES-GCM, key id in the envelope, session id as associated data). Transport-agnostic:
the Kafka state store (consumers/state_store.py) and tests use it alike.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import typing
from typing import Any, Protocol

from .sessions import SessionState

FORMAT = 1

#: ``SessionState`` fields stored under the document's "extra" key (JSON-serialisable values;
#: the key name is kept so that states stored by earlier versions stay readable).
PERSISTED_EXTRA = ("journal", "llm_context")


#: Detector-memory fields that change every turn without changing what later turns produce.
_PER_TURN_MEMORY = frozenset({"turns", "doubts", "doubts_turn", "keeps", "keeps_turn"})


class Cipher(Protocol):
    def encrypt(self, plaintext: bytes, session_id: str) -> bytes: ...

    def decrypt(self, blob: bytes, session_id: str) -> bytes: ...


class StateDecodeError(ValueError):
    """A stored state that can't be read (wrong key, tampered, unknown format). Never echoes data."""


def _plain(obj: Any) -> Any:
    """Generic encoding of a dataclass of plain types (sets become sorted lists)."""
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if not f.name.startswith("_")}
    if isinstance(obj, (set, frozenset)):
        return sorted(_plain(x) for x in obj)
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(x) for x in obj]
    return obj


def _restore(cls: type, data: Any) -> Any:
    """Inverse of :func:`_plain` for dataclasses whose set-typed fields are annotated as sets."""
    if hasattr(cls, "from_dict"):
        return cls.from_dict(data)
    if not dataclasses.is_dataclass(cls):
        return data
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data or f.name.startswith("_"):
            continue
        v = data[f.name]
        origin = typing.get_origin(hints.get(f.name)) or hints.get(f.name)
        if origin in (set, frozenset):
            v = set(v)
        elif origin is tuple:
            v = tuple(v)
        kwargs[f.name] = v
    return cls(**kwargs)


class SessionCodec:
    """``encode(state) -> sealed bytes`` / ``decode(session_id, bytes) -> SessionState``."""

    def __init__(self, pipeline, cipher: Cipher) -> None:
        self.pipeline = pipeline
        self.cipher = cipher

    def to_plaintext(self, state: SessionState) -> bytes:
        rs = state.replace_state
        if hasattr(rs, "to_bytes"):
            replace = {"b": base64.b64encode(rs.to_bytes()).decode("ascii")}
        else:
            replace = {"d": _plain(rs)}
        doc = {
            "f": FORMAT,
            "sid": state.session_id,
            "turns": state.turns,
            "replace": replace,
            "memory": _plain(state.detect_memory),
            # transport/stage bookkeeping that must survive a move to another worker: outputs of
            # not-yet-committed turns (for identical replays) and the LLM's sliding context —
            # both de-identified text only
            "extra": {k: getattr(state, k) for k in PERSISTED_EXTRA if getattr(state, k)},
        }
        return json.dumps(doc, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")

    def from_plaintext(self, session_id: str, raw: bytes) -> SessionState:
        doc = json.loads(raw)
        if doc.get("f") != FORMAT or doc.get("sid") != session_id:
            raise StateDecodeError("unknown state format or session mismatch")
        fresh = self.pipeline.new_session(session_id)
        rcls = type(fresh.replace_state)
        rep = doc["replace"]
        if "b" in rep and hasattr(rcls, "from_bytes"):
            fresh.replace_state = rcls.from_bytes(base64.b64decode(rep["b"]))
        elif "d" in rep:
            fresh.replace_state = _restore(rcls, rep["d"])
        mem = doc.get("memory")
        if mem is not None and fresh.detect_memory is not None:
            fresh.detect_memory = _restore(type(fresh.detect_memory), mem)
        fresh.turns = int(doc.get("turns", 0))
        extra = doc.get("extra") or {}
        if extra.get("journal"):
            fresh.journal = dict(extra["journal"])
        if extra.get("llm_context"):
            fresh.llm_context = list(extra["llm_context"])
        return fresh

    def fingerprint(self, state: SessionState) -> bytes:
        """A digest of what a replay depends on (mapping, detector memory, LLM context) — not the
        turn counter or the journal, which change every turn."""
        import hashlib

        rs = state.replace_state
        rep = rs.to_bytes() if hasattr(rs, "to_bytes") else json.dumps(_plain(rs), sort_keys=True).encode()
        plain = _plain(state.detect_memory)
        if isinstance(plain, dict):  # per-turn bookkeeping that no later turn's output depends on
            plain = {k: v for k, v in plain.items() if k not in _PER_TURN_MEMORY}
        mem = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        ctx = json.dumps(state.llm_context, ensure_ascii=False)
        return hashlib.blake2b(rep + b"\x00" + mem.encode() + b"\x00" + ctx.encode(), digest_size=16).digest()

    def encode(self, state: SessionState) -> bytes:
        return self.cipher.encrypt(self.to_plaintext(state), state.session_id)

    def decode(self, session_id: str, blob: bytes) -> SessionState:
        try:
            raw = self.cipher.decrypt(blob, session_id)
        except Exception as exc:
            raise StateDecodeError(f"cannot decrypt stored state ({type(exc).__name__})") from None
        try:
            return self.from_plaintext(session_id, raw)
        except StateDecodeError:
            raise
        except Exception as exc:
            raise StateDecodeError(f"cannot decode stored state ({type(exc).__name__})") from None
