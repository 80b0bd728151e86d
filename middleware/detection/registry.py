"""The recognizer registry: which recognizers make up the fast pass, built from configuration.

Order of the fast pass: the built-in pattern recognizers (e-mail, phone, URL, username, ID,
address), then the recognizers of ``detection.recognizers`` (patterns, deny lists, Presidio YAML
files, plug-ins) and ``detection.presidio_recognizers``, then name finding (``names``, held by
the cascade, which sees what all the others found). ``detection.disabled_recognizers`` switches
built-ins off by name.

The registry is the one place that knows the labels and sources of the deployment: the pipeline
keeps spans of its labels, the metrics pre-create its (label, source) pairs (a closed set), the
LLM stage gets a marker and a description for each label, and the surrogate replacer asks it how
a surrogate of a label without a dedicated generator must look.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..config import ConfigError
from .name_recognizer import CONTAINER_LABELS
from .recognizer import Recognizer, ShapeSpec
from .spec import DenyListSpec, PatternRecognizerSpec, PluginSpec, PresidioYamlSpec

if TYPE_CHECKING:
    from ..config import DetectionSettings

#: Entry-point group of recognizer plug-ins.
ENTRY_POINT_GROUP = "plainsight.recognizers"

#: Labels the built-in recognizers emit (and for which the surrogate replacer has generators).
BUILTIN_LABELS: tuple[str, ...] = ("NAME", "EMAIL", "PHONE", "URL", "USERNAME", "ID_NUM", "ADDRESS")

#: Sources the cascade's name finding, the session value memory and later stages put on spans
#: besides the recognizer names.
EXTRA_SOURCES: tuple[str, ...] = ("names", "names-script", "value-memory", "role", "llm", "verifier")

#: Name of the name-finding recognizer (it can be disabled like any built-in).
NAMES = "names"


def _builtin_classes() -> tuple[type[Recognizer], ...]:
    from .recognizers import BUILTIN

    return BUILTIN


def builtin_recognizers(disabled: Iterable[str] = ()) -> list[Recognizer]:
    """The built-in pattern recognizers (``middleware/detection/recognizers/``), in fast-pass
    order, ``disabled`` names left out."""
    off = frozenset(disabled)
    return [cls() for cls in _builtin_classes() if cls.name not in off]


def builtin_names() -> tuple[str, ...]:
    """Names of the built-in recognizers, name finding included."""
    return (*(cls.name for cls in _builtin_classes()), NAMES)


@dataclass(frozen=True, slots=True)
class LabelInfo:
    """What the rest of plainsight needs to know about a label added by a recognizer."""

    label: str
    description: str
    #: "shape" (format-preserving surrogate) or "tag"
    surrogate: str
    shape: ShapeSpec | None


#: What the LLM stage is told about labels Presidio's predefined recognizers add.
_KNOWN_DESCRIPTIONS = {
    "IP_ADDRESS": "an IP address (v4 or v6)",
    "MAC_ADDRESS": "a network card's MAC address",
    "CRYPTO": "a cryptocurrency wallet address",
    "MEDICAL_LICENSE": "a medical licence number",
    "US_DRIVER_LICENSE": "a US driver's licence number",
    "UK_NINO": "a UK national insurance number",
}


def _default_description(label: str) -> str:
    known = _KNOWN_DESCRIPTIONS.get(label)
    if known:
        return known
    words = label.replace("_", " ").lower()
    return f"{words}: an identifier of this kind that points to a person"


class RecognizerRegistry:
    """An ordered set of recognizers (name finding excluded: the cascade holds it, see
    :class:`~middleware.detection.name_recognizer.NameRecognizer`)."""

    def __init__(self, recognizers: Iterable[Recognizer], names_enabled: bool = True) -> None:
        self.recognizers: tuple[Recognizer, ...] = tuple(recognizers)
        self.names_enabled = names_enabled
        seen: set[str] = set()
        for r in self.recognizers:
            if not r.name or r.name in seen or r.name == NAMES:
                raise ConfigError(f"recognizer names must be unique and not {NAMES!r}: {r.name!r}")
            seen.add(r.name)
        infos: dict[str, LabelInfo] = {}
        for r in self.recognizers:
            for lab in r.labels:
                if lab in BUILTIN_LABELS or lab in infos:
                    continue
                infos[lab] = LabelInfo(lab, r.descriptions.get(lab) or _default_description(lab), r.surrogate,
                                       r.shape_of(lab))
        self._infos = infos

    # ---- construction -----------------------------------------------------------------
    @classmethod
    def from_settings(cls, detection: "DetectionSettings", base_dir: Path | None = None) -> "RecognizerRegistry":
        """The registry a ``detection`` configuration describes (cached per configuration)."""
        key = json.dumps(detection.model_dump(mode="json"), sort_keys=True)
        return _cached(key, str(base_dir or Path.cwd()), detection)

    @classmethod
    def build(cls, detection: "DetectionSettings", base_dir: Path | None = None) -> "RecognizerRegistry":
        from .configured import DenyListRecognizer, PatternRecognizer
        from .presidio_in import load_presidio_yaml, predefined_recognizer

        disabled = set(detection.disabled_recognizers)
        known = set(builtin_names())
        unknown = disabled - known
        if unknown:
            raise ConfigError(f"detection.disabled_recognizers: no built-in recognizer named {sorted(unknown)}; "
                              f"built-ins: {sorted(known)}")
        recs: list[Recognizer] = builtin_recognizers(disabled)
        for spec in detection.recognizers:
            if not spec.enabled:
                continue
            if isinstance(spec, PatternRecognizerSpec):
                recs.append(PatternRecognizer(spec))
            elif isinstance(spec, DenyListSpec):
                recs.append(DenyListRecognizer(spec))
            elif isinstance(spec, PresidioYamlSpec):
                recs.extend(load_presidio_yaml(spec, base_dir, detection.spacy_model, detection.verify_model_checksums))
            elif isinstance(spec, PluginSpec):
                recs.extend(load_plugin(spec))
        for pspec in detection.presidio_recognizers:
            recs.append(predefined_recognizer(pspec, detection.spacy_model, detection.verify_model_checksums))
        return cls(recs, names_enabled=NAMES not in disabled)

    # ---- queries ------------------------------------------------------------------------
    def find(self, name: str) -> Recognizer:
        for r in self.recognizers:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label the fast pass can emit (built-in first)."""
        extra = [lab for lab in self._infos if lab not in BUILTIN_LABELS]
        return (*BUILTIN_LABELS, *extra)

    @property
    def added_labels(self) -> tuple[str, ...]:
        """Labels beyond the built-in ones (from configuration or plug-ins)."""
        return tuple(self._infos)

    @property
    def sources(self) -> tuple[str, ...]:
        return (*(r.name for r in self.recognizers), *EXTRA_SOURCES)

    def label_info(self, label: str) -> LabelInfo | None:
        return self._infos.get(label)

    @property
    def descriptions(self) -> dict[str, str]:
        return {lab: i.description for lab, i in self._infos.items()}

    @property
    def container_labels(self) -> frozenset[str]:
        """Labels whose spans hide name candidates (built-in containers plus every added label
        whose recognizer says so)."""
        extra = {lab for r in self.recognizers if r.contains_names for lab in r.labels if lab != "NAME"}
        return CONTAINER_LABELS | frozenset(extra)


