"""In-process counters of the LLM stage: turns gated/sent/degraded, requests, retries, tokens, cost.

Everything is a plain number so exporting is a one-liner, e.g. with prometheus_client::

    for name, labels, value in stage.stats.samples(): ...

or ``stage.stats.snapshot()`` for a nested dict. Labels are fixed vocabularies (stage names,
reason codes), never text.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Iterator

STAGES = ("marking", "json", "verifier")


@dataclass
class LLMStats:
    price_input_per_1m: float = 0.15
    price_output_per_1m: float = 0.60

    #: turns the stage was asked about
    turns: int = 0
    #: turns the gate kept away from the model (by reason) / sent to it (by reason)
    gated: Counter = field(default_factory=Counter)
    sent: Counter = field(default_factory=Counter)
    ok: int = 0
    #: fail-closed turns by reason (timeout, outage, rate_limited, http_5xx, unaligned, ...)
    degraded: Counter = field(default_factory=Counter)
    #: HTTP requests by stage, retries by cause
    requests: Counter = field(default_factory=Counter)
    request_errors: Counter = field(default_factory=Counter)
    retries: Counter = field(default_factory=Counter)
    prompt_tokens: Counter = field(default_factory=Counter)
    completion_tokens: Counter = field(default_factory=Counter)
    #: turns whose answer could only partly be aligned (entities found by text search)
    aligned_by_search: int = 0
    #: marking-mode turns sent in JSON mode because the text itself holds marker strings
    json_fallback: int = 0
    #: verifier verdicts: T (is PII → masked) / F (not PII → left in the text)
    verifier_true: int = 0
    verifier_false: int = 0
    #: conservatively masked candidates (fail-closed turns + unreviewed regions)
    masked_conservatively: int = 0
    #: doubtful fast-pass spans the model ruled not personal (left in the clear)
    unmasked: int = 0
    #: seconds spent waiting for the throttle (requests/min, tokens/min, concurrency)
    throttle_wait_s: float = 0.0
    #: recent stage latencies (seconds) for quick percentiles
    latencies: deque = field(default_factory=lambda: deque(maxlen=4096))

    def add_usage(self, stage: str, prompt: int, completion: int) -> None:
        self.prompt_tokens[stage] += int(prompt)
        self.completion_tokens[stage] += int(completion)

    @property
    def degraded_total(self) -> int:
        return sum(self.degraded.values())

    @property
    def sent_total(self) -> int:
        return sum(self.sent.values())

    @property
    def gated_total(self) -> int:
        return sum(self.gated.values())

    def cost_usd(self, stage: str | None = None) -> float:
        stages = [stage] if stage else list(set(self.prompt_tokens) | set(self.completion_tokens))
        p = sum(self.prompt_tokens[s] for s in stages)
        c = sum(self.completion_tokens[s] for s in stages)
        return p / 1e6 * self.price_input_per_1m + c / 1e6 * self.price_output_per_1m

    def percentile(self, q: float) -> float | None:
        if not self.latencies:
            return None
        xs = sorted(self.latencies)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    def snapshot(self) -> dict:
        stages = sorted(set(self.prompt_tokens) | set(self.completion_tokens) | set(self.requests))
        return {
            "turns": self.turns,
            "gated": dict(self.gated),
            "sent": dict(self.sent),
            "ok": self.ok,
            "degraded": dict(self.degraded),
            "requests": dict(self.requests),
            "request_errors": dict(self.request_errors),
            "retries": dict(self.retries),
            "tokens": {s: {"prompt": self.prompt_tokens[s], "completion": self.completion_tokens[s]} for s in stages},
            "cost_usd": {s: self.cost_usd(s) for s in stages} | {"total": self.cost_usd()},
            "aligned_by_search": self.aligned_by_search,
            "json_fallback": self.json_fallback,
            "verifier": {"T": self.verifier_true, "F": self.verifier_false},
            "masked_conservatively": self.masked_conservatively,
            "unmasked": self.unmasked,
            "throttle_wait_s": self.throttle_wait_s,
        }

    def samples(self) -> Iterator[tuple[str, dict[str, str], float]]:
        """(metric name, labels, value) triples, counters named Prometheus-style."""
        yield "plainsight_llm_turns_total", {}, self.turns
        for r, v in self.gated.items():
            yield "plainsight_llm_turns_gated_total", {"reason": r}, v
        for r, v in self.sent.items():
            yield "plainsight_llm_turns_sent_total", {"reason": r}, v
        yield "plainsight_llm_turns_ok_total", {}, self.ok
        for r, v in self.degraded.items():
            yield "plainsight_llm_turns_degraded_total", {"reason": r}, v
        for s, v in self.requests.items():
            yield "plainsight_llm_requests_total", {"stage": s}, v
        for r, v in self.request_errors.items():
            yield "plainsight_llm_request_errors_total", {"kind": r}, v
        for r, v in self.retries.items():
            yield "plainsight_llm_retries_total", {"cause": r}, v
        for s in set(self.prompt_tokens) | set(self.completion_tokens):
            yield "plainsight_llm_tokens_total", {"stage": s, "kind": "prompt"}, self.prompt_tokens[s]
            yield "plainsight_llm_tokens_total", {"stage": s, "kind": "completion"}, self.completion_tokens[s]
            yield "plainsight_llm_cost_usd_total", {"stage": s}, self.cost_usd(s)
        yield "plainsight_llm_verifier_verdicts_total", {"verdict": "T"}, self.verifier_true
        yield "plainsight_llm_verifier_verdicts_total", {"verdict": "F"}, self.verifier_false
        yield "plainsight_llm_masked_conservatively_total", {}, self.masked_conservatively
        yield "plainsight_llm_unmasked_total", {}, self.unmasked
        yield "plainsight_llm_throttle_wait_seconds_total", {}, self.throttle_wait_s
