"""Scoring detection against labelled dialogues (used by `plainsight eval` and the tests).

The metric functions are pure: they take gold and predicted spans (``Ent``) and return
numbers. Reading files and running the pipeline live at the bottom of the module.

Definitions (all documented here because the numbers are only comparable if they are fixed):

* **Core labels** are ``NAME, EMAIL, PHONE, URL, USERNAME, ID_NUM, ADDRESS``. Only they are
  scored. Other gold labels (ORG, LOCATION, DATE, AGE, ...) are indirect identifiers.
* **Exact match**: a prediction is a true positive iff a gold span has the same turn, start, end
  *and* label. Every core prediction that is not a true positive is a false positive for its
  label, and every core gold span without an identical prediction is a false negative.
  Boundary errors therefore count twice (one FP and one FN), as in the span-level evaluation of
  the research the project follows.
* **Ignored predictions**: a core prediction whose (turn, start, end) equals a *non-core* gold
  span (e.g. NAME on a span the annotators marked ORG) is neither TP nor FP: the annotators
  agreed the text is an identifier, only of another kind. Predictions with non-core labels are
  never scored (they still count as coverage for the leak rate and the residual risk).
* **Precision / recall / F-beta** are micro-averaged over core labels ("overall") and computed
  per label. F5 weights recall 5 times as much as precision. An undefined ratio (0/0) is None.
* **Leak rate**: share of gold core-PII characters that no predicted span (of any label) covers.
  Whitespace inside a gold span (multi-line addresses) is not counted: it identifies nobody.
* **Residual risk** (per dialogue): the gold core spans are grouped into distinct values by
  label and normalised text (:func:`middleware.replace.normalize_value`: case-folded,
  whitespace collapsed, a possessive dropped for names). Each occurrence of a value is
  *covered* when all its non-space characters are inside predicted spans (any label),
  *uncovered* when none is, *partly covered* otherwise. A value is
    - **missed** (full weight) if *any* of its occurrences is uncovered: one occurrence in the
      clear is enough to disclose it, however well the others were hidden (conservative);
    - **partly covered** (half the weight, rounded up) if no occurrence is uncovered but at least
      one is only partly covered (e.g. "Maria" of "Maria Lopez" hidden, "Lopez" not);
    - safe (0) otherwise.
  Weights: NAME 5; EMAIL, PHONE, ADDRESS, ID_NUM 4; USERNAME 3; URL 2. A dialogue's risk is the
  sum over its distinct values; mean and (population) standard deviation are taken over all
  dialogues, including those without PII (risk 0). The acceptance rule in the research is
  mean + std < 5.
* **NAME recall by group**: NAME recall (exact match) over the dialogues whose ``meta.gender``
  (``meta.region``) has a given value.
* **FP per 100 dialogues**: core false positives x 100 / number of dialogues.
* **Typed files** (every named entity typed, none of it private: ``wnut17``, ``btc``, ``gum``): a
  predicted NAME that overlaps a gold NAME is scored as above; otherwise one that overlaps a
  PERSON, HANDLE or ANIMAL span is **neutral** (a person, public or not); one that overlaps any
  other typed span (LOCATION, ORG, GROUP, PRODUCT, CREATIVE_WORK, TIME, EVENT, ABSTRACT, OTHER) is a
  **type error**; one that overlaps no span at all is a **word error**. Type errors, word errors
  and neutral names are given per 100 scored turns, and the **masked share** of each entity type:
  the share of its gold spans that a predicted span (of any label) overlaps (:func:`typed_summary`).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .detection.base import CORE_LABELS  # one definition (re-exported)

#: Residual-risk weight of a missed value, by label (partly covered: half, rounded up).
RISK_WEIGHTS: dict[str, int] = {
    "NAME": 5,
    "EMAIL": 4,
    "PHONE": 4,
    "ADDRESS": 4,
    "ID_NUM": 4,
    "USERNAME": 3,
    "URL": 2,
}


@dataclass(frozen=True, slots=True)
class Ent:
    """A gold or predicted span: ``turn`` indexes the dialogue's turns, offsets into its text."""

    turn: int
    start: int
    end: int
    label: str
    text: str = ""
    #: a prediction's Span.evidence (why the recognizer decided); not part of equality
    evidence: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[int, int, int, str]:
        return (self.turn, self.start, self.end, self.label)

    @property
    def pos(self) -> tuple[int, int, int]:
        return (self.turn, self.start, self.end)


