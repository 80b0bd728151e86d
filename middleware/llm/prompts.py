"""Prompts of the LLM stage, loaded from ``configs/llm/prompts.yaml`` (or ``llm.prompts_dir``).

Builds the chat messages for the three calls: marking, JSON listing and the verifier. The
current turn is the only raw text in a request; context turns arrive already de-identified.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import yaml

from ..config import ConfigError, config_resource
from ..schemas import KNOWN_ROLES

#: Marker pairs for labels added by configuration (three identical characters that rarely occur in chat).
SPARE_MARKERS: tuple[tuple[str, str], ...] = (
    ("<<<", ">>>"), ("+++", "***"), ("«««", "»»»"), ("§§§", "¤¤¤"), ("†††", "‡‡‡"), ("÷÷÷", "±±±"),
    ("ŁŁŁ", "ĦĦĦ"), ("ŒŒŒ", "ÆÆÆ"), ("ØØØ", "ÞÞÞ"), ("ĲĲĲ", "ŊŊŊ"),
)

#: A context turn: (role as output by the pipeline, de-identified text).
ContextTurn = tuple[str, str]


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def safe_role(role: str) -> str:
    """Known roles pass; anything else (possibly a person's name) becomes 'participant'."""
    r = role.strip().casefold()
    return r if r in KNOWN_ROLES else "participant"


@dataclass
class Prompts:
    raw: dict[str, Any]
    labels: tuple[str, ...]

    @classmethod
    def load(cls, prompts_dir: str | None = None, labels: Sequence[str] | None = None,
             descriptions: dict[str, str] | None = None) -> "Prompts":
        """``descriptions``: what the labels added by configured recognizers mean; a label without
        a marker in prompts.yaml gets a spare marker pair and its description."""
        data = yaml.safe_load(config_resource("llm/prompts.yaml").read_text(encoding="utf-8")) or {}
        if prompts_dir:
            p = Path(prompts_dir) / "prompts.yaml"
            try:
                over = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
            except FileNotFoundError:
                raise ConfigError(f"llm.prompts_dir has no prompts.yaml: {p}") from None
            data = _merge(data, over)
        markers = data.get("markers") or {}
        if labels and any(l not in markers for l in labels):
            markers = dict(markers)
            desc = dict(data.get("label_descriptions") or {})
            taken = {m for pair in markers.values() for m in pair}
            spare = iter([p for p in SPARE_MARKERS if not (set(p) & taken)])
            for l in labels:
                if l in markers:
                    continue
                pair = next(spare, None)
                if pair is None:
                    raise ConfigError(f"llm prompts: no spare marker left for label {l}; add one in prompts.yaml")
                markers[l] = list(pair)
                desc.setdefault(l, (descriptions or {}).get(l) or l)
            data = {**data, "markers": markers, "label_descriptions": desc}
        use = tuple(l for l in (labels or markers.keys()) if l in markers)
        if not use:
            raise ConfigError("llm prompts: no marker for any configured label")
        return cls(data, use)

    @property
    def markers(self) -> dict[str, tuple[str, str]]:
        m = self.raw["markers"]
        return {l: (m[l][0], m[l][1]) for l in self.labels}

    @property
    def all_markers(self) -> dict[str, tuple[str, str]]:
        return {l: (v[0], v[1]) for l, v in self.raw["markers"].items()}

    def _marker_table(self) -> str:
        desc = self.raw.get("label_descriptions") or {}
        return "\n".join(f"- {o}…{c} around {desc.get(l, l)}" for l, (o, c) in self.markers.items())

    def _label_table(self) -> str:
        desc = self.raw.get("label_descriptions") or {}
        return "\n".join(f"- {l}: {desc.get(l, l)}" for l in self.labels)

    def _context(self, section: dict, context: Sequence[ContextTurn]) -> str:
        if not context:
            return ""
        lines = [f"{safe_role(r) if r else 'participant'}: {_defuse(' '.join(t.split()))}" for r, t in context]
        return section.get("context_header", "") + "\n".join(lines) + "\n\n"

    def _user(self, section: dict, text: str, role: str, context: Sequence[ContextTurn], **extra: str) -> str:
        return section["user"].format(context=self._context(section, context), role=safe_role(role), text=_defuse(text), **extra)

    def _strip_unused_markers(self, answer: str) -> str:
        for l, (o, c) in self.all_markers.items():
            if l not in self.labels:
                answer = answer.replace(o, "").replace(c, "")
        return answer

    def marking(self, text: str, role: str, context: Sequence[ContextTurn]) -> list[dict[str, str]]:
        sec = self.raw["marking"]
        msgs = [{"role": "system", "content": sec["system"].format(markers=self._marker_table(), labels=self._label_table())}]
        for ex in sec.get("examples") or []:
            ctx = _parse_ctx(ex.get("context", ""))
            msgs.append({"role": "user", "content": self._user(sec, ex["text"], ex.get("role", "student"), ctx)})
            msgs.append({"role": "assistant", "content": self._strip_unused_markers(ex["answer"])})
        msgs.append({"role": "user", "content": self._user(sec, text, role, context)})
        return msgs

    def json(self, text: str, role: str, context: Sequence[ContextTurn]) -> list[dict[str, str]]:
        sec = self.raw["json"]
        msgs = [{"role": "system", "content": sec["system"].format(markers=self._marker_table(), labels=self._label_table())}]
        for ex in sec.get("examples") or []:
            ctx = _parse_ctx(ex.get("context", ""))
            msgs.append({"role": "user", "content": self._user(sec, ex["text"], ex.get("role", "student"), ctx)})
            msgs.append({"role": "assistant", "content": ex["answer"]})
        msgs.append({"role": "user", "content": self._user(sec, text, role, context)})
        return msgs

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": "pii_entities",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": {
                        "entities": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "text": {"type": "string"},
                                    "label": {"type": "string", "enum": list(self.labels)},
                                },
                                "required": ["text", "label"],
                                "additionalProperties": False,
                            },
                        }
                    },
                    "required": ["entities"],
                    "additionalProperties": False,
                },
            },
        }

    def verifier(
        self, text: str, role: str, context: Sequence[ContextTurn], candidates: Sequence[tuple[int, int, str]]
    ) -> list[dict[str, str]]:
        """``candidates``: (start, end, label) in ``text``; numbered from 1 in the prompt."""
        sec = self.raw["verifier"]
        lines = []
        for i, (s, e, label) in enumerate(candidates, 1):
            lo, hi = max(0, s - 40), min(len(text), e + 40)
            snippet = " ".join((text[lo:s] + "⟦" + text[s:e] + "⟧" + text[e:hi]).split())
            lines.append(f'{i}. "{text[s:e]}" ({label}) in: …{snippet}…')
        msgs = [{"role": "system", "content": sec["system"]}]
        msgs.append({"role": "user", "content": self._user(sec, text, role, context, candidates="\n".join(lines))})
        return msgs


_TAG = re.compile(r"<(/?)current_turn>", re.IGNORECASE)


def _defuse(text: str) -> str:
    """A turn can't close its own delimiter (a student typing "</current_turn> now do X").
    The echo then differs by one token there, which the alignment tolerates."""
    return _TAG.sub(r"<\1current turn>", text) if "current_turn" in text.lower() else text


def _parse_ctx(s: str) -> list[ContextTurn]:
    out = []
    for line in (s or "").splitlines():
        if ":" in line:
            r, t = line.split(":", 1)
            out.append((r.strip(), t.strip()))
    return out
