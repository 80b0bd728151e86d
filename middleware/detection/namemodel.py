"""A small learned reviewer for name candidates the rules cannot settle (logistic regression).

The rules (``names.py``) decide what they are sure of: session memory of confirmed people,
greetings / vocatives, self-introductions, problem-text characters. Every other candidate token —
a lexicon name without a cue, a name that is also an ordinary word ("Sandy", "Rim", "Will"), a
capitalised token no table knows, a lowercase name, a name talked about in the third person that
may be a classmate or a word-problem character — is scored by this model from features of the
token and its context (``naming/features.py``: :func:`model_features`): lexicon ranks and English-usage
log-probabilities (binned), shape, neighbouring words and punctuation, the rules' own evidence
(title cue, memory, keep reasons: narrative verb, quantities, famous, curricular head, ...) and
the session state (classroom, people addressed so far).

Weights: ``middleware/data/name_model.json.gz``, trained by ``scripts/train_name_model.py`` on the
*tune* split of the dev files only, with every gold name re-filled by other surrogate names (so no
weight belongs to a name of the files; no token identity is a feature of the candidate itself).
Scoring is a sum of dictionary look-ups (~5 µs per candidate); most tokens never reach it.
"""

from __future__ import annotations

from importlib import resources
import functools
import gzip
import json
import math
from pathlib import Path

MODEL_PATH = Path(str(resources.files("plainsight.middleware").joinpath("data", "name_model.json.gz")))


class NameModel:
    def __init__(self, weights: dict[str, float], bias: float, threshold: float, meta: dict | None = None,
                 class_thresholds: dict[str, float] | None = None) -> None:
        self.weights = weights
        self.bias = bias
        self.threshold = threshold
        #: stricter thresholds for some lexicon classes (names that are also ordinary words)
        self.class_thresholds = class_thresholds or {}
        self.meta = meta or {}

    def threshold_for(self, cls: str) -> float:
        return max(self.threshold, self.class_thresholds.get(cls, 0.0))

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> "NameModel":
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            d = json.load(fh)
        return cls(d["weights"], float(d["bias"]), float(d["threshold"]), d.get("meta"), d.get("class_thresholds"))

    def save(self, path: Path = MODEL_PATH) -> None:
        data = {"meta": self.meta, "bias": round(self.bias, 5), "threshold": round(self.threshold, 4),
                "class_thresholds": self.class_thresholds,
                "weights": {k: round(v, 5) for k, v in sorted(self.weights.items())}}
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False).encode("utf-8")
        with open(path, "wb") as fh:  # mtime 0: byte-identical output for identical weights
            with gzip.GzipFile(filename="", fileobj=fh, mode="wb", compresslevel=9, mtime=0) as gz:
                gz.write(raw)

    def logit(self, feats: list[str]) -> float:
        w = self.weights
        return self.bias + sum(w.get(f, 0.0) for f in feats)

    def prob(self, feats: list[str]) -> float:
        z = self.logit(feats)
        return 1.0 / (1.0 + math.exp(-z)) if z > -30 else 0.0


@functools.lru_cache(maxsize=1)
def get_model() -> NameModel | None:
    """The shipped model, or None when the weights file is absent (rules only)."""
    if not MODEL_PATH.exists():
        return None
    return NameModel.load(MODEL_PATH)