# --------------------------------------------------------------------------- counting


@dataclass(slots=True)
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: "Counts") -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def scores(self) -> dict[str, Any]:
        p = ratio(self.tp, self.tp + self.fp)
        r = ratio(self.tp, self.tp + self.fn)
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": p,
            "recall": r,
            "f1": f_beta(p, r, 1.0),
            "f5": f_beta(p, r, 5.0),
        }


def ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def f_beta(precision: float | None, recall: float | None, beta: float) -> float | None:
    """F-beta = (1+b^2) P R / (b^2 P + R); None if P or R is undefined, 0 if both are 0."""
    if precision is None or recall is None:
        return None
    b2 = beta * beta
    den = b2 * precision + recall
    return 0.0 if den == 0 else (1 + b2) * precision * recall / den


@dataclass(slots=True)
class MatchResult:
    per_label: dict[str, Counts] = field(default_factory=dict)
    ignored: int = 0  # core predictions that exactly match a non-core gold span
    fp_spans: list[Ent] = field(default_factory=list)
    fn_spans: list[Ent] = field(default_factory=list)

    def counts(self, label: str) -> Counts:
        c = self.per_label.get(label)
        if c is None:
            c = self.per_label[label] = Counts()
        return c

    def overall(self) -> Counts:
        total = Counts()
        for c in self.per_label.values():
            total.add(c)
        return total


def match_spans(gold: Iterable[Ent], pred: Iterable[Ent], labels: Iterable[str] = CORE_LABELS) -> MatchResult:
    """Span-level exact match (turn, start, end, label) on ``labels``; see the module docstring."""
    labels = frozenset(labels)
    gold = list(gold)
    core_gold = {g.key for g in gold if g.label in labels}
    other_gold_pos = {g.pos for g in gold if g.label not in labels}
    res = MatchResult()
    matched: set[tuple] = set()
    for p in dict.fromkeys(pred):  # a duplicate prediction is one prediction
        if p.label not in labels:
            continue
        if p.key in core_gold and p.key not in matched:
            matched.add(p.key)
            res.counts(p.label).tp += 1
        elif p.pos in other_gold_pos:
            res.ignored += 1
        else:
            res.counts(p.label).fp += 1
            res.fp_spans.append(p)
    for g in gold:
        if g.label in labels and g.key not in matched:
            res.counts(g.label).fn += 1
            res.fn_spans.append(g)
        elif g.label in labels:
            res.counts(g.label)  # make sure the label is listed even at 0 FN
    return res


# --------------------------------------------------------------------------- coverage


def _covered_positions(pred: Iterable[Ent]) -> dict[int, list[tuple[int, int]]]:
    by_turn: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for p in pred:
        by_turn[p.turn].append((p.start, p.end))
    return by_turn


def _char_coverage(g: Ent, cover: dict[int, list[tuple[int, int]]]) -> tuple[int, int]:
    """(countable characters, covered countable characters) of gold span ``g``.
    Countable = not whitespace (per ``g.text`` when present; all characters otherwise)."""
    intervals = cover.get(g.turn, ())
    total = covered = 0
    for i in range(g.start, g.end):
        if g.text and len(g.text) == g.end - g.start and g.text[i - g.start].isspace():
            continue
        total += 1
        if any(s <= i < e for s, e in intervals):
            covered += 1
    return total, covered


def leak_counts(gold: Iterable[Ent], pred: Iterable[Ent], labels: Iterable[str] = CORE_LABELS) -> dict[str, list[int]]:
    """Per label [gold characters, leaked characters] (non-space characters of gold core spans;
    leaked = not inside any predicted span of any label). Overlapping gold spans count once."""
    labels = frozenset(labels)
    cover = _covered_positions(pred)
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    seen: set[tuple[int, int]] = set()
    for g in gold:
        if g.label not in labels:
            continue
        intervals = cover.get(g.turn, ())
        for i in range(g.start, g.end):
            if (g.turn, i) in seen:
                continue
            if g.text and len(g.text) == g.end - g.start and g.text[i - g.start].isspace():
                continue
            seen.add((g.turn, i))
            out[g.label][0] += 1
            if not any(s <= i < e for s, e in intervals):
                out[g.label][1] += 1
    return dict(out)


