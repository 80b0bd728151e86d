"""Serialising a session's state (detector memory + replacement mapping) for storage.

The plaintext is JSON; it holds real values, so it only ever leaves the process sealed by the
cipher (AES-GCM, key id in the envelope, session id as associated data). Transport-agnostic:
the Kafka state store (consumers/state_store.py) and tests use it alike.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Protocol

from .codable import BinaryStateCodable, NotCodableError, require_codable
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


def _replace_doc(rs: Any) -> dict:
    """The document's "replace" entry: ``{"b": base64 bytes}`` for a part with its own byte
    encoding, else ``{"d": plain data}``."""
    cls = require_codable(type(rs), "replace state")
    if issubclass(cls, BinaryStateCodable):
        return {"b": base64.b64encode(rs.to_bytes()).decode("ascii")}
    return {"d": rs.to_dict()}


def _memory_doc(mem: Any) -> Any:
    """The document's "memory" entry: the detector memory's plain data (None: no memory)."""
    if mem is None:
        return None
    require_codable(type(mem), "detector memory")
    return mem.to_dict()


class SessionCodec:
    """``encode(state) -> sealed bytes`` / ``decode(session_id, bytes) -> SessionState``."""

    def __init__(self, pipeline, cipher: Cipher) -> None:
        self.pipeline = pipeline
        self.cipher = cipher

    def to_plaintext(self, state: SessionState) -> bytes:
        doc = {
            "f": FORMAT,
            "sid": state.session_id,
            "turns": state.turns,
            "replace": _replace_doc(state.replace_state),
            "memory": _memory_doc(state.detect_memory),
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
        rcls = require_codable(type(fresh.replace_state), "replace state")
        rep = doc["replace"]
        if "b" in rep:
            if not issubclass(rcls, BinaryStateCodable):
                raise StateDecodeError("stored replace state is bytes, the configured replacer's state is not")
            fresh.replace_state = rcls.from_bytes(base64.b64decode(rep["b"]))
        elif "d" in rep:
            fresh.replace_state = rcls.from_dict(rep["d"])
        mem = doc.get("memory")
        if mem is not None and fresh.detect_memory is not None:
            mcls = require_codable(type(fresh.detect_memory), "detector memory")
            fresh.detect_memory = mcls.from_dict(mem)
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
        require_codable(type(rs), "replace state")
        rep = rs.to_bytes() if isinstance(rs, BinaryStateCodable) else json.dumps(rs.to_dict(), sort_keys=True).encode()
        plain = _memory_doc(state.detect_memory)
        if isinstance(plain, dict):  # per-turn bookkeeping that no later turn's output depends on
            plain = {k: v for k, v in plain.items() if k not in _PER_TURN_MEMORY}
        mem = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        ctx = json.dumps(state.llm_context, ensure_ascii=False)
        return hashlib.blake2b(rep + b"\x00" + mem.encode() + b"\x00" + ctx.encode(), digest_size=16).digest()

    def encode(self, state: SessionState) -> bytes:
        plain = self.to_plaintext(state)
        if hasattr(self.cipher, "version_of"):  # a counted envelope: each write one version newer
            state.version += 1
            return self.cipher.encrypt(plain, state.session_id, version=state.version)
        return self.cipher.encrypt(plain, state.session_id)

    def decode(self, session_id: str, blob: bytes) -> SessionState:
        try:
            raw = self.cipher.decrypt(blob, session_id)
        except Exception as exc:
            raise StateDecodeError(f"cannot decrypt stored state ({type(exc).__name__})") from None
        try:
            state = self.from_plaintext(session_id, raw)
            version_of = getattr(self.cipher, "version_of", None)
            if version_of is not None:
                state.version = version_of(blob)
            return state
        except (StateDecodeError, NotCodableError):  # NotCodableError: a programming error, not the data's
            raise
        except Exception as exc:
            raise StateDecodeError(f"cannot decode stored state ({type(exc).__name__})") from None
