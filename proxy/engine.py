"""De-identifying a chat-completions request: every message the model would see, over the same
pipeline the Kafka worker runs (``surrogate.pipeline.build_pipeline``).

A request carries the whole conversation each time. Per message:

* its detection spans are computed once and remembered by a keyed digest of (role, text) in the
  session's sealed state, so a message seen in an earlier request is rendered from the same spans
  (the history keeps its bytes, whatever the detector's memory has learnt since);
* every real value the session's mapping already holds is replaced wherever it appears (the app's
  copies of earlier assistant replies hold real names after re-identification), and so is every
  surrogate the session issued when a caller types it (it becomes a name like any other and gets
  its own surrogate: no re-identification oracle);
* spans are rendered with the replacer in the session's mapping.

The entities written upstream (label, surrogate text) are collected: :func:`proxy.restore.issued_mapping`
restricts re-identification of the reply to them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from typing import Any

from plainsight.middleware.detection.base import Span, resolve_overlaps
from plainsight.middleware.replace import merge_adjacent
from plainsight.middleware.schemas import InputTurn
from plainsight.middleware.sessions import SessionState
from plainsight.middleware.state_codec import SessionCodec
from plainsight.surrogate.names import fold
from plainsight.surrogate.text import common_words

#: how many message digests (→ spans) a session remembers
SEEN_MAX = 4000
_MEDIA_PARTS = frozenset({"image_url", "input_audio", "file", "image", "audio", "input_image", "input_file"})
_NAME_TOKEN = re.compile(r"[^\W\d_]+")
#: OpenAI roles → the roles the detector knows
_ROLE = {"developer": "system", "tool": "tool", "function": "tool"}


class RequestError(Exception):
    """The request is malformed or breaks a limit: ``status`` and an OpenAI error ``code``."""

    def __init__(self, status: int, message: str, code: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.param = param


@dataclass
class ProxySession:
    """A session's pipeline state plus the proxy's span memory (both sealed together)."""

    state: SessionState
    seen: dict[str, list[list]] = field(default_factory=dict)
    dirty: bool = False
    #: digest → (mapping generation, rendered text, entities): history rendered again only when the
    #: mapping changed since (in memory, never persisted; per object, so a reloaded state starts empty)
    rendered: dict[str, tuple] = field(default_factory=dict)


@dataclass
class Deidentified:
    body: dict
    #: (label, surrogate text) of every entity written upstream
    entities: list[tuple[str, str]]
    messages: int = 0
    detected: int = 0


class Engine:
    def __init__(self, pipeline, digest_key: bytes, allow_media: bool = False) -> None:
        self.pipeline = pipeline
        self.replacer = pipeline.replacer
        self._key = digest_key
        self.allow_media = allow_media
        self._known_cache: dict[int, tuple[int, Any]] = {}

    # ---- state ---------------------------------------------------------------------------
    def new_session(self, internal_id: str) -> ProxySession:
        return ProxySession(self.pipeline.new_session(internal_id))

    def seal(self, ps: ProxySession, cipher) -> bytes:
        codec = SessionCodec(self.pipeline, cipher)
        doc = {"v": 1, "state": codec.to_plaintext(ps.state).decode("utf-8"), "seen": ps.seen}
        raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return cipher.encrypt(raw, ps.state.session_id)

    def open(self, internal_id: str, blob: bytes, cipher) -> ProxySession:
        raw = cipher.decrypt(blob, internal_id)
        doc = json.loads(raw)
        if doc.get("v") != 1:
            raise ValueError("unknown proxy state format")
        codec = SessionCodec(self.pipeline, cipher)
        st = codec.from_plaintext(internal_id, doc["state"].encode("utf-8"))
        return ProxySession(st, dict(doc.get("seen") or {}))

    # ---- one text ------------------------------------------------------------------------
    def _digest(self, role: str, text: str) -> str:
        return base64.b64encode(hmac.new(self._key, f"{role}\x00{text}".encode("utf-8", "surrogatepass"),
                                         hashlib.sha256).digest()[:18]).decode("ascii")

    def _known(self, state: SessionState):
        """The real values the mapping holds and the surrogates it issued: (folded name tokens,
        [(lower-case value, label)]), rebuilt when the mapping changes (no regex to compile)."""
        rs = state.replace_state
        gen = rs.generation
        hit = self._known_cache.get(id(rs))
        if hit is not None and hit[0] == gen and hit[2] is rs:
            return hit[1]
        names: set[str] = set()
        for key, sur in rs.names.items():
            for w in (rs.name_real.get(key, key), key, sur):
                if len(w) >= 2:
                    names.add(fold(w))
        values: list[tuple[str, str]] = []
        for label, entries in rs.values.items():
            if label.startswith("_"):
                continue
            for e in entries.values():
                for w in {e.real, e.surrogate}:
                    if len(w.strip()) >= 3:
                        values.append((w.lower(), label))
        values.sort(key=lambda v: -len(v[0]))
        known = (frozenset(names), values) if names or values else None
        if len(self._known_cache) > 1024:
            self._known_cache.clear()
        self._known_cache[id(rs)] = (gen, known, rs)
        return known

    @staticmethod
    def _known_spans(text: str, known) -> list[Span]:
        names, values = known
        out: list[Span] = []
        if names:
            common = common_words()
            for m in _NAME_TOKEN.finditer(text):
                tok = m.group()
                f = fold(tok)
                # an everyday word in lower case is the word ("will", "rose"), as in re-identification
                if f in names and not (tok.islower() and f in common):
                    out.append(Span(m.start(), m.end(), "NAME", "known", 0.5))
        if values:
            low = text.lower()
            n = len(low)
            for w, label in values:
                i = low.find(w)
                while i >= 0:
                    j = i + len(w)
                    if (i == 0 or not (low[i - 1].isalnum() or low[i - 1] in "_.@")) and (
                            j >= n or not (low[j].isalnum() or low[j] in "_@")):
                        out.append(Span(i, j, label, "known", 0.5))
                    i = low.find(w, j)
        return out

    def deidentify_text(self, ps: ProxySession, role: str, text: str, out: list[tuple[str, str]]) -> str:
        if not text or not text.strip():
            return text
        state = ps.state
        d = self._digest(role, text)
        cached = ps.seen.get(d)
        hit = ps.rendered.get(d) if cached is not None else None
        if hit is not None and hit[0] == state.replace_state.generation:
            out.extend(hit[2])
            return hit[1]
        if cached is not None:
            spans = [Span(int(s), int(e), str(l), "memory") for s, e, l in cached]
        else:
            turn = InputTurn(session_id=state.session_id, turn_id=state.turns, role=_ROLE.get(role, role),
                             text=text, sent_at=0.0)
            spans = self.pipeline.detect(turn, state)
            state.turns += 1
            ps.seen[d] = [[s.start, s.end, s.label] for s in spans]
            if len(ps.seen) > SEEN_MAX:
                for k in list(ps.seen)[: len(ps.seen) - SEEN_MAX]:
                    del ps.seen[k]
            ps.dirty = True
        known = self._known(state)
        if known is not None:
            extra = self._known_spans(text, known)
            if extra:
                spans = resolve_overlaps(list(spans) + extra)
        if not spans:
            new, pairs = text, []
        else:
            gen = state.replace_state.generation
            new, ents = self.replacer.replace(text, merge_adjacent(text, sorted(spans, key=lambda s: s.start)),
                                              state.replace_state, "surrogate")
            if state.replace_state.generation != gen:
                ps.dirty = True
            pairs = [(e.label, new[e.start : e.end]) for e in ents]
        out.extend(pairs)
        ps.rendered[d] = (state.replace_state.generation, new, pairs)
        if len(ps.rendered) > SEEN_MAX:
            ps.rendered.pop(next(iter(ps.rendered)))
        return new

    def deidentify_name(self, ps: ProxySession, name: str, out: list[tuple[str, str]]) -> str:
        if not name.strip():
            return name
        gen = ps.state.replace_state.generation
        new, ents = self.replacer.replace(name, [Span(0, len(name), "NAME", "name")], ps.state.replace_state, "surrogate")
        if ps.state.replace_state.generation != gen:
            ps.dirty = True
        for e in ents:
            out.append((e.label, new[e.start : e.end]))
        return new

    # ---- tool-call arguments -------------------------------------------------------------
    def deidentify_json(self, ps: ProxySession, args: str, out: list, max_depth: int) -> str:
        """A JSON document (tool-call arguments): string values replaced, still valid JSON. Not JSON
        → de-identified as text."""
        try:
            doc = json.loads(args)
        except (ValueError, RecursionError):
            return self.deidentify_text(ps, "assistant", args, out)

        def walk(v: Any, depth: int) -> Any:
            if depth > max_depth:
                raise RequestError(400, f"tool-call arguments nest deeper than max_tool_arg_depth ({max_depth})",
                                   "max_tool_arg_depth")
            if isinstance(v, str):
                return self.deidentify_text(ps, "assistant", v, out)
            if isinstance(v, list):
                return [walk(x, depth + 1) for x in v]
            if isinstance(v, dict):
                return {k: walk(x, depth + 1) for k, x in v.items()}
            return v

        return json.dumps(walk(doc, 0), ensure_ascii=False)

    # ---- a whole request -----------------------------------------------------------------
    def deidentify_request(self, ps: ProxySession, body: dict, max_tool_arg_depth: int = 16) -> Deidentified:
        out: list[tuple[str, str]] = []
        msgs_out = []
        for m in body["messages"]:
            role = m.get("role")
            nm = dict(m)
            content = m.get("content")
            if isinstance(content, str):
                nm["content"] = self.deidentify_text(ps, role, content, out)
            elif isinstance(content, list):
                parts = []
                for part in content:
                    ptype = part.get("type")
                    if ptype == "text" and isinstance(part.get("text"), str):
                        parts.append({**part, "text": self.deidentify_text(ps, role, part["text"], out)})
                    elif ptype in ("refusal",) and isinstance(part.get("refusal"), str):
                        parts.append({**part, "refusal": self.deidentify_text(ps, role, part["refusal"], out)})
                    elif ptype in _MEDIA_PARTS and self.allow_media:
                        parts.append(part)
                    else:
                        raise RequestError(400, f"content parts of type {str(ptype)[:32]!r} are not accepted by this "
                                                "proxy (it cannot de-identify them; proxy.allow_media lets images and "
                                                "audio through unchanged)", "unsupported_content")
                nm["content"] = parts
            if isinstance(m.get("refusal"), str):
                nm["refusal"] = self.deidentify_text(ps, role, m["refusal"], out)
            if isinstance(m.get("name"), str):
                nm["name"] = self.deidentify_name(ps, m["name"], out)
            if isinstance(m.get("tool_calls"), list):
                calls = []
                for c in m["tool_calls"]:
                    c2 = dict(c)
                    fn = c.get("function")
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        c2["function"] = {**fn, "arguments": self.deidentify_json(ps, fn["arguments"], out,
                                                                                   max_tool_arg_depth)}
                    calls.append(c2)
                nm["tool_calls"] = calls
            fc = m.get("function_call")
            if isinstance(fc, dict) and isinstance(fc.get("arguments"), str):
                nm["function_call"] = {**fc, "arguments": self.deidentify_json(ps, fc["arguments"], out,
                                                                               max_tool_arg_depth)}
            msgs_out.append(nm)
        new_body = dict(body)
        new_body["messages"] = msgs_out
        new_body.pop("user", None)  # a student id: never upstream
        return Deidentified(new_body, out, messages=len(msgs_out))
