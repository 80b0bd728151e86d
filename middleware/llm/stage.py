"""The LLM stage: refine the fast pass's spans of one turn with an OpenAI-compatible model.

Transport-agnostic and stateless per session: the caller passes the turn's raw text, the fast
pass's spans, candidates and keeps, and the previous turns *already de-identified*; nothing raw
is kept after the call returns.

The model rules on what the fast pass doubts (``middleware/detection/evidence.py``):

- *certain* fast spans (self-introduction, name question answered, a person the session
  confirmed, speaker role, every pattern label) stay masked whatever the model says — a turn
  that tells the model "nothing here is a name" unmasks nothing certain;
- *doubtful* fast spans (learned reviewer, greeting of a name the session does not know yet,
  title, context guesses) stay masked only if the model marks them (a marked span overlapping
  them) and the verifier does not answer F; a verifier T keeps them masked too;
- ``candidates`` (doubtful spans the fast pass would *not* mask) and doubtful ``keeps`` (name-like
  words it kept: public figures, story characters) are masked when the model marks them and the
  verifier does not answer F, or the verifier answers T;
- a region of the turn the model's echo skipped was not reviewed: doubtful spans, candidates and
  keeps there are masked (fail closed);
- spans only the model marks are added (union); overlapping spans are merged into their union;
  a verifier F drops a model span of exactly that extent;
- any failure (timeout, budget overrun, outage, HTTP error, malformed or unalignable answer)
  → fail closed: fast spans + *all* candidates and doubtful keeps, ``degraded=True``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..detection.base import CORE_LABELS, Span, TurnContext
from ..detection.evidence import is_doubtful
from .align import AnswerError, Found, align_marked, contains_markers, locate_json, parse_json_entities, parse_verdicts
from .client import Completion, LLMCallError, ThrottledClient
from .gate import gate_reason, suspects
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
    #: doubtful fast spans the model confirmed (they stay masked): the session knows them now
    confirmed: list[Span] = field(default_factory=list)
    #: doubtful fast spans the model rejected (unmasked): the session forgets them as people
    rejected: list[Span] = field(default_factory=list)


def union_merge(spans: Sequence[Span]) -> list[Span]:
    """Overlapping spans become one span over their union (label/source of the strongest)."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda x: (x.start, -x.end)):
        if out and s.start < out[-1].end:
            prev = out[-1]
            best = max((prev, s), key=lambda x: (x.score, len(x)))
            out[-1] = Span(prev.start, max(prev.end, s.end), best.label, best.source, max(prev.score, s.score), best.evidence)
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

    def gate(self, text: str, fast_spans: Sequence[Span], candidates: Sequence[Span], keep: Callable[[str], bool] | None = None,
             keeps: Sequence[Span] = ()) -> str | None:
        return gate_reason(text, fast_spans, candidates, self.settings.gate, self.settings.uncertain_below, self.lexicon, keep, keeps)

    def doubtful_keeps(self, keeps: Sequence[Span]) -> list[Span]:
        """The keeps the model rules on (all but those the turn's metadata settles)."""
        thr = self.settings.uncertain_below
        return [k for k in keeps if k.label in self.labels and is_doubtful(k, thr)]

    def fail_closed(self, fast_spans: Sequence[Span], candidates: Sequence[Span], reason: str, *, sent: bool = True,
                    keeps: Sequence[Span] = (), text: str | None = None) -> LLMOutcome:
        """Fast-pass spans plus every candidate and doubtful keep masked — and, given the turn's
        ``text``, the name-like tokens nothing flagged that would have sent it to the model (a
        capitalised word inside a sentence, a lower-case name); counted as degraded."""
        extra = [*candidates, *self.doubtful_keeps(keeps)]
        if text is not None and "NAME" in self.labels:
            extra += suspects(text, [*fast_spans, *extra, *keeps], self.lexicon)
        self.stats.degraded[reason] += 1
        self.stats.masked_conservatively += len(extra)
        spans = union_merge([*fast_spans, *(_as_mask(s, "fail-closed") for s in extra)])
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
        keeps: Sequence[Span] = (),
    ) -> LLMOutcome:
        """Refine one turn. Never raises for model trouble: failures come back degraded.

        ``keep(token)``: the detector's confident keep decisions, for the gate only.
        ``keeps``: the name-like spans the fast pass decided to keep in this turn (``Span.evidence``
        ``keep-*``); the doubtful ones are reviewed and masked when the model marks them.
        """
        t0 = time.perf_counter()
        self.stats.turns += 1
        fast_spans = list(fast_spans)
        candidates = [c for c in candidates if c.label in self.labels]
        all_keeps = list(keeps)  # certain keeps too: they settle their tokens when failing closed
        reason = self.gate(text, fast_spans, candidates, keep, all_keeps) if self.enabled else None
        keeps = self.doubtful_keeps(all_keeps)
        if reason is None:
            self.stats.gated["off" if not self.enabled else self.settings.gate if self.settings.gate == "never" else "certain"] += 1
            return LLMOutcome(list(fast_spans), ok=True, degraded=False, sent=False, reason="gated")
        self.stats.sent[reason] += 1
        if len(text) > self.settings.max_turn_chars:
            return self.fail_closed(fast_spans, candidates, "too_long", keeps=all_keeps, text=text)
        role = ctx.role if ctx is not None else "student"
        context = list(context_turns)[-self.settings.context_turns :] if self.settings.context_turns else []
        usage: dict[str, dict[str, int]] = {}
        timings: dict[str, float] = {}
        budget = budget_s if budget_s is not None else self.settings.latency_budget_ms / 1000.0
        deadline = time.monotonic() + budget
        try:
            async with asyncio.timeout(budget):
                outcome = await self._run(text, role, context, fast_spans, candidates, keeps, deadline, usage, timings)
        except TimeoutError:
            outcome = self.fail_closed(fast_spans, candidates, "timeout", keeps=all_keeps, text=text)
        except LLMCallError as exc:
            outcome = self.fail_closed(fast_spans, candidates, exc.reason, keeps=all_keeps, text=text)
        except AnswerError as exc:
            outcome = self.fail_closed(fast_spans, candidates, exc.reason, keeps=all_keeps, text=text)
        except Exception as exc:  # never let the model take the turn down; no text in the log
            log.warning("llm stage error: %s", type(exc).__name__)
            outcome = self.fail_closed(fast_spans, candidates, "error", keeps=all_keeps, text=text)
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

    async def _run(self, text, role, context, fast_spans, candidates, keeps, deadline, usage, timings) -> LLMOutcome:
        thr = self.settings.uncertain_below
        vmode = self.settings.verifier
        doubtful = [s for s in fast_spans if is_doubtful(s, thr)]
        review = _dedupe_spans(doubtful + list(candidates) + list(keeps))
        verdicts: dict[tuple, bool] = {}
        verifier_failed: str | None = None
        if vmode == "uncertain" and review:
            # independent calls: run them side by side to save latency
            det_task = asyncio.ensure_future(self._detect(text, role, context, deadline, usage, timings))
            ver_task = asyncio.ensure_future(self._verify(text, role, context, review, deadline, usage, timings))
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
        llm_spans = [Span(f.start, f.end, f.label, LLM_SOURCE, LLM_SCORE, "llm") for f in found]
        if vmode == "all":
            pool = _dedupe_spans([*fast_spans, *candidates, *keeps, *llm_spans])
            try:
                verdicts = await self._verify(text, role, context, pool, deadline, usage, timings)
            except (LLMCallError, AnswerError) as exc:
                verifier_failed = exc.reason

        def ruling(s: Span) -> bool | None:
            """The model's word on a span it reviews: True mask, False leave, None not reviewed."""
            v = verdicts.get(_key(s))
            if v is True:
                return True
            marked = any(_overlaps(s, l) for l in llm_spans)
            if v is False:
                return False
            if marked:
                return True
            if verifier_failed or any(s.start < e and b < s.end for b, e in unreviewed):
                return None  # the model did not look at it: fail closed for this span
            return False

        rejected_keys = {k for k, v in verdicts.items() if not v}
        # model spans not verified F (themselves, or a reviewed span of the same extent)
        model_ok = [l for l in llm_spans if _key(l) not in rejected_keys]

        def model_extent(s: Span) -> bool:
            """The marking confirmed ``s`` with spans of its own: their extent replaces the fast
            pass's guess ("Maria Lopez" guessed, "Maria" marked: "Lopez" was left out)."""
            return any(_overlaps(s, l) and l.label == s.label for l in model_ok)

        final: list[Span] = []
        confirmed: list[Span] = []
        rejected: list[Span] = []
        masked_unreviewed = 0
        for s in fast_spans:
            if not is_doubtful(s, thr):
                final.append(s)  # certain: the model never unmasks it
                continue
            r = ruling(s)
            if r is False:
                rejected.append(s)
                continue
            if r is True:
                confirmed.append(s)
                if model_extent(s):
                    continue
            else:
                masked_unreviewed += 1
            final.append(s)
        taught: list[Span] = []
        for c in (*candidates, *keeps):
            r = ruling(c)
            if r is False:
                continue
            if r is None:
                masked_unreviewed += 1
                final.append(_as_mask(c, "fail-closed"))
                continue
            taught.append(_as_mask(c))
            if not model_extent(c):
                final.append(_as_mask(c))
        # a model span of another extent than a span the verifier rejected stays: "benjamin" alone
        # answered F, "benjamin a seiler" marked — the marking knows the name's extent
        kept_llm = model_ok
        final.extend(kept_llm)
        # ... and then the rejected span is not unmasked: the session learns the name, not a keep
        still = [r for r in rejected if any(_overlaps(r, l) and l.label == r.label for l in kept_llm)]
        if still:
            rejected = [r for r in rejected if r not in still]
            confirmed.extend(still)
        if masked_unreviewed:
            self.stats.masked_conservatively += masked_unreviewed
        reviewed = [*fast_spans, *candidates, *keeps]
        learned = [l for l in kept_llm if not any(_overlaps(l, s) for s in reviewed)]
        learned += taught
        self.stats.unmasked += len(rejected)
        merged = union_merge(final)
        if verifier_failed:
            self.stats.degraded["verifier_" + verifier_failed] += 1
            return LLMOutcome(merged, ok=False, degraded=True, sent=True, reason="verifier_" + verifier_failed,
                              learned=learned, confirmed=confirmed)
        return LLMOutcome(merged, ok=True, degraded=False, sent=True, learned=learned, confirmed=confirmed, rejected=rejected)


def _as_mask(s: Span, why: str = "llm") -> Span:
    """A candidate or keep to mask: ``why`` is its evidence now (``llm``: the model ruled it
    personal; ``fail-closed``: the model's ruling is missing)."""
    if s.evidence.startswith("keep") or not s.evidence:
        return Span(s.start, s.end, s.label, s.source, s.score, why)
    return s


def _key(s: Span) -> tuple[int, int, str]:
    return (s.start, s.end, s.label)


def _dedupe_spans(spans: Sequence[Span]) -> list[Span]:
    seen: dict[tuple[int, int, str], Span] = {}
    for s in spans:
        key = (s.start, s.end, s.label)
        if key not in seen or s.score > seen[key].score:
            seen[key] = s
    return sorted(seen.values(), key=lambda s: (s.start, s.end))