def _normalize(text: str, label: str) -> str:
    from .replace import normalize_value

    return normalize_value(text, label)


@dataclass(slots=True)
class ValueRisk:
    label: str
    status: str  # "missed" | "partial" | "safe"
    score: int
    occurrences: int


def residual_risk(
    gold: Iterable[Ent],
    pred: Iterable[Ent],
    weights: dict[str, int] = RISK_WEIGHTS,
) -> tuple[int, list[ValueRisk]]:
    """A dialogue's residual risk and the per-value breakdown (see the module docstring)."""
    cover = _covered_positions(pred)
    values: dict[tuple[str, str], list[Ent]] = defaultdict(list)
    for g in gold:
        if g.label in weights:
            values[(g.label, _normalize(g.text, g.label) if g.text else f"@{g.turn}:{g.start}:{g.end}")].append(g)
    total = 0
    out: list[ValueRisk] = []
    for (label, _), occ in values.items():
        states = []
        for g in occ:
            n, c = _char_coverage(g, cover)
            states.append("covered" if c >= n else ("uncovered" if c == 0 else "partial"))
        w = weights[label]
        if "uncovered" in states:
            status, score = "missed", w
        elif "partial" in states:
            status, score = "partial", math.ceil(w / 2)
        else:
            status, score = "safe", 0
        total += score
        out.append(ValueRisk(label, status, score, len(occ)))
    return total, out


