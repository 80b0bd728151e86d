"""The LLM stage: refine the fast pass's spans of one turn with an OpenAI-compatible model.

Transport-agnostic and stateless per session: the caller passes the turn's raw text, the fast
pass's spans and candidates, and the previous turns *already de-identified*; nothing raw is
kept after the call returns.

Merge rules (recall first, the verifier decides what is uncertain):

- ``fast_spans`` (what the fast pass masks) stay masked, except uncertain ones (score below
  ``uncertain_below``) that the verifier answers F for;
- spans the model marks are added (union); overlapping spans are merged into their union;
- ``candidates`` (doubtful spans the fast pass would *not* mask) are masked when the verifier
  says T, or — without a verdict — when the model marked them or the model's echo did not
  cover them (not reviewed);
- a verifier F removes the span and a model span of exactly the same extent (unless that
  one was verified T itself);
- any failure (timeout, budget overrun, outage, HTTP error, malformed or unalignable answer)
  → fail closed: fast spans + *all* candidates, ``degraded=True``, counted by reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..detection.base import CORE_LABELS, Span, TurnContext
from .align import AnswerError, Found, align_marked, contains_markers, locate_json, parse_json_entities, parse_verdicts
from .client import Completion, LLMCallError, ThrottledClient
from .gate import gate_reason
from .prompts import ContextTurn, Prompts
from .stats import LLMStats

log = logging.getLogger(__name__)

LLM_SOURCE = "llm"
LLM_SCORE = 0.9


@dataclass(slots=True)
class LLMOutcome:
    """What the stage decided for one turn."""

    spans: list[Span]
    #: the model answered and the answer was usable
    ok: bool
    #: fail-closed output (the model's judgement is missing for this turn)
    degraded: bool
    #: the turn was sent to the model (False: gated out, or the stage is off)
    sent: bool = False
    #: gate reason when sent / "gated" / the failure reason when degraded
    reason: str = ""
    #: {"marking"|"json"|"verifier": {"prompt": n, "completion": n}} for this turn
    usage: dict[str, dict[str, int]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: spans found by the model alone (not by the fast pass), for teaching session memory
    learned: list[Span] = field(default_factory=list)


def union_merge(spans: Sequence[Span]) -> list[Span]:
    """Overlapping spans become one span over their union (label/source of the strongest)."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda x: (x.start, -x.end)):
        if out and s.start < out[-1].end:
            prev = out[-1]
            best = max((prev, s), key=lambda x: (x.score, len(x)))
            out[-1] = Span(prev.start, max(prev.end, s.end), best.label, best.source, max(prev.score, s.score))
        else:
            out.append(s)
    return out


def _overlaps(a: Span | Found, b: Span | Found) -> bool:
    return a.start < b.end and b.start < a.end


