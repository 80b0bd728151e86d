"""How the Pipeline runs a turn when the LLM stage is on (called from ``Pipeline.process``).

fast pass → gate → (model + verifier) → merge → replace, per policy:

- ``wait``: the turn awaits the stage within ``llm.latency_budget_ms``; on overrun or any
  failure the turn fails closed (fast spans + all candidates masked) and both outputs carry
  ``degraded=True``.
- ``async-refine``: ``deid`` is the fast-pass result at once; ``logs`` is the fast-pass
  version too, and ``TurnResult.refined`` is a task that resolves to the refined logs output
  (``await result.final_logs()``). Refinements of one session complete in turn order; they
  run concurrently with the session's next turns and with other sessions.

Sliding context: the session keeps its last ``llm.context_turns`` *logs* outputs (already
de-identified; in async-refine the entry is upgraded to the refined text when it is ready) in
``SessionState.extra["llm_context"]``. Nothing raw is kept.

Gate: with ``llm.gate_trust_keep``, tokens the session memory settled as "keep"
(``memory.is_kept(token)``: word-problem characters, public figures) don't send a turn to
the model by themselves (off by default: those are the fast pass's riskiest decisions).

Candidates and keeps: if the detector has ``candidates(text, ctx, memory) -> list[Span]``
(doubtful spans it would not mask) and ``kept(text, ctx, memory) -> list[Span]`` (name-like
spans it decided to keep, evidence ``keep-*``), they go to the stage (empty lists otherwise).

Session memory follows the model's ruling (``middleware/detection/evidence.py``): doubtful names
it confirmed, and names only it found, become confirmed people (later mentions are certain);
doubtful names it rejected are forgotten as people and remembered as kept. A detector with
``learn(memory, text, spans)`` is taught the model's own finds through it instead.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from ..detection.base import Span, TurnContext
from ..schemas import InputTurn, OutputTurn

if TYPE_CHECKING:  # pragma: no cover
    from ..pipeline import Pipeline, TurnResult
    from ..sessions import SessionState
    from .stage import LLMOutcome

log = logging.getLogger(__name__)

CONTEXT_KEY = "llm_context"
#: strength given to names only the model found when teaching a memory that is not a SessionMemory
LEARN_STRENGTH = 0.8
#: strength of a name the model confirmed (or found alone): a confirmed person, certain from now on
CONFIRM_STRENGTH = 1.0


def _output(p: "Pipeline", turn: InputTurn, state: "SessionState", spans: list[Span], mode: str, degraded: bool) -> OutputTurn:
    return p.render(turn, state, spans, mode, degraded)


def _candidates(p: "Pipeline", turn: InputTurn, ctx: TurnContext, state: "SessionState") -> list[Span]:
    fn = getattr(p.detector, "candidates", None)
    if not callable(fn):
        return []
    try:
        return [s for s in fn(turn.text, ctx, state.detect_memory) if s.label in p.labels]
    except Exception as exc:  # a detector hook must not take the turn down
        log.warning("detector candidates hook failed: %s", type(exc).__name__)
        return []


def _kept(p: "Pipeline", turn: InputTurn, ctx: TurnContext, state: "SessionState") -> list[Span]:
    fn = getattr(p.detector, "kept", None)
    if not callable(fn):
        return []
    try:
        return [s for s in fn(turn.text, ctx, state.detect_memory) if s.label in p.labels]
    except Exception as exc:  # a detector hook must not take the turn down
        log.warning("detector kept hook failed: %s", type(exc).__name__)
        return []


def apply_ruling(p: "Pipeline", state: "SessionState", text: str, outcome: "LLMOutcome") -> int:
    """The session memory follows the model's ruling on this turn (see the module docstring)."""
    from ..detection import evidence

    mem = state.detect_memory
    n = evidence.confirm(mem, text, outcome.confirmed, CONFIRM_STRENGTH)
    n += evidence.reject(mem, text, outcome.rejected)
    return n + teach(p, state, text, outcome.learned)


def teach(p: "Pipeline", state: "SessionState", text: str, learned: list[Span]) -> int:
    if not learned:
        return 0
    mem = state.detect_memory
    fn = getattr(p.detector, "learn", None)
    if callable(fn):
        fn(mem, text, learned)
        return len(learned)
    from ..detection import evidence

    n = evidence.confirm(mem, text, learned, CONFIRM_STRENGTH)
    if n or not learned:
        return n
    add = getattr(mem, "add_person", None)  # another detector's memory
    if not callable(add):
        return 0
    for s in learned:
        if s.label == "NAME":
            add(text[s.start : s.end], LEARN_STRENGTH)
            n += 1
    return n


def _remember(p: "Pipeline", state: "SessionState", role: str, text: str, turn_index: int) -> None:
    keep = p.settings.llm.context_turns
    if keep <= 0:
        return
    hist = state.extra.setdefault(CONTEXT_KEY, [])
    hist.append([turn_index, role, text])
    del hist[:-keep]


def _upgrade_context(state: "SessionState", turn_index: int, text: str) -> None:
    for entry in state.extra.get(CONTEXT_KEY, ()):
        if entry[0] == turn_index:
            entry[2] = text


