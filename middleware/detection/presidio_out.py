"""Presidio out: plainsight's name finding as a Presidio ``EntityRecognizer``.

:class:`PlainsightRecognizer` runs plainsight's name finder (chat cues, the name lexicon, the
learned reviewer, keep rules for public figures and story characters) inside any Presidio
``AnalyzerEngine`` and returns ``RecognizerResult`` s of entity ``PERSON`` with an explanation
naming the evidence ("intro": a self-introduction, "direct": a greeting or vocative, "memory":
a person already confirmed in the session, "model": the learned reviewer, ...)::

    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from plainsight.middleware.detection.presidio_engine import pinned_nlp_engine
    from plainsight.middleware.detection.presidio_out import PlainsightRecognizer

    nlp = pinned_nlp_engine()                        # or your own NLP engine
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.load_predefined_recognizers(nlp_engine=nlp, languages=["en"])
    names = PlainsightRecognizer()
    registry.add_recognizer(names)
    analyzer = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=["en"])
    analyzer.analyze(text="ok so my name is amara", language="en")

(``examples/presidio_names.py`` runs this.)

Without session memory each call stands alone. To let a conversation's earlier turns count
("Hi Maria" in turn 1 makes a lone "maria" in turn 5 a person), keep one memory per
conversation and pass it, for the calls made through the engine, with :meth:`session`::

    memory = names.new_memory()
    for turn in conversation:
        with names.session(memory, role=turn.role):
            results = analyzer.analyze(text=turn.text, language="en")

or call ``names.analyze(text, ["PERSON"], None, memory=memory)`` directly. The memory is a
plain dataclass (:class:`~middleware.detection.memory.SessionMemory`); it holds names, so store
it as you would store the conversation.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Iterator, List, Optional

from presidio_analyzer import AnalysisExplanation, EntityRecognizer, RecognizerResult

from .base import TurnContext
from .memory import SessionMemory

#: What each evidence string means, for the textual explanation.
_EVIDENCE = {
    "intro": "self-introduction or the answer to a name question",
    "direct": "greeting or vocative",
    "memory": "a person already confirmed in this conversation",
    "title": "after a title (Mr, Ms, Dr, ...)",
    "model": "plainsight's learned name reviewer",
    "rules": "name lexicon and context rules",
    "context": "full name or list neighbour of a name",
    "bounded": "fail-closed bound",
}


@dataclass(slots=True)
class _Turn:
    memory: SessionMemory
    role: str
    session_id: str
    metadata: dict


_CURRENT: contextvars.ContextVar[_Turn | None] = contextvars.ContextVar("plainsight_presidio_turn", default=None)


class PlainsightRecognizer(EntityRecognizer):
    """plainsight's name finding as a Presidio recognizer (entity ``PERSON`` by default)."""

    def __init__(self, supported_language: str = "en", supported_entity: str = "PERSON",
                 name: str = "PlainsightRecognizer", use_model: bool = True) -> None:
        self._entity = supported_entity
        self._use_model = use_model
        self._names = None
        super().__init__(supported_entities=[supported_entity], name=name, supported_language=supported_language)

    def load(self) -> None:
        from .name_recognizer import NameRecognizer
        from .names import NameFinder

        if self._names is None:
            self._names = NameRecognizer(NameFinder(model=True if self._use_model else None))

    @staticmethod
    def new_memory() -> SessionMemory:
        """A fresh conversation memory for :meth:`session` / ``analyze(memory=...)``."""
        return SessionMemory()

    @contextlib.contextmanager
    def session(self, memory: SessionMemory, role: str = "student", session_id: str = "",
                metadata: dict | None = None) -> Iterator[SessionMemory]:
        """Calls made through an ``AnalyzerEngine`` inside this block use ``memory`` (and the
        speaker ``role``); safe across threads and asyncio tasks (a context variable)."""
        token = _CURRENT.set(_Turn(memory, role, session_id, dict(metadata or {})))
        try:
            yield memory
        finally:
            _CURRENT.reset(token)

    def analyze(self, text: str, entities: List[str], nlp_artifacts=None, *,
                memory: Optional[SessionMemory] = None, role: Optional[str] = None) -> List[RecognizerResult]:
        if entities and self._entity not in entities:
            return []
        self.load()
        turn = _CURRENT.get()
        if memory is None:
            memory = turn.memory if turn is not None else SessionMemory()
        ctx = TurnContext(
            role=role or (turn.role if turn is not None else "student"),
            session_id=turn.session_id if turn is not None else "",
            turn_index=memory.turns,
            metadata=turn.metadata if turn is not None else {},
        )
        spans = self._names.detect(text, ctx, memory)
        memory.turns += 1
        out: List[RecognizerResult] = []
        for s in spans:
            why = _EVIDENCE.get(s.evidence, s.evidence or "name finding")
            expl = AnalysisExplanation(
                recognizer=self.name,
                original_score=s.score,
                textual_explanation=f"plainsight name finding: {why} (evidence '{s.evidence or '-'}')",
            )
            out.append(RecognizerResult(
                entity_type=self._entity, start=s.start, end=s.end, score=float(s.score),
                analysis_explanation=expl,
                recognition_metadata={RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
                                      RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id,
                                      "plainsight_evidence": s.evidence},
            ))
        return out
