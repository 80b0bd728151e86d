"""The transport-agnostic pipeline: one input turn in, de-identified outputs out.

Used in-process by the Kafka worker (consumers/), by `plainsight redact` and `eval`, and by
anyone embedding plainsight. It holds the per-session state (detector memory + replacement
state) and never performs I/O of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from .config import Settings
from .detection.base import Detector, Span, TurnContext, resolve_overlaps
from .replace import Replacer
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
    #: the LLM stage's outcome (middleware.llm.LLMOutcome) when it ran
    llm: Any = None
    #: policy "async-refine": a task resolving to the refined ``logs`` output
    refined: Any = None

    async def final_logs(self) -> OutputTurn:
        """The output for the logging topic: the refined version when one is coming."""
        if self.refined is None:
            return self.logs
        try:
            return await self.refined
        except asyncio.CancelledError:  # shut down before the refinement finished
            return self.logs.model_copy(update={"degraded": True})


_JOINABLE = frozenset(" \t\r\n,;")


def merge_adjacent(text: str, spans: list[Span], labels: frozenset[str] = frozenset({"ADDRESS"})) -> list[Span]:
    """Join spans of ``labels`` separated only by spaces, commas or line breaks: the detector
    reports an address block part by part (as labelled data does), but one address must become
    one surrogate address, not a patchwork of fake parts."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        prev = out[-1] if out else None
        if (prev is not None and prev.label == s.label and s.label in labels and prev.end <= s.start
                and all(ch in _JOINABLE for ch in text[prev.end : s.start])):
            out[-1] = Span(prev.start, s.end, prev.label, prev.source, max(prev.score, s.score))
        else:
            out.append(s)
    return out


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


def build_llm_stage(settings: Settings):
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


def build_replacer(settings: Settings) -> Replacer:
    """The surrogate replacer (surrogate/); it also serves the ``tag`` and ``redact`` modes."""
    from surrogate import SurrogateReplacer

    return SurrogateReplacer.from_settings(settings)


class Pipeline:
    """Detect → replace, with per-session state. ``process`` is async so later stages (LLM) can await."""

    def __init__(
        self,
        settings: Settings | None = None,
        detector: Detector | None = None,
        replacer: Replacer | None = None,
        llm: Any = None,
    ) -> None:
        self.settings = settings or Settings()
        self.detector = detector or build_detector(self.settings)
        self.replacer = replacer or build_replacer(self.settings)
        #: the optional LLM stage (None = fast pass only); see middleware/llm/integrate.py
        self.llm = llm if llm is not None else build_llm_stage(self.settings)
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

    def detect(self, turn: InputTurn, state: SessionState) -> list[Span]:
        ctx = TurnContext(
            role=turn.role,
            session_id=turn.session_id,
            turn_index=state.turns,
            metadata=dict(turn.metadata or {}),
        )
        spans = self.detector.detect(turn.text, ctx, state.detect_memory)
        return resolve_overlaps([s for s in spans if s.label in self.labels])

    def _role_out(self, role: str, state: SessionState, mode: str) -> str:
        """A speaker field that isn't a known role may be a person's name: replace it like one."""
        if role.strip().casefold() in KNOWN_ROLES:
            return role
        span = Span(0, len(role), "NAME", "role")
        out, _ = self.replacer.replace(role, [span], state.replace_state, mode)
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
        fn = getattr(self.replacer, "reidentify", None)
        if fn is None:
            text, ents = turn.text, []
        else:
            text, ents = fn(turn.text, state.replace_state)
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

    async def process(self, turn: InputTurn) -> TurnResult:
        if self.llm is not None and self.llm.enabled:
            from .llm.integrate import process_with_llm

            return await process_with_llm(self, turn)
        return self.process_sync(turn)

    async def aclose(self, drain_timeout_s: float = 10.0) -> None:
        """Let pending refinements (policy async-refine) finish, then close the LLM client."""
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

    def render(self, turn: InputTurn, state: SessionState, spans: list[Span], mode: str,
               degraded: bool = False) -> OutputTurn:
        """The output turn for ``spans`` (input positions) in ``mode``."""
        text, ents = self.replacer.replace(turn.text, merge_adjacent(turn.text, spans), state.replace_state, mode)
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

    def process_sync(self, turn: InputTurn) -> TurnResult:
        t0 = time.perf_counter()
        state = self.sessions.get(turn.session_id)
        spans = self.detect(turn, state)
        t1 = time.perf_counter()
        out_cfg = self.settings.output
        deid = self.render(turn, state, spans, out_cfg.deid_mode)
        # the same mode on both topics (the default): one rendering, two objects
        logs = (deid.model_copy(update={"entities": list(deid.entities)}) if out_cfg.logs_mode == out_cfg.deid_mode
                else self.render(turn, state, spans, out_cfg.logs_mode))
        outs = {"deid": deid, "logs": logs}
        t2 = time.perf_counter()
        state.turns += 1
        # persist when the mapping or the memory may have changed (anything found, first turn)
        state.dirty = state.dirty or bool(spans) or state.turns == 1
        timings = {"fast_pass": (t1 - t0) * 1e3, "surrogate": (t2 - t1) * 1e3, "total": (t2 - t0) * 1e3}
        for o in outs.values():
            o.timings_ms = dict(timings)
        return TurnResult(deid=outs["deid"], logs=outs["logs"], spans=spans, timings_ms=timings)