_CACHE: dict[tuple[str, str], RecognizerRegistry] = {}


def _cached(key: str, base_dir: str, detection) -> RecognizerRegistry:
    """One registry per distinct configuration in a process (the pipeline, the metrics, the LLM
    stage and the surrogates all ask for it; Presidio files are read once)."""
    got = _CACHE.get((key, base_dir))
    if got is None:
        if len(_CACHE) >= 32:
            _CACHE.clear()
        got = _CACHE[(key, base_dir)] = RecognizerRegistry.build(detection, Path(base_dir))
    return got


def load_plugin(spec: PluginSpec) -> list[Recognizer]:
    """The recognizer(s) an installed package publishes as entry point ``spec.plugin``: a
    :class:`Recognizer` subclass (called with ``spec.options``) or a factory returning one
    recognizer or a list of them."""
    from importlib.metadata import entry_points

    eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    ep = eps.get(spec.plugin)
    if ep is None:
        raise ConfigError(f"no recognizer plug-in named {spec.plugin!r} is installed "
                          f"(entry points {ENTRY_POINT_GROUP}: {sorted(eps) or 'none'})")
    try:
        obj = ep.load()
    except Exception as exc:
        raise ConfigError(f"recognizer plug-in {spec.plugin!r} failed to load ({type(exc).__name__})") from None
    try:
        made = obj(**spec.options)
    except TypeError as exc:
        raise ConfigError(f"recognizer plug-in {spec.plugin!r} rejected its options ({exc})") from None
    items = made if isinstance(made, (list, tuple)) else [made]
    for it in items:
        if not isinstance(it, Recognizer):
            raise ConfigError(f"recognizer plug-in {spec.plugin!r} must give middleware.detection.recognizer.Recognizer "
                              f"instances, not {type(it).__name__}")
    return list(items)
