"""The refine stage's interface: what the pipeline needs from a second opinion on a turn's spans.

The pipeline (``middleware/pipeline.py``) runs detect → refine → finish. A :class:`Refiner`
(the LLM stage, ``middleware/llm/stage.py``, implements it) gets the raw text of one turn, the
fast pass's spans, the detector's doubtful candidates and the session's previous turns
*already de-identified*, and answers with a :class:`Refinement`. It keeps nothing raw and knows
nothing of the pipeline, the session store or the transport.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence

from .detection.base import Span, TurnContext


class Refinement(Protocol):
    """A refiner's decision for one turn."""

    #: the spans to replace (input positions)
    spans: list[Span]
    #: failed closed: the refiner's judgement is missing, outputs are flagged degraded
    degraded: bool
    #: the turn was sent to the refiner's model (False: gated out)
    sent: bool
    #: per step, ms (e.g. "marking", "json", "verifier", "total")
    timings: dict[str, float]
    #: spans the refiner found alone (not the fast pass), to teach the detector's session memory
    learned: list[Span]
    #: doubtful fast-pass spans the refiner confirmed (they stay masked) / rejected (unmasked)
    confirmed: list[Span]
    rejected: list[Span]


class Refiner(Protocol):
    #: counters the worker exports as metrics (``middleware.llm.LLMStats``)
    stats: Any

    #: False: the pipeline skips the stage (fast pass only)
    @property
    def enabled(self) -> bool: ...

    async def refine(
        self,
        text: str,
        ctx: TurnContext | None,
        fast_spans: Sequence[Span],
        candidates: Sequence[Span] = (),
        context_turns: Sequence[tuple[str, str]] = (),
        *,
        budget_s: float | None = None,
        keep: Callable[[str], bool] | None = None,
        keeps: Sequence[Span] = (),
    ) -> Refinement:
        """Never raises for model trouble: a failure comes back degraded (fail closed). ``keeps``:
        name-like spans the fast pass decided to keep, for the refiner to rule on."""
        ...

    def fail_closed(self, fast_spans: Sequence[Span], candidates: Sequence[Span], reason: str, *,
                    keeps: Sequence[Span] = (), text: str | None = None) -> Refinement:
        """Fast spans plus every candidate (and doubtful keep, and with ``text`` the name-like tokens
        that would have sent the turn to the model), degraded (when refining itself broke)."""
        ...

    async def aclose(self) -> None: ...
