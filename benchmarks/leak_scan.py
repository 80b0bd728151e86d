"""Leak scan: look for raw PII values of the input in everything plainsight wrote.

Sources scanned: output and logging topics (per session: a session's raw values must not
appear in that session's outputs), the dead-letter topic, the state topic (must be sealed:
no plaintext of any value), worker log files and the metrics exposition (no value of any
session may appear there).

Values are matched case-insensitively; name-like values (letters only) must match on word
boundaries, other values (emails, phones, URLs, IDs) as substrings. Values shorter than
``min_len`` are skipped (too many coincidental hits, e.g. two-letter names inside words).

The result distinguishes *canary* values (planted PII with strong cues that the detector must
find; any hit is a leak) from *gold* values of the dev files (a hit in an output is a detector
miss, reported as residual, while a hit in logs, metrics, DLQ or state is a leak).
With ``secrets=`` (the surrogate secret, state keys) any occurrence of that material in any
source is a leak too.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class ValueSet:
    #: session id → set of (kind, value); kind is "canary" or "gold"
    by_session: dict[str, set[tuple[str, str]]] = field(default_factory=lambda: defaultdict(set))

    def add(self, session_id: str, value: str, kind: str = "gold") -> None:
        v = value.strip()
        if v:
            self.by_session[session_id].add((kind, v))

    def all_values(self) -> set[tuple[str, str]]:
        out: set[tuple[str, str]] = set()
        for vals in self.by_session.values():
            out |= vals
        return out


@dataclass
class LeakReport:
    scanned: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: where → number of hits of canary values / gold values
    canary_hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    gold_hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    #: distinct gold values surviving in their session's outputs (detector misses)
    residual_gold_values: int = 0
    gold_values: int = 0
    canary_values: int = 0
    examples: list[str] = field(default_factory=list)  # where + value *kind*, never the value

    @property
    def leaks(self) -> int:
        """Hits that are leaks of the system: every canary hit, and gold hits outside outputs."""
        return sum(self.canary_hits.values()) + sum(
            n for where, n in self.gold_hits.items() if not where.startswith("output:")
        )

    def summary(self) -> dict:
        return {
            "leaks": self.leaks,
            "canary_values": self.canary_values,
            "canary_hits": dict(self.canary_hits),
            "gold_values": self.gold_values,
            "gold_hits_outside_outputs": {k: v for k, v in self.gold_hits.items() if not k.startswith("output:")},
            "residual_gold_values_in_outputs": self.residual_gold_values,
            "scanned": dict(self.scanned),
        }


class Matcher:
    def __init__(self, values: set[tuple[str, str]], min_len: int = 3) -> None:
        self.values = [(k, v) for k, v in values if len(v) >= min_len]
        words, subs = [], []
        for kind, v in self.values:
            (words if re.fullmatch(r"[^\W\d_]+(?:[ '’-][^\W\d_]+)*", v) else subs).append((kind, v))
        self._word_re = None
        if words:
            self._word_index = {v.casefold(): kind for kind, v in words}
            alts = sorted({re.escape(v.casefold()) for _k, v in words}, key=len, reverse=True)
            self._word_re = re.compile(r"(?<!\w)(?:" + "|".join(alts) + r")(?!\w)", re.IGNORECASE)
        self._subs = [(kind, v.casefold()) for kind, v in subs]

    def find(self, text: str) -> list[tuple[str, str]]:
        hits: list[tuple[str, str]] = []
        if self._word_re is not None:
            for m in self._word_re.finditer(text):
                v = m.group(0).casefold()
                hits.append((self._word_index.get(v, "gold"), v))
        if self._subs:
            low = text.casefold()
            for kind, v in self._subs:
                if v in low:
                    hits.append((kind, v))
        return hits


def scan(
    values: ValueSet,
    outputs: list[bytes] = (),
    dlq: list[bytes] = (),
    state: list[bytes | None] = (),
    logs: list[str] = (),
    metrics: list[str] = (),
    min_len: int = 3,
    state_magic: bytes | None = None,
    secrets: list[str] = (),
) -> LeakReport:
    rep = LeakReport()
    _scan_secrets(rep, [s for s in secrets if s], outputs, dlq, state, logs, metrics)
    everything = values.all_values()
    rep.gold_values = sum(1 for k, v in everything if k == "gold" and len(v) >= min_len)
    rep.canary_values = sum(1 for k, v in everything if k == "canary" and len(v) >= min_len)
    global_matcher = Matcher(everything, min_len)
    per_session: dict[str, Matcher] = {}
    residual: set[tuple[str, str]] = set()

    def record(where: str, hits):
        for kind, v in hits:
            if kind == "canary":
                rep.canary_hits[where] += 1
                if len(rep.examples) < 20:
                    rep.examples.append(f"{where}: canary value")
            else:
                rep.gold_hits[where] += 1

    for raw in outputs:
        rep.scanned["output"] += 1
        try:
            o = json.loads(raw)
        except ValueError:
            record("output:unparseable", global_matcher.find(raw.decode("utf-8", "replace")))
            continue
        sid = str(o.get("session_id"))
        m = per_session.get(sid)
        if m is None:
            m = per_session[sid] = Matcher(values.by_session.get(sid, set()), min_len)
        text = " ".join(str(o.get(k, "")) for k in ("text", "role"))
        hits = m.find(text)
        record("output:" + ("canary" if any(k == "canary" for k, _ in hits) else "gold"), hits)
        for kind, v in hits:
            if kind == "gold":
                residual.add((sid, v))
    rep.residual_gold_values = len(residual)
    for raw in dlq:
        rep.scanned["dlq"] += 1
        record("dlq", global_matcher.find(raw.decode("utf-8", "replace")))
    # State records are ciphertext: short values match random bytes by chance, so only values of
    # 6+ characters are searched there; and every record must carry the sealed envelope's magic.
    state_matcher = Matcher(everything, max(min_len, 6))
    for raw in state:
        rep.scanned["state"] += 1
        if raw is None:
            continue
        if state_magic is not None and not raw.startswith(state_magic):
            rep.canary_hits["state:unsealed"] += 1
            if len(rep.examples) < 20:
                rep.examples.append("state: record without the sealed envelope")
        record("state", state_matcher.find(raw.decode("latin-1")))
    for text in logs:
        rep.scanned["log_lines"] += text.count("\n") + 1
        record("logs", global_matcher.find(text))
    for text in metrics:
        rep.scanned["metrics_bytes"] += len(text)
        record("metrics", global_matcher.find(text))
    return rep


def _scan_secrets(rep: LeakReport, secrets: list[str], outputs, dlq, state, logs, metrics) -> None:
    """Surrogate secret and state key material, exact and case-sensitive, anywhere: any hit is a
    leak (counted with the canaries as ``secret:<where>``)."""
    if not secrets:
        return
    needles = [s.encode("utf-8") for s in secrets]
    sources = [("output", outputs), ("dlq", dlq), ("state", state),
               ("logs", [t.encode("utf-8") for t in logs]), ("metrics", [t.encode("utf-8") for t in metrics])]
    for where, items in sources:
        for raw in items:
            if raw and any(n in raw for n in needles):
                rep.canary_hits["secret:" + where] += 1
                if len(rep.examples) < 20:
                    rep.examples.append(f"{where}: secret or key material")