class LLMStage:
    def __init__(
        self,
        settings,
        labels: Sequence[str] = CORE_LABELS,
        *,
        prompts: Prompts | None = None,
        stats: LLMStats | None = None,
        lexicon: Callable[[str], object] | None | bool = True,
    ) -> None:
        self.settings = settings
        self.prompts = prompts or Prompts.load(settings.prompts_dir, labels)
        self.labels = frozenset(self.prompts.labels)
        self.stats = stats or LLMStats(settings.price_input_per_1m, settings.price_output_per_1m)
        self.client = ThrottledClient(settings, self.stats)
        #: token -> info(is_name, is_word, word_margin) for the gate; True = the shipped lexicon
        self._lexicon = lexicon
        if self.settings.gate == "uncertain":
            _ = self.lexicon  # load it now, not inside the first turn's latency budget

    @classmethod
    def from_settings(cls, settings, **kw) -> "LLMStage":
        """From the full ``Settings`` (uses ``settings.llm`` and the detection labels) or an ``LLMSettings``."""
        llm = getattr(settings, "llm", settings)
        labels = getattr(getattr(settings, "detection", None), "labels", None)
        if labels is not None:
            kw.setdefault("labels", labels)
        if not llm.base_url and not llm.api_key:
            import os

            if not os.environ.get("OPENAI_API_KEY") and llm.is_enabled:
                from ..config import ConfigError

                raise ConfigError("llm is enabled for the OpenAI API but no api key is set (llm.api_key or OPENAI_API_KEY)")
        return cls(llm, **kw)

    @property
    def enabled(self) -> bool:
        return bool(self.settings.is_enabled)

    async def aclose(self) -> None:
        await self.client.aclose()

    # ------------------------------------------------------------------ API

    @property
    def lexicon(self) -> Callable[[str], object] | None:
        if self._lexicon is True:
            try:
                from ..detection.lexicon import get_lexicon

                self._lexicon = get_lexicon().info
            except (ImportError, OSError):  # no lexicon shipped: the gate works without it
                self._lexicon = None
        return self._lexicon or None

    def gate(self, text: str, fast_spans: Sequence[Span], candidates: Sequence[Span], keep: Callable[[str], bool] | None = None) -> str | None:
        return gate_reason(text, fast_spans, candidates, self.settings.gate, self.settings.uncertain_below, self.lexicon, keep)

    def fail_closed(self, fast_spans: Sequence[Span], candidates: Sequence[Span], reason: str, *, sent: bool = True) -> LLMOutcome:
        """Fast-pass spans plus every candidate masked; counted as degraded."""
        self.stats.degraded[reason] += 1
        self.stats.masked_conservatively += len(candidates)
        spans = union_merge([*fast_spans, *candidates])
        return LLMOutcome(spans, ok=False, degraded=True, sent=sent, reason=reason)

    async def refine(
        self,
        text: str,
        ctx: TurnContext | None,
        fast_spans: Sequence[Span],
        candidates: Sequence[Span] = (),
        context_turns: Sequence[ContextTurn] = (),
        *,
        budget_s: float | None = None,
        keep: Callable[[str], bool] | None = None,
    ) -> LLMOutcome:
        """Refine one turn. Never raises for model trouble: failures come back degraded.

        ``keep(token)``: the detector's confident keep decisions, for the gate only.
        """
        t0 = time.perf_counter()
        self.stats.turns += 1
        fast_spans = list(fast_spans)
        candidates = [c for c in candidates if c.label in self.labels]
        reason = self.gate(text, fast_spans, candidates, keep) if self.enabled else None
        if reason is None:
            self.stats.gated["off" if not self.enabled else self.settings.gate if self.settings.gate == "never" else "certain"] += 1
            return LLMOutcome(list(fast_spans), ok=True, degraded=False, sent=False, reason="gated")
        self.stats.sent[reason] += 1
        if len(text) > self.settings.max_turn_chars:
            return self.fail_closed(fast_spans, candidates, "too_long")
        role = ctx.role if ctx is not None else "student"
        context = list(context_turns)[-self.settings.context_turns :] if self.settings.context_turns else []
        usage: dict[str, dict[str, int]] = {}
        timings: dict[str, float] = {}
        budget = budget_s if budget_s is not None else self.settings.latency_budget_ms / 1000.0
        deadline = time.monotonic() + budget
        try:
            async with asyncio.timeout(budget):
                outcome = await self._run(text, role, context, fast_spans, candidates, deadline, usage, timings)
        except TimeoutError:
            outcome = self.fail_closed(fast_spans, candidates, "timeout")
        except LLMCallError as exc:
            outcome = self.fail_closed(fast_spans, candidates, exc.reason)
        except AnswerError as exc:
            outcome = self.fail_closed(fast_spans, candidates, exc.reason)
        except Exception as exc:  # never let the model take the turn down; no text in the log
            log.warning("llm stage error: %s", type(exc).__name__)
            outcome = self.fail_closed(fast_spans, candidates, "error")
        outcome.usage = usage
        timings["total"] = (time.perf_counter() - t0) * 1e3
        outcome.timings = timings
        if outcome.reason == "":
            outcome.reason = reason
        if outcome.ok:
            self.stats.ok += 1
        self.stats.latencies.append(timings["total"] / 1e3)
        return outcome

    # ------------------------------------------------------------------ internals

    async def _call(self, stage: str, messages, max_tokens: int, deadline: float, usage, timings, response_format=None) -> Completion:
        t = time.perf_counter()
        c = await self.client.complete(stage, messages, max_tokens=max_tokens, response_format=response_format, deadline=deadline)
        u = usage.setdefault(stage, {"prompt": 0, "completion": 0})
        u["prompt"] += c.prompt_tokens
        u["completion"] += c.completion_tokens
        timings[stage] = timings.get(stage, 0.0) + (time.perf_counter() - t) * 1e3
        if c.finish_reason == "length":
            raise AnswerError("truncated")
        return c

    async def _detect(self, text: str, role: str, context, deadline, usage, timings) -> tuple[list[Found], list[tuple[int, int]]]:
        mode = self.settings.mode
        if mode == "marking" and contains_markers(text, self.prompts.all_markers):
            mode = "json"  # the turn itself holds marker strings: markers would be ambiguous
            self.stats.json_fallback += 1
        if mode == "marking":
            msgs = self.prompts.marking(text, role, context)
            c = await self._call("marking", msgs, len(text) // 2 + 64, deadline, usage, timings)
            al = align_marked(text, c.text, self.prompts.markers)
            if al.by_search:
                self.stats.aligned_by_search += 1
            return [f for f in al.spans if f.label in self.labels], al.unreviewed
        msgs = self.prompts.json(text, role, context)
        c = await self._call("json", msgs, 64 + len(text) // 3, deadline, usage, timings, response_format=self.prompts.json_schema())
        ents = parse_json_entities(c.text, set(self.labels))
        ctx_text = "\n".join(t for _, t in context)
        return locate_json(text, ents, ctx_text), []

    async def _verify(self, text: str, role: str, context, cands: list[Span], deadline, usage, timings) -> dict[tuple, bool]:
        if not cands:
            return {}
        msgs = self.prompts.verifier(text, role, context, [(c.start, c.end, c.label) for c in cands])
        c = await self._call("verifier", msgs, 8 * len(cands) + 16, deadline, usage, timings)
        verdicts = parse_verdicts(c.text, len(cands))
        # a candidate the answer skipped counts as T (privacy first, as in the research)
        out = {_key(cand): verdicts.get(i, True) for i, cand in enumerate(cands, 1)}
        for v in out.values():
            if v:
                self.stats.verifier_true += 1
            else:
                self.stats.verifier_false += 1
        return out

    async def _run(self, text, role, context, fast_spans, candidates, deadline, usage, timings) -> LLMOutcome:
        thr = self.settings.uncertain_below
        vmode = self.settings.verifier
        uncertain = _dedupe_spans([s for s in fast_spans if s.score < thr] + list(candidates))
        verdicts: dict[tuple, bool] = {}
        verifier_failed: str | None = None
        if vmode == "uncertain" and uncertain:
            # independent calls: run them side by side to save latency
            det_task = asyncio.ensure_future(self._detect(text, role, context, deadline, usage, timings))
            ver_task = asyncio.ensure_future(self._verify(text, role, context, uncertain, deadline, usage, timings))
            try:
                found, unreviewed = await det_task
            except BaseException:
                ver_task.cancel()
                await asyncio.gather(ver_task, return_exceptions=True)
                raise
            try:
                verdicts = await ver_task
            except (LLMCallError, AnswerError) as exc:
                verifier_failed = exc.reason
        else:
            found, unreviewed = await self._detect(text, role, context, deadline, usage, timings)
        llm_spans = [Span(f.start, f.end, f.label, LLM_SOURCE, LLM_SCORE) for f in found]
        if vmode == "all":
            pool = _dedupe_spans([*fast_spans, *candidates, *llm_spans])
            try:
                verdicts = await self._verify(text, role, context, pool, deadline, usage, timings)
            except (LLMCallError, AnswerError) as exc:
                verifier_failed = exc.reason

        rejected = [Found(*k) for k, v in verdicts.items() if not v]
        final: list[Span] = []
        for s in fast_spans:
            v = verdicts.get(_key(s))
            if v is False and (s.score < thr or vmode == "all"):
                continue
            final.append(s)
        masked_unreviewed = 0
        for c in candidates:
            v = verdicts.get(_key(c))
            if v is True or (v is None and (verifier_failed or any(_overlaps(c, l) for l in llm_spans))):
                final.append(c)
            elif v is None and any(c.start < e and s < c.end for s, e in unreviewed):
                final.append(c)
                masked_unreviewed += 1
        kept_llm: list[Span] = []
        for l in llm_spans:
            v = verdicts.get(_key(l))
            if v is False:
                continue
            if v is None and any(l.start == r.start and l.end == r.end for r in rejected):
                continue
            kept_llm.append(l)
        final.extend(kept_llm)
        if masked_unreviewed:
            self.stats.masked_conservatively += masked_unreviewed
        learned = [l for l in kept_llm if not any(_overlaps(l, s) for s in fast_spans)]
        merged = union_merge(final)
        if verifier_failed:
            self.stats.degraded["verifier_" + verifier_failed] += 1
            return LLMOutcome(merged, ok=False, degraded=True, sent=True, reason="verifier_" + verifier_failed, learned=learned)
        return LLMOutcome(merged, ok=True, degraded=False, sent=True, learned=learned)


def _key(s: Span) -> tuple[int, int, str]:
    return (s.start, s.end, s.label)


def _dedupe_spans(spans: Sequence[Span]) -> list[Span]:
    seen: dict[tuple[int, int, str], Span] = {}
    for s in spans:
        key = (s.start, s.end, s.label)
        if key not in seen or s.score > seen[key].score:
            seen[key] = s
    return sorted(seen.values(), key=lambda s: (s.start, s.end))