def _keep(state: "SessionState", settings) -> Any:
    """The session memory's confident keep decisions (story characters, public figures), if any
    and if ``llm.gate_trust_keep``."""
    if not settings.llm.gate_trust_keep:
        return None
    fn = getattr(state.detect_memory, "is_kept", None)
    return fn if callable(fn) else None


def _context(state: "SessionState") -> list[tuple[str, str]]:
    return [(r, t) for _, r, t in state.extra.get(CONTEXT_KEY, ())]


async def process_with_llm(p: "Pipeline", turn: InputTurn) -> "TurnResult":
    from ..pipeline import TurnResult

    stage = p.llm
    s = p.settings
    t0 = time.perf_counter()
    state = p.sessions.get(turn.session_id)
    turn_index = state.turns
    ctx = TurnContext(role=turn.role, session_id=turn.session_id, turn_index=turn_index, metadata=dict(turn.metadata or {}))
    fast = p.detect(turn, state)
    cands = _candidates(p, turn, ctx, state)
    keeps = _kept(p, turn, ctx, state)
    context = _context(state)
    t1 = time.perf_counter()
    timings = {"fast_pass": (t1 - t0) * 1e3}

    if s.llm.policy == "wait":
        outcome = await stage.refine(turn.text, ctx, fast, cands, context, budget_s=s.llm.latency_budget_ms / 1000.0,
                                     keep=_keep(state, p.settings), keeps=keeps)
        t2 = time.perf_counter()
        _llm_timings(timings, outcome)
        apply_ruling(p, state, turn.text, outcome)
        deid, logs = _emit(p, turn, state, outcome.spans, outcome.degraded, turn_index, timings, t2, t0)
        return TurnResult(deid=deid, logs=logs, spans=outcome.spans, timings_ms=timings, degraded=outcome.degraded, llm=outcome)

    # async-refine: answer now with the fast pass, refine the logs version in the background
    deid, logs = _emit(p, turn, state, fast, False, turn_index, timings, t1, t0)
    prev = p._refine_tail.get(turn.session_id)
    task = asyncio.ensure_future(_refine_later(p, turn, state, ctx, fast, cands, keeps, context, prev, turn_index, t0))
    sid = turn.session_id
    p._refine_tail[sid] = task

    def _clear(t: asyncio.Future, sid: str = sid) -> None:
        if p._refine_tail.get(sid) is t:
            del p._refine_tail[sid]

    task.add_done_callback(_clear)
    return TurnResult(deid=deid, logs=logs, spans=fast, timings_ms=timings, degraded=False, refined=task)


def _emit(p: "Pipeline", turn: InputTurn, state: "SessionState", spans: list[Span], degraded: bool,
          turn_index: int, timings: dict[str, float], t_from: float, t0: float) -> tuple[OutputTurn, OutputTurn]:
    """Render both outputs, advance the session and remember the turn for the sliding context."""
    out = p.settings.output
    deid = _output(p, turn, state, spans, out.deid_mode, degraded)
    logs = _output(p, turn, state, spans, out.logs_mode, degraded)
    state.turns += 1
    state.dirty = True
    _remember(p, state, logs.role, logs.text, turn_index)
    t = time.perf_counter()
    timings["surrogate"] = (t - t_from) * 1e3
    timings["total"] = (t - t0) * 1e3
    for o in (deid, logs):
        o.timings_ms = dict(timings)
    return deid, logs


def _llm_timings(timings: dict[str, float], outcome: "LLMOutcome") -> None:
    llm_ms = outcome.timings.get("marking", 0.0) + outcome.timings.get("json", 0.0)
    if outcome.sent:
        timings["llm"] = llm_ms if llm_ms else outcome.timings.get("total", 0.0)
        if "verifier" in outcome.timings:
            timings["verifier"] = outcome.timings["verifier"]


async def _refine_later(
    p: "Pipeline",
    turn: InputTurn,
    state: "SessionState",
    ctx: TurnContext,
    fast: list[Span],
    cands: list[Span],
    keeps: list[Span],
    context: list[tuple[str, str]],
    prev: asyncio.Future | None,
    turn_index: int,
    t0: float,
) -> OutputTurn:
    stage = p.llm
    try:
        outcome: Any = await stage.refine(
            turn.text, ctx, fast, cands, context, budget_s=p.settings.llm.async_budget_ms / 1000.0, keep=_keep(state, p.settings),
            keeps=keeps,
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # refine never raises for model trouble; this is a bug guard
        log.warning("llm refinement failed: %s", type(exc).__name__)
        outcome = stage.fail_closed(fast, cands, "error", keeps=keeps, text=turn.text)
    if prev is not None and not prev.done():
        await asyncio.wait({prev})  # the session's logs stay in turn order
    t1 = time.perf_counter()
    out = _output(p, turn, state, outcome.spans, p.settings.output.logs_mode, outcome.degraded)
    apply_ruling(p, state, turn.text, outcome)
    _upgrade_context(state, turn_index, out.text)
    state.dirty = True
    timings: dict[str, float] = {}
    _llm_timings(timings, outcome)
    timings["surrogate"] = (time.perf_counter() - t1) * 1e3
    timings["total"] = (time.perf_counter() - t0) * 1e3
    out.timings_ms = timings
    return out
