"""The transport-agnostic pipeline: one input turn in, de-identified outputs out.

Used in-process by the Kafka worker (consumers/), by `plainsight redact` and `eval`, and by
anyone embedding plainsight. It holds the per-session state (detector memory + replacement
state) and never performs I/O of its own.

``process``: detect (the fast pass) → refine (the optional :class:`~middleware.refine.Refiner`,
i.e. the LLM stage) → finish (replace, advance the session). The replacer is injected: the
composition root passes the surrogate replacer (``surrogate.pipeline.build_pipeline``).

With a refiner, per ``llm.policy``:

- ``wait``: the turn awaits the refiner within ``llm.latency_budget_ms``; on overrun or any
  failure the turn fails closed (fast spans + all candidates masked) and both outputs carry
  ``degraded=True``.
- ``async-refine``: ``deid`` is the fast-pass result at once; ``logs`` is the fast-pass
  version too, and ``TurnResult.refined`` is a task that resolves to the refined logs output
  (``await result.final_logs()``). Refinements of one session complete in turn order; they
  run concurrently with the session's next turns and with other sessions.

Sliding context: the session keeps its last ``llm.context_turns`` *logs* outputs (already
de-identified; in async-refine the entry is upgraded to the refined text when it is ready) in
``SessionState.llm_context``. Nothing raw is kept. Candidates (doubtful spans the fast pass
would not mask) come from ``Detector.candidates`` and keeps (name-like spans it decided to keep)
from ``Detector.kept``; the session memory follows the refiner's ruling on doubtful spans
(``Detector.follow_ruling``: confirmed names become people, rejected ones are forgotten) and
learns what only the refiner found (``Detector.learn``); with ``llm.gate_trust_keep`` the
memory's keep decisions (``Detector.keep_test``) don't send a turn to the model by themselves.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from .config import Settings
from .detection.base import Detector, Span, TurnContext, resolve_overlaps
from .refine import Refinement, Refiner
from .replace import Replacer, apply_replacements, merge_adjacent
from .schemas import KNOWN_ROLES, InputTurn, OutputTurn
from .sessions import SessionState, SessionStore

log = logging.getLogger(__name__)


@dataclass(slots=True)
class TurnResult:
    """Outputs for one input turn: ``deid`` goes to the tutor topic, ``logs`` to the logging topic."""

    deid: OutputTurn
    logs: OutputTurn
    spans: list[Span]
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: the LLM stage failed closed for this turn (outputs flagged degraded)
    degraded: bool = False
    #: the refiner's (LLM stage's) outcome when it ran
    llm: Refinement | None = None
    #: policy "async-refine": a task resolving to the refined ``logs`` output
    refined: asyncio.Future | None = None

    async def final_logs(self) -> OutputTurn:
        """The output for the logging topic: the refined version when one is coming."""
        if self.refined is None:
            return self.logs
        try:
            return await self.refined
        except asyncio.CancelledError:  # shut down before the refinement finished
            return self.logs.model_copy(update={"degraded": True})


def build_detector(settings: Settings) -> Detector:
    engine = settings.detection.engine
    if engine == "presidio":
        from .detection.presidio_engine import PresidioDetector

        from .detection.registry import builtin_names

        # the recognizers added by configuration run with the Presidio baseline too
        added = [r for r in detection_registry(settings).recognizers if r.name not in builtin_names()]
        return PresidioDetector(settings.detection.spacy_model, settings.detection.verify_model_checksums,
                                recognizers=added)
    from .detection.cascade import Cascade

    return Cascade.from_settings(settings)


def detection_registry(settings: Settings):
    """The recognizer registry the configuration describes (labels, sources, surrogate shapes)."""
    from .detection.registry import RecognizerRegistry

    return RecognizerRegistry.from_settings(settings.detection)


def build_llm_stage(settings: Settings) -> Refiner | None:
    """The LLM stage (middleware/llm/) when configured (``llm.base_url``/``llm.model``), else None."""
    if not settings.llm.is_enabled:
        return None
    from .llm import LLMStage
    from .llm.prompts import Prompts

    # the LLM marks the labels of configured recognizers too, each with its marker and description
    reg = detection_registry(settings)
    labels = (*settings.detection.labels, *(l for l in reg.added_labels if l not in settings.detection.labels))
    prompts = Prompts.load(settings.llm.prompts_dir, labels, reg.descriptions)
    return LLMStage.from_settings(settings, labels=labels, prompts=prompts)


class Pipeline:
    """Detect → refine → finish, with per-session state. ``process`` is async so the refiner can await."""

    def __init__(
        self,
        settings: Settings | None = None,
        detector: Detector | None = None,
        replacer: Replacer | None = None,
        llm: Refiner | None = None,
    ) -> None:
        if replacer is None:
            raise TypeError("Pipeline needs a replacer: use surrogate.pipeline.build_pipeline(settings), "
                            "or pass replacer=middleware.replace.TagReplacer()")
        self.settings = settings or Settings()
        self.detector = detector or build_detector(self.settings)
        self.replacer = replacer
        #: the optional refiner, the LLM stage (None = fast pass only)
        self.llm: Refiner | None = llm if llm is not None else build_llm_stage(self.settings)
        #: per session, the last background refinement (policy async-refine), to keep turn order
        self._refine_tail: dict[str, asyncio.Future] = {}
        # the configured labels plus those of the recognizers added by configuration (STUDENT_ID, ...)
        self.labels = frozenset(self.settings.detection.labels) | frozenset(detection_registry(self.settings).added_labels)
        self.sessions = SessionStore(
            self.new_session,
            max_sessions=self.settings.session.max_sessions,
            ttl_s=self.settings.session.ttl_s,
        )

    def new_session(self, session_id: str) -> SessionState:
        return SessionState(
            session_id=session_id,
            detect_memory=self.detector.new_memory(),
            replace_state=self.replacer.new_state(session_id),
        )

    @staticmethod
    def _context(turn: InputTurn, state: SessionState) -> TurnContext:
        return TurnContext(
            role=turn.role,
            session_id=turn.session_id,
            turn_index=state.turns,
            metadata=dict(turn.metadata or {}),
        )

    def detect(self, turn: InputTurn, state: SessionState, ctx: TurnContext | None = None) -> list[Span]:
        ctx = ctx or self._context(turn, state)
        spans = self.detector.detect(turn.text, ctx, state.detect_memory)
        return resolve_overlaps([s for s in spans if s.label in self.labels])

    def _role_out(self, role: str, state: SessionState, mode: str) -> str:
        """A speaker field that isn't a known role may be a person's name: replace it like one."""
        if role.strip().casefold() in KNOWN_ROLES:
            return role
        span = Span(0, len(role), "NAME", "role")
        try:
            out, _ = self.replacer.replace(role, [span], state.replace_state, mode)
        except Exception as exc:  # noqa: BLE001  (fail closed: see render)
            log.warning("replacing a speaker failed (%s): written as [NAME]", type(exc).__name__)
            return "[NAME]"
        return out

    def _metadata_out(self, turn: InputTurn) -> dict | None:
        """Only allow-listed metadata keys travel to the outputs (metadata may hold PII)."""
        keys = self.settings.output.metadata_keys
        if not keys or not turn.metadata:
            return None
        return {k: turn.metadata[k] for k in keys if k in turn.metadata} or None

    async def reidentify(self, turn: InputTurn) -> OutputTurn:
        """A tutor reply written with surrogates → the same reply with the real values restored."""
        t0 = time.perf_counter()
        state = self.sessions.get(turn.session_id)
        text, ents = self.replacer.reidentify(turn.text, state.replace_state)
        return OutputTurn(
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            role=turn.role,
            text=text,
            entities=ents,
            mode="reidentified",
            sent_at=float(turn.sent_at),
            metadata=self._metadata_out(turn),
            timings_ms={"reidentify": (time.perf_counter() - t0) * 1e3},
        )

    async def aclose(self, drain_timeout_s: float = 10.0) -> None:
        """Let pending refinements (policy async-refine) finish, then close the refiner's client."""
        pending = list(self._refine_tail.values())
        if pending:
            await asyncio.wait(pending, timeout=drain_timeout_s)
        if self.llm is not None:
            await self.llm.aclose()

    def warm_up(self) -> None:
        """Run a few synthetic turns through detection and replacement (then forget them), so
        the first real turns don't pay for lazy initialisation."""
        samples = [
            "Hi Maria, I'm Tom. My email is tom.lee@example.com and my phone is (415) 555-0100.",
            "Julia bought 3 packs of pencils. How many pencils does she have?",
            "thanks ms johnson! see https://example.org/u/tom_lee",
        ]
        sid = "\x00plainsight-warm-up"
        for i, text in enumerate(samples):
            self.process_sync(InputTurn(session_id=sid, turn_id=i, role="student", text=text, sent_at=0.0))
        self.sessions.drop(sid)
        prepare = getattr(self.replacer, "warm_up", None)  # a replacer's own lazy tables (optional hook)
        if prepare is not None:
            prepare()

    def render(self, turn: InputTurn, state: SessionState, spans: list[Span], mode: str,
               degraded: bool = False) -> OutputTurn:
        """The output turn for ``spans`` (input positions) in ``mode``. Should the replacer fail (a
        bug on an odd value), the turn fails closed rather than raising: every span is written as
        ``[LABEL]``, nothing is added to the session's mapping, and the output is flagged degraded."""
        merged = merge_adjacent(turn.text, spans)
        try:
            text, ents = self.replacer.replace(turn.text, merged, state.replace_state, mode)
        except Exception as exc:  # noqa: BLE001  (the exception's message may quote the value: type only)
            log.warning("replacement failed (%s): the turn's spans are written as [LABEL] (degraded)",
                        type(exc).__name__)
            text, ents = apply_replacements(turn.text, merged, [f"[{s.label}]" for s in merged])
            degraded = True
        return OutputTurn(
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            role=self._role_out(turn.role, state, mode),
            text=text,
            entities=ents,
            degraded=degraded,
            mode=mode,
            sent_at=float(turn.sent_at),
            metadata=self._metadata_out(turn),
        )

    # ------------------------------------------------------------------ detect → refine → finish
    async def process(self, turn: InputTurn) -> TurnResult:
        if self.llm is None or not self.llm.enabled:
            return self.process_sync(turn)
        t0 = time.perf_counter()
        state = self.sessions.get(turn.session_id)
        turn_index = state.turns
        ctx = self._context(turn, state)
        fast = self.detect(turn, state, ctx)
        cands = self._hook(self.detector.candidates, turn, ctx, state)
        keeps = self._hook(self.detector.kept, turn, ctx, state)
        context = [(r, t) for _, r, t in state.llm_context]
        t1 = time.perf_counter()
        timings = {"fast_pass": (t1 - t0) * 1e3}
        llm_s = self.settings.llm
        keep = self.detector.keep_test(state.detect_memory) if llm_s.gate_trust_keep else None

        if llm_s.policy == "wait":
            outcome = await self.llm.refine(turn.text, ctx, fast, cands, context,
                                            budget_s=llm_s.latency_budget_ms / 1000.0, keep=keep, keeps=keeps)
            t2 = time.perf_counter()
            _llm_timings(timings, outcome)
            self._follow(state, turn.text, outcome)
            deid, logs = self._finish(turn, state, outcome.spans, outcome.degraded, timings, t2, t0, remember=True)
            return TurnResult(deid=deid, logs=logs, spans=outcome.spans, timings_ms=timings,
                              degraded=outcome.degraded, llm=outcome)

        # async-refine: answer now with the fast pass, refine the logs version in the background
        deid, logs = self._finish(turn, state, fast, False, timings, t1, t0, remember=True)
        sid = turn.session_id
        prev = self._refine_tail.get(sid)
        task = asyncio.ensure_future(self._refine_later(turn, state, ctx, fast, cands, keeps, context, keep, prev,
                                                        turn_index, t0))
        self._refine_tail[sid] = task

        def _clear(t: asyncio.Future, sid: str = sid) -> None:
            if self._refine_tail.get(sid) is t:
                del self._refine_tail[sid]

        task.add_done_callback(_clear)
        return TurnResult(deid=deid, logs=logs, spans=fast, timings_ms=timings, degraded=False, refined=task)

    def process_sync(self, turn: InputTurn) -> TurnResult:
        """The fast pass alone (no refiner): detect → finish."""
        t0 = time.perf_counter()
        state = self.sessions.get(turn.session_id)
        spans = self.detect(turn, state)
        t1 = time.perf_counter()
        timings = {"fast_pass": (t1 - t0) * 1e3}
        deid, logs = self._finish(turn, state, spans, False, timings, t1, t0)
        return TurnResult(deid=deid, logs=logs, spans=spans, timings_ms=timings)

    def _hook(self, hook, turn: InputTurn, ctx: TurnContext, state: SessionState) -> list[Span]:
        """``Detector.candidates`` / ``Detector.kept`` for the turn just detected (configured labels)."""
        try:
            return [s for s in hook(turn.text, ctx, state.detect_memory) if s.label in self.labels]
        except Exception as exc:  # a detector hook must not take the turn down
            log.warning("detector %s hook failed: %s", hook.__name__, type(exc).__name__)
            return []

    def _follow(self, state: SessionState, text: str, outcome: Refinement) -> None:
        """The session memory follows the refiner's ruling, then learns what only it found."""
        self.detector.follow_ruling(state.detect_memory, text, outcome.confirmed, outcome.rejected)
        self.detector.learn(state.detect_memory, text, outcome.learned)

    def _finish(self, turn: InputTurn, state: SessionState, spans: list[Span], degraded: bool,
                timings: dict[str, float], t_from: float, t0: float,
                remember: bool = False) -> tuple[OutputTurn, OutputTurn]:
        """Render both outputs, advance the session and (``remember``: the refiner ran) add the turn
        to the refiner's sliding context; ``timings`` gets the surrogate and total times (ms)."""
        out_cfg = self.settings.output
        deid = self.render(turn, state, spans, out_cfg.deid_mode, degraded)
        # the same mode on both topics (the default): one rendering, two objects
        logs = (deid.model_copy(update={"entities": list(deid.entities)}) if out_cfg.logs_mode == out_cfg.deid_mode
                else self.render(turn, state, spans, out_cfg.logs_mode, degraded))
        remembered = remember and self._remember(state, logs.role, logs.text)
        state.turns += 1
        # persist when the mapping, the memory or the context may have changed (anything found,
        # first turn, a turn added to the sliding context)
        state.dirty = state.dirty or bool(spans) or state.turns == 1 or remembered
        t = time.perf_counter()
        timings["surrogate"] = (t - t_from) * 1e3
        timings["total"] = (t - t0) * 1e3
        for o in (deid, logs):
            o.timings_ms = dict(timings)
        return deid, logs

    def _remember(self, state: SessionState, role: str, text: str) -> bool:
        """Add the turn's logs output to the refiner's sliding context."""
        keep = self.settings.llm.context_turns
        if keep <= 0:
            return False
        hist = state.llm_context
        hist.append([state.turns, role, text])
        del hist[:-keep]
        return True

    async def _refine_later(self, turn: InputTurn, state: SessionState, ctx: TurnContext, fast: list[Span],
                            cands: list[Span], keeps: list[Span], context: list[tuple[str, str]], keep,
                            prev: asyncio.Future | None,
                            turn_index: int, t0: float) -> OutputTurn:
        refiner = self.llm
        assert refiner is not None
        try:
            outcome = await refiner.refine(turn.text, ctx, fast, cands, context,
                                           budget_s=self.settings.llm.async_budget_ms / 1000.0, keep=keep, keeps=keeps)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refine never raises for model trouble; this is a bug guard
            log.warning("llm refinement failed: %s", type(exc).__name__)
            outcome = refiner.fail_closed(fast, cands, "error", keeps=keeps, text=turn.text)
        if prev is not None and not prev.done():
            await asyncio.wait({prev})  # the session's logs stay in turn order
        t1 = time.perf_counter()
        out = self.render(turn, state, outcome.spans, self.settings.output.logs_mode, outcome.degraded)
        self._follow(state, turn.text, outcome)
        for entry in state.llm_context:  # upgrade the context entry to the refined text
            if entry[0] == turn_index:
                entry[2] = out.text
        state.dirty = True
        timings: dict[str, float] = {}
        _llm_timings(timings, outcome)
        timings["surrogate"] = (time.perf_counter() - t1) * 1e3
        timings["total"] = (time.perf_counter() - t0) * 1e3
        out.timings_ms = timings
        return out


def _llm_timings(timings: dict[str, float], outcome: Refinement) -> None:
    llm_ms = outcome.timings.get("marking", 0.0) + outcome.timings.get("json", 0.0)
    if outcome.sent:
        timings["llm"] = llm_ms if llm_ms else outcome.timings.get("total", 0.0)
        if "verifier" in outcome.timings:
            timings["verifier"] = outcome.timings["verifier"]