def mean_std(values: list[float]) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "std": 0.0, "mean_plus_std": 0.0, "max": 0.0}
    m = statistics.fmean(values)
    s = statistics.pstdev(values) if len(values) > 1 else 0.0
    return {"mean": m, "std": s, "mean_plus_std": m + s, "max": float(max(values))}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0.0 for no values."""
    if not values:
        return 0.0
    xs = sorted(values)
    k = max(0, min(len(xs) - 1, math.ceil(q / 100 * len(xs)) - 1))
    return xs[k]


# --------------------------------------------------------------------------- aggregation


@dataclass(slots=True)
class DialogueResult:
    id: str
    meta: dict
    gold: list[Ent]
    pred: list[Ent]
    turns: int = 0
    empty_turns: int = 0
    detect_ms: list[float] = field(default_factory=list)
    #: the dialogue's ``source`` field (``--by-source``), "" when absent
    source: str = ""
    #: turns whose processing raised (dead-lettered: scored as predicting nothing; the run goes on)
    dead_lettered: int = 0
    #: turns the LLM stage failed closed on
    degraded: int = 0


def summarize(results: list[DialogueResult], labels: Iterable[str] = CORE_LABELS) -> dict[str, Any]:
    """All eval figures for a list of scored dialogues, as a JSON-serialisable dict."""
    labels = tuple(labels)
    # labels added by configured recognizers (STUDENT_ID, ...) weigh like an ID in the residual risk
    weights = {**RISK_WEIGHTS, **{lab: 4 for lab in labels if lab not in RISK_WEIGHTS}}
    per_label: dict[str, Counts] = {}
    ignored = 0
    leak: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    risks: list[float] = []
    at_risk = 0
    value_status: Counter = Counter()
    by_group: dict[str, dict[str, Counts]] = {"gender": defaultdict(Counts), "region": defaultdict(Counts)}
    ms: list[float] = []
    fp_evidence: Counter = Counter()
    n_turns = n_empty = 0
    gold_core = gold_other = n_pred = 0
    for d in results:
        m = match_spans(d.gold, d.pred, labels)
        for lab, c in m.per_label.items():
            per_label.setdefault(lab, Counts()).add(c)
        ignored += m.ignored
        fp_evidence.update(p.evidence or "-" for p in m.fp_spans if p.label == "NAME")
        for lab, (n, lk) in leak_counts(d.gold, d.pred, labels).items():
            leak[lab][0] += n
            leak[lab][1] += lk
        r, vals = residual_risk(d.gold, d.pred, weights)
        risks.append(float(r))
        at_risk += r > 0
        value_status.update(f"{v.label}:{v.status}" for v in vals if v.status != "safe")
        name_c = m.per_label.get("NAME")
        if name_c is not None and (name_c.tp + name_c.fn):
            for key in ("gender", "region"):
                g = (d.meta or {}).get(key)
                if g not in (None, ""):
                    c = by_group[key][str(g)]
                    c.tp += name_c.tp
                    c.fn += name_c.fn
        ms.extend(d.detect_ms)
        n_turns += d.turns
        n_empty += d.empty_turns
        gold_core += sum(g.label in labels for g in d.gold)
        gold_other += sum(g.label not in labels for g in d.gold)
        n_pred += len(d.pred)
    overall = Counts()
    for c in per_label.values():
        overall.add(c)
    gold_chars = sum(v[0] for v in leak.values())
    leaked = sum(v[1] for v in leak.values())
    n = len(results)
    return {
        "dialogues": n,
        "turns": n_turns,
        "empty_turns": n_empty,
        "gold_spans": gold_core,
        "gold_spans_other_labels": gold_other,
        "predicted_spans": n_pred,
        "ignored_predictions": ignored,
        "overall": overall.scores(),
        "per_label": {lab: per_label[lab].scores() for lab in labels if lab in per_label},
        "fp_per_100_dialogues": (100.0 * overall.fp / n) if n else 0.0,
        # false NAMEs per 100 scored (non-empty) turns: the figure for chat with no private person
        # named at all (topicalchat), where precision is 0 by construction
        "name_fp_per_100_turns": _per_100(per_label.get("NAME", Counts()).fp, n_turns - n_empty),
        "fp_per_100_turns": _per_100(overall.fp, n_turns - n_empty),
        # NAME false positives by the evidence the cascade decided on: "direct" (a greeting or
        # vocative: "hi cody", "Bye Sofia.") and "intro" ("My name is Kiara") are people the gold
        # leaves unmarked far more often than detection errors; see docs/names.md
        "name_fp_by_evidence": dict(fp_evidence.most_common()),
        "leak_rate": ratio(leaked, gold_chars) if gold_chars else 0.0,
        "leak": {
            "gold_chars": gold_chars,
            "leaked_chars": leaked,
            "per_label": {lab: ratio(v[1], v[0]) for lab, v in sorted(leak.items())},
        },
        "residual_risk": {**mean_std(risks), "dialogues_at_risk": at_risk, "values": dict(sorted(value_status.items()))},
        "name_recall_by_gender": _group_recall(by_group["gender"]),
        "name_recall_by_region": _group_recall(by_group["region"]),
        "ms_per_turn": statistics.fmean(ms) if ms else 0.0,
        "ms_per_turn_p50": percentile(ms, 50),
        "ms_per_turn_p99": percentile(ms, 99),
        "dead_lettered_turns": sum(d.dead_lettered for d in results),
        "degraded_turns": sum(d.degraded for d in results),
    }


#: Typed-file labels that are a person (a NAME predicted on them is neutral, neither right nor wrong).
NEUTRAL_LABELS = frozenset({"PERSON", "HANDLE", "ANIMAL"})
#: Typed-file labels of named things that are not persons (a NAME predicted on them is a type error).
TYPED_LABELS = frozenset({"LOCATION", "ORG", "GROUP", "PRODUCT", "CREATIVE_WORK", "TIME", "EVENT", "ABSTRACT", "OTHER"})


def _overlaps(a: Ent, b: Ent) -> bool:
    return a.turn == b.turn and a.start < b.end and b.start < a.end


def typed_kinds(gold: Iterable[Ent], pred: Iterable[Ent]) -> Counter:
    """Predicted NAMEs of one dialogue by kind: ``name`` (overlaps a gold NAME), ``neutral``,
    ``type`` (type error), ``word`` (word error); see the module docstring."""
    by_turn: dict[int, list[Ent]] = defaultdict(list)
    for g in gold:
        by_turn[g.turn].append(g)
    out: Counter = Counter()
    for p in dict.fromkeys(pred):
        if p.label != "NAME":
            continue
        over = [g for g in by_turn.get(p.turn, ()) if _overlaps(p, g)]
        if any(g.label == "NAME" for g in over):
            out["name"] += 1
        elif any(g.label in NEUTRAL_LABELS for g in over):
            out["neutral"] += 1
        elif any(g.label in TYPED_LABELS for g in over):
            out["type"] += 1
        else:
            out["word"] += 1
    return out


def is_typed(results: Iterable["DialogueResult"]) -> bool:
    """Do the dialogues carry typed entity spans (PERSON, LOCATION, ORG, ...)?"""
    return any(g.label in TYPED_LABELS or g.label in NEUTRAL_LABELS for d in results for g in d.gold)


def typed_summary(results: list["DialogueResult"]) -> dict[str, Any]:
    """Type errors, word errors and neutral names per 100 scored turns, and the masked share of
    every typed entity label (gold spans overlapped by any predicted span)."""
    kinds: Counter = Counter()
    gold_n: Counter = Counter()
    masked: Counter = Counter()
    turns = 0
    for d in results:
        kinds.update(typed_kinds(d.gold, d.pred))
        turns += d.turns - d.empty_turns
        cover = _covered_positions(d.pred)
        for g in d.gold:
            if g.label in TYPED_LABELS or g.label in NEUTRAL_LABELS:
                gold_n[g.label] += 1
                masked[g.label] += any(s < g.end and g.start < e for s, e in cover.get(g.turn, ()))
    return {
        "turns": turns,
        "type_errors": kinds["type"], "word_errors": kinds["word"], "neutral": kinds["neutral"],
        "type_errors_per_100_turns": _per_100(kinds["type"], turns),
        "word_errors_per_100_turns": _per_100(kinds["word"], turns),
        "false_names_per_100_turns": _per_100(kinds["type"] + kinds["word"], turns),
        "neutral_per_100_turns": _per_100(kinds["neutral"], turns),
        "masked_share": {lab: {"gold": n, "masked": masked[lab], "share": round(masked[lab] / n, 4)}
                         for lab, n in sorted(gold_n.items())},
    }


def _per_100(count: int, turns: int) -> float:
    return round(100.0 * count / turns, 3) if turns else 0.0


def name_summary(results: list[DialogueResult]) -> dict[str, Any]:
    """NAME figures only (P, R, F1, F5, tp/fp/fn, false names per 100 turns) of a list of dialogues."""
    c = Counts()
    turns = 0
    for d in results:
        c.add(match_spans(d.gold, d.pred, ("NAME",)).per_label.get("NAME", Counts()))
        turns += d.turns - d.empty_turns
    return {"dialogues": len(results), "turns": turns, **c.scores(), "name_fp_per_100_turns": _per_100(c.fp, turns)}


def by_source(results: list[DialogueResult]) -> dict[str, dict[str, Any]]:
    """:func:`name_summary` per dialogue ``source`` (``plainsight eval --by-source``)."""
    return _grouped(results, lambda d: d.source or "-")


def by_genre(results: list[DialogueResult]) -> dict[str, dict[str, Any]]:
    """:func:`name_summary` (and the typed figures) per ``meta.genre`` (GUM's ten kinds of English:
    conversation, vlog, interview, court, speech, news, bio, academic, textbook, voyage); empty when
    no dialogue names its genre."""
    return _grouped(results, lambda d: str((d.meta or {}).get("genre") or ""))


def _grouped(results: list[DialogueResult], key) -> dict[str, dict[str, Any]]:
    """:func:`name_summary`, and :func:`typed_summary` for typed groups, per ``key(dialogue)``
    (dialogues whose key is empty are left out)."""
    groups: dict[str, list[DialogueResult]] = defaultdict(list)
    for d in results:
        k = key(d)
        if k:
            groups[k].append(d)
    out = {}
    for k, rs in sorted(groups.items()):
        out[k] = name_summary(rs)
        if is_typed(rs):
            out[k]["typed"] = typed_summary(rs)
    return out


def _group_recall(groups: dict[str, Counts]) -> dict[str, dict[str, Any]]:
    return {k: {"recall": ratio(c.tp, c.tp + c.fn), "gold": c.tp + c.fn} for k, c in sorted(groups.items())}


# --------------------------------------------------------------------------- data files


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def _shared_data() -> Path:
    """``../shared/data`` next to the repository (dev dialogues in ``dev/``, lexicons in ``lexicons/``)."""
    return repo_root().parent / "shared" / "data"


def default_data_dir() -> Path:
    """``$PLAINSIGHT_DATA_DIR`` if set, else ``../shared/data/dev`` next to the repository.
    The one place that resolves the dev-data directory (CLI, benchmarks, scripts and tests use it)."""
    env = os.environ.get("PLAINSIGHT_DATA_DIR")
    if env:
        return Path(env)
    return (_shared_data() / "dev").resolve()


def default_lexicon_dir() -> Path:
    """``../shared/data/lexicons`` next to the repository: the raw lexicons the build scripts
    (``scripts/build_*_tables.py``) read; the shipped tables are built from them."""
    return (_shared_data() / "lexicons").resolve()


def resolve_data_file(name: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None) -> Path:
    """A path as given if it exists; otherwise ``name`` (with or without .jsonl) in the data dir."""
    p = Path(name)
    if p.exists():
        return p
    base = Path(data_dir) if data_dir else default_data_dir()
    for cand in (base / p.name, base / f"{p.name}.jsonl"):
        if cand.exists():
            return cand
    if p.name in ("sample", "sample_dialogues", "sample_dialogues.jsonl"):
        return sample_dialogues_file()
    hint = ("" if base.is_dir() else
            f"; {base} does not exist: the labelled dev dialogues are not shipped with plainsight (they sit in "
            "../shared/data/dev beside the repository in the project's workspace). Set PLAINSIGHT_DATA_DIR or "
            "--data-dir to a directory of them, pass a path, or use 'sample' (a few synthetic dialogues shipped "
            "with plainsight)")
    raise FileNotFoundError(f"no such dialogue file: {name} (also looked in {base}){hint}")


def sample_dialogues_file() -> Path:
    """The synthetic labelled dialogues shipped with plainsight (``middleware/samples``): ten short
    tutoring chats written for the project, no real data. The default of ``bench detect`` where the
    dev dialogues are absent, and ``plainsight eval sample``."""
    from importlib import resources

    return Path(str(resources.files("plainsight.middleware.samples").joinpath("sample_dialogues.jsonl")))


def read_dialogues(path: str | os.PathLike[str], limit: int | None = None) -> Iterator[dict]:
    """Dialogues from a JSONL file in the shared dialogue format (blank lines skipped)."""
    from .config import UsageError  # a ValueError: one line and exit 2 from the CLI

    with open(path, "rb") as fh:
        n = 0
        for lineno, bline in enumerate(fh, 1):
            if limit is not None and n >= limit:
                return
            try:
                line = bline.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"{path}:{lineno}: not UTF-8 text (invalid byte at {exc.start}: binary or another "
                                 "encoding); dialogue files are JSON Lines in UTF-8") from None
            if "\x00" in line:
                raise UsageError(f"{path}:{lineno}: not a text file (NUL byte); dialogue files are JSON Lines in UTF-8")
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if not isinstance(d, dict) or not isinstance(d.get("turns"), list):
                raise UsageError(f"{path}:{lineno}: not a dialogue object with a 'turns' list")
            n += 1
            yield d


def gold_ents(dialogue: dict) -> list[Ent]:
    return [
        Ent(int(s["turn"]), int(s["start"]), int(s["end"]), str(s["label"]), str(s.get("text", "")))
        for s in dialogue.get("spans") or []
    ]


def _dialogue_turns(dialogue: dict, index: int, t0: float):
    """(turn index, InputTurn or None for a blank turn, text) for one dialogue, in order."""
    from .schemas import InputTurn

    sid = str(dialogue.get("id") or f"dialogue-{index}")
    meta = dialogue.get("meta") or {}
    for i, turn in enumerate(dialogue["turns"]):
        text = turn.get("text") or ""
        if not text.strip():
            yield i, None, text
            continue
        role = str(turn.get("speaker") or "student")[:64] or "student"
        yield i, InputTurn(session_id=sid, turn_id=i, role=role, text=text,
                           sent_at=float(turn.get("sent_at") or (t0 + i)), metadata=dict(meta)), text


def _record(res: "DialogueResult", i: int, text: str, out, elapsed: float) -> None:
    tm = out.timings_ms or {}
    # the pipeline's detection stage ("fast_pass"; "detect" in older versions), else the whole turn
    res.detect_ms.append(tm.get("fast_pass", tm.get("detect", elapsed)))
    res.pred.extend(Ent(i, s.start, s.end, s.label, text[s.start : s.end], s.evidence) for s in out.spans)


def run_dialogue(pipeline, dialogue: dict, index: int = 0, t0: float = 1_700_000_000.0) -> DialogueResult:
    """Run ``pipeline`` over one dialogue exactly as the worker would: turn by turn, in order, in
    one session (never looking ahead). Blank turns are skipped (the worker dead-letters them)."""
    steps = _dialogue_steps(dialogue, index, t0)
    res = next(steps)
    try:
        out = None
        while True:
            it = steps.send(out)
            out = _dead_letter_on_error(res, pipeline.process_sync, it)
    except StopIteration:
        pass
    pipeline.sessions.drop(res.id)
    return res


async def arun_dialogue(pipeline, dialogue: dict, index: int = 0, t0: float = 1_700_000_000.0) -> DialogueResult:
    """Like :func:`run_dialogue` through the async ``Pipeline.process`` (with the LLM stage when
    it is configured). Scored spans are those of the tutor-facing output."""
    steps = _dialogue_steps(dialogue, index, t0)
    res = next(steps)
    try:
        out = None
        while True:
            it = steps.send(out)
            try:
                out = await pipeline.process(it)
                degraded = out.degraded
                if out.refined is not None:  # async-refine: let the refinement finish (it teaches memory)
                    degraded = (await out.final_logs()).degraded or degraded
                res.degraded += bool(degraded)
            except Exception as exc:  # noqa: BLE001  (one failing turn never ends the run)
                _dead_letter_on_error(res, _raise, exc)
                out = None
    except StopIteration:
        pass
    pipeline.sessions.drop(res.id)
    return res


def _dialogue_steps(dialogue: dict, index: int, t0: float):
    """Generator shared by the sync and async runners: yields the result record first, then each
    InputTurn, and receives that turn's TurnResult back (``send``)."""
    sid = str(dialogue.get("id") or f"dialogue-{index}")
    res = DialogueResult(id=sid, meta=dialogue.get("meta") or {}, gold=gold_ents(dialogue), pred=[],
                         source=str(dialogue.get("source") or ""))
    yield res
    for i, it, text in _dialogue_turns(dialogue, index, t0):
        res.turns += 1
        if it is None:
            res.empty_turns += 1
            continue
        t = time.perf_counter()
        out = yield it
        if out is not None:  # None: the turn was dead-lettered
            _record(res, i, text, out, (time.perf_counter() - t) * 1e3)


def _raise(exc: BaseException):
    raise exc


def _dead_letter_on_error(res: DialogueResult, fn, arg):
    """``fn(arg)``, or None when it raises: the turn is dead-lettered (counted, logged by exception
    type only, never its message: it may quote the text) and the run goes on."""
    try:
        return fn(arg)
    except Exception as exc:  # noqa: BLE001
        import logging

        res.dead_lettered += 1
        logging.getLogger(__name__).warning("turn %d of a dialogue dead-lettered (%s)", res.turns - 1,
                                            type(exc).__name__)
        return None


def predictions_record(res: DialogueResult) -> dict:
    return {
        "id": res.id,
        "spans": [
            {"turn": p.turn, "start": p.start, "end": p.end, "label": p.label, "text": p.text}
            for p in sorted(res.pred, key=lambda p: (p.turn, p.start, p.end))
        ],
    }
