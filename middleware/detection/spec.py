"""Configuration models of the recognizers a user adds without code (``detection.recognizers``,
``detection.presidio_recognizers``). Pure pydantic: importing it loads no detector.

A configured recognizer is one of:

* a **pattern recognizer**: ``label``, ``patterns`` (regexes with scores), optional ``context``
  words (they raise a match's score, as in Presidio), an optional checksum ``validator``
  (``luhn``, ``iban``, ``mod11``, ``verhoeff``);
* a **deny list**: ``label`` and ``deny_list`` (whole words or phrases, any case);
* a **Presidio recognizer YAML file** (``presidio_yaml``), loaded with Presidio's own loader;
* a **plug-in** (``plugin``): an entry point of the group ``plainsight.recognizers``.

Recognizer names become the ``source`` of what they find (metrics, outputs), so they are short
identifiers; labels are upper-case identifiers.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Recognizer names: they are metric label values and ``source`` fields (a closed set).
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.+\-]{0,31}")
#: Labels: upper-case identifiers ("STUDENT_ID").
LABEL_RE = re.compile(r"[A-Z][A-Z0-9_]{0,31}")

Validator = Literal["luhn", "iban", "mod11", "verhoeff"]
SurrogateKind = Literal["shape", "tag"]


def _check_name(v: str) -> str:
    if not NAME_RE.fullmatch(v):
        raise ValueError("a recognizer name is 1-32 characters: a letter, then letters, digits, '_', '.', '+', '-'")
    return v


def _check_label(v: str) -> str:
    if not LABEL_RE.fullmatch(v):
        raise ValueError("a label is 1-32 characters: an upper-case letter, then A-Z, 0-9 or '_'")
    return v


class PatternSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    regex: str
    score: float = Field(0.85, ge=0.0, le=1.0)
    name: str | None = None

    @field_validator("regex")
    @classmethod
    def _compiles(cls, v: str) -> str:
        import regex

        try:
            rx = regex.compile(v)
        except regex.error as exc:
            raise ValueError(f"regex does not compile: {exc}") from None
        if rx.match(""):
            raise ValueError("regex matches the empty string")
        return v


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    #: Off: the recognizer is declared but not run.
    enabled: bool = True
    #: What the LLM stage is told this label is (its prompt lists every label with a description).
    description: str | None = None
    #: ``shape`` (default): a surrogate of the same length and character classes, deterministic
    #: per session like every surrogate; ``tag``: ``[LABEL_n]``.
    surrogate: SurrogateKind = "shape"
    #: Matches scoring below this (after context) are dropped.
    min_score: float = Field(0.4, ge=0.0, le=1.0)

    @field_validator("name")
    @classmethod
    def _name_ok(cls, v: str) -> str:
        return _check_name(v)


class PatternRecognizerSpec(_Common):
    label: str
    patterns: list[PatternSpec] = Field(min_length=1)
    #: Words or phrases that make a match more likely when they occur just before it
    #: (within ``context_window`` words), any case.
    context: list[str] = []
    context_window: int = Field(5, ge=1, le=50)
    #: Score added by a context word (Presidio's default), and the least score a match with
    #: context gets.
    context_boost: float = Field(0.35, ge=0.0, le=1.0)
    context_min_score: float = Field(0.4, ge=0.0, le=1.0)
    validator: Validator | None = None
    ignore_case: bool = False
    #: Time limit of one pattern on one turn; past it the pattern is skipped for that turn (logged).
    timeout_ms: int = Field(100, ge=1, le=10_000)

    @field_validator("label")
    @classmethod
    def _label_ok(cls, v: str) -> str:
        return _check_label(v)


class DenyListSpec(_Common):
    label: str
    deny_list: list[str] = Field(min_length=1)
    score: float = Field(1.0, ge=0.0, le=1.0)
    ignore_case: bool = True

    @field_validator("label")
    @classmethod
    def _label_ok(cls, v: str) -> str:
        return _check_label(v)

    @field_validator("deny_list")
    @classmethod
    def _non_blank(cls, v: list[str]) -> list[str]:
        if any(not w.strip() for w in v):
            raise ValueError("deny_list holds an empty entry")
        return v


class PresidioYamlSpec(BaseModel):
    """A file in Presidio's recognizer YAML format (``recognizers: [...]`` of pattern recognizers,
    loaded with ``RecognizerRegistry.add_recognizers_from_yaml``) or a Presidio registry
    configuration (``supported_languages``, ``recognizers`` with ``type: predefined|custom``,
    loaded with ``RecognizerRegistryProvider``)."""

    model_config = ConfigDict(extra="forbid")

    presidio_yaml: str
    #: Presidio entity → plainsight label (default: the built-in mapping, else the entity name).
    labels: dict[str, str] = {}
    #: Run the NLP-backed recognizers the file lists (``SpacyRecognizer``, ...: spaCy on every
    #: turn, several ms per turn); without it they are skipped with a warning.
    ner: bool = False
    enabled: bool = True
    surrogate: SurrogateKind = "shape"
    min_score: float = Field(0.4, ge=0.0, le=1.0)

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for x in v.values():
            _check_label(x)
        return v


class PluginSpec(BaseModel):
    """A recognizer from an installed package: entry point ``plugin`` of the group
    ``plainsight.recognizers``; ``options`` are passed to it as keyword arguments."""

    model_config = ConfigDict(extra="forbid")

    plugin: str
    options: dict[str, Any] = {}
    enabled: bool = True


class PresidioPredefinedSpec(BaseModel):
    """One of Presidio's predefined recognizers, by class name."""

    model_config = ConfigDict(extra="forbid")

    name: str
    #: plainsight label for what it finds (default: the built-in mapping, e.g. CREDIT_CARD → ID_NUM,
    #: else Presidio's entity name).
    label: str | None = None
    #: Accept a recognizer that needs the spaCy pipeline on every turn (NER-backed: several ms
    #: per turn). Pattern-based recognizers never need it.
    ner: bool = False
    surrogate: SurrogateKind = "shape"
    min_score: float = Field(0.4, ge=0.0, le=1.0)
    #: Context words replacing the recognizer's own.
    context: list[str] | None = None
    #: Only these of its entities (e.g. [PERSON] of SpacyRecognizer, which also reports dates,
    #: places, organisations); default: all it supports.
    entities: list[str] | None = None

    @field_validator("label")
    @classmethod
    def _label_ok(cls, v: str | None) -> str | None:
        return v if v is None else _check_label(v)

    @field_validator("name")
    @classmethod
    def _ident(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", v):
            raise ValueError("a Presidio recognizer is named by its class name, e.g. CreditCardRecognizer")
        return v


RecognizerSpec = PatternRecognizerSpec | DenyListSpec | PresidioYamlSpec | PluginSpec


def parse_recognizer(item: Any) -> RecognizerSpec:
    """One ``detection.recognizers`` entry → its model, chosen by its keys (clear errors)."""
    if isinstance(item, BaseModel):
        return item  # type: ignore[return-value]
    if not isinstance(item, dict):
        raise ValueError("each detection.recognizers entry is a mapping")
    if "presidio_yaml" in item:
        return PresidioYamlSpec.model_validate(item)
    if "plugin" in item:
        return PluginSpec.model_validate(item)
    if "deny_list" in item:
        return DenyListSpec.model_validate(item)
    if "patterns" in item:
        return PatternRecognizerSpec.model_validate(item)
    raise ValueError("a detection.recognizers entry needs one of: patterns, deny_list, presidio_yaml, plugin")


def check_unique_names(specs: list[RecognizerSpec]) -> None:
    seen: set[str] = set()
    for s in specs:
        if isinstance(s, (PatternRecognizerSpec, DenyListSpec)):
            if s.name in seen:
                raise ValueError(f"two recognizers are named {s.name!r}")
            seen.add(s.name)
