"""Dev-data helpers shared by ``quick_score.py`` and ``train_name_model.py`` (no text is printed).

* :func:`split_of`: the deterministic split of a dialogue id (``tune`` 1/2, ``check`` 1/4,
  ``final`` 1/4, by ``sha1(id)``); ``final`` is never used for training or tuning.
* :func:`read`: dialogues of a dev file, each tagged with its position in the file (``_idx``):
  bridge and mathdial reuse ids for different dialogues, so ``(file, _idx)`` is the key to use.
* :class:`NamePool` + :func:`refill`: re-fill the gold NAME spans of a dialogue with other
  surrogate names drawn from the shipped lexicon (consistently within the dialogue: the same
  original token always becomes the same new token, so session memory still works), optionally
  typed in lowercase as in chat. Used to augment training data (the model must not memorise the
  dev files' names) and to test that scores hold for names never seen (``quick_score --refill``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path

_NAME_TOKEN = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")


def split_of(dialogue_id: str) -> str:
    h = int(hashlib.sha1(dialogue_id.encode()).hexdigest()[:8], 16)
    if h % 2 == 0:
        return "tune"
    return "check" if h % 4 == 1 else "final"


def resolve(name: str | Path) -> Path:
    """A path as given if it exists, else the dev file of that name (``ncte`` or ``ncte.jsonl``) in
    ``middleware.evaluation.default_data_dir()`` ($PLAINSIGHT_DATA_DIR or ../shared/data/dev)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from plainsight.middleware.evaluation import resolve_data_file

    return resolve_data_file(name)


def read(path: str | Path, split: str | None = None) -> list[dict]:
    """Dialogues of ``path`` (optionally only the given split(s), e.g. ``"tune+check"``)."""
    wanted = set(split.split("+")) if split and split != "all" else None
    out = []
    with resolve(path).open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if not line.strip():
                continue
            d = json.loads(line)
            if wanted is not None and split_of(str(d.get("id", ""))) not in wanted:
                continue
            d["_idx"] = i
            out.append(d)
    return out


class NamePool:
    """Surrogate names drawn from the shipped lexicon (names-dataset ranks, 105 countries).

    First names: popular ones (best rank <= 200 somewhere, 30 %), names English text often writes
    (Jake, Emily: 15 %, so that a common English name is no sign of a word-problem character), the
    tail (<= 1000, 30 %), names that are also ordinary English words (Will, Sandy, Rim, Hope: the
    hard cases, 15 %) and names no table knows (10 %, spliced from two names); surnames: rank <= 1000
    (70 %) or spliced (30 %)."""

    def __init__(self, seed: int = 0) -> None:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from plainsight.middleware.detection.keep import is_famous, is_place
        from plainsight.middleware.detection.lexicon import get_lexicon

        lex = get_lexicon()
        self.lex = lex
        self.rng = random.Random(seed)
        top, tail, wordish, english, last = [], [], [], [], []
        for key, fr, lr, lo, ti in lex.rows():
            if not (3 <= len(key) <= 12 and key.isalpha() and all(ord(c) < 0x250 for c in key)):
                continue  # Latin-script names of 3-12 letters, like the dev files' surrogates
            if fr <= 1000:
                (top if fr <= 200 else tail).append(key)
                if fr <= 300 and lo > -14.0:
                    wordish.append(key)
                if fr <= 300 and ti > -13.5 and lo - ti < -1.0 and not is_place(key) and not is_famous(key):
                    english.append(key)  # names English text writes often: Jake, Emily, Michael
            if lr <= 1000:
                last.append(key)
        self.top, self.tail, self.wordish, self.last = sorted(top), sorted(tail), sorted(wordish), sorted(last)
        self.english = sorted(english)

    @staticmethod
    def _title(key: str) -> str:
        return "-".join(p[:1].upper() + p[1:] for p in key.split("-"))

    def spliced(self, pool: list[str]) -> str:
        """A name no table knows (rare names are common in real rosters): the start of one name and
        the end of another ("Vizi" + "rov"), checked absent from the lexicon."""
        for _ in range(20):
            a, b = self.rng.choice(pool), self.rng.choice(pool)
            w = a[: max(2, len(a) // 2 + self.rng.randint(-1, 1))] + b[len(b) // 2 :]
            if 4 <= len(w) <= 11 and w not in self.lex:
                return self._title(w)
        return self._title(self.rng.choice(pool))

    def first(self) -> str:
        r = self.rng.random()
        if r >= 0.9:
            return self.spliced(self.top)
        pool = self.top if r < 0.3 else self.english if r < 0.45 else self.tail if r < 0.75 else self.wordish
        return self._title(self.rng.choice(pool))

    def surname(self) -> str:
        if self.rng.random() < 0.3:
            return self.spliced(self.last)
        return self._title(self.rng.choice(self.last))


def _styled(new: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return new.upper()
    if like[:1].islower():
        return new.lower()
    return new


def mark_characters(d: dict) -> dict:
    """A copy of a dialogue with a word problem in ``meta`` (MathDial's ``question``): the problem
    text is removed from the metadata and every whole-word occurrence of its characters' names in the
    turns becomes a ``_CHAR`` span (not PII). Training data for how tutors talk about word-problem
    characters when no metadata says who they are; :func:`refill` re-fills them too."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from plainsight.middleware.detection.keep import PROBLEM_KEYS, is_calendar, is_place
    from plainsight.middleware.detection.lexicon import get_lexicon
    from plainsight.middleware.detection.names import STOP, name_class, tokenize

    meta = dict(d.get("meta") or {})
    chars: set[str] = set()
    for k in PROBLEM_KEYS:
        v = meta.pop(k, None)
        if isinstance(v, str):
            for t in tokenize(v, get_lexicon()):
                cls = name_class(t)
                if (t.cap and not t.upper and t.low not in STOP and len(t.text) > 2 and not is_calendar(t.text)
                        and not is_place(t.text) and (cls in ("pure", "propn") or (cls == "wordish" and not t.sent_init))):
                    chars.add(t.low)
    spans = [dict(s) for s in d.get("spans") or []]
    if chars:
        pat = re.compile(r"(?<![\w'\u2019])(" + "|".join(re.escape(c) for c in sorted(chars)) + r")(?![\w])", re.IGNORECASE)
        taken = {}
        for s in spans:
            taken.setdefault(int(s["turn"]), []).append((s["start"], s["end"]))
        for ti, turn in enumerate(d["turns"]):
            for m in pat.finditer(turn.get("text") or ""):
                if not any(a < m.end() and m.start() < b for a, b in taken.get(ti, ())):
                    spans.append({"turn": ti, "start": m.start(), "end": m.end(), "label": "_CHAR", "text": m.group()})
    return dict(d, meta=meta, spans=spans)


def refill(d: dict, pool: NamePool, lower_prob: float = 0.0, labels: tuple[str, ...] = ("NAME", "_CHAR")) -> dict:
    """A copy of dialogue ``d`` whose gold NAME spans (and ``_CHAR`` spans) hold other names
    (offsets of every span of an edited turn are shifted). With ``lower_prob`` a whole person is
    typed in lowercase. ``_CHAR`` spans are dropped from the copy."""
    rng = pool.rng
    mapping: dict[str, str] = {}
    lowered: set[str] = set()

    char = False

    def new_token(tok: str, position: int) -> str:
        key = tok.casefold().replace("\u2019", "'")
        if key not in mapping:
            mapping[key] = pool.first() if position == 0 else pool.surname()
            if rng.random() < lower_prob and not char:
                lowered.add(key)
        out = _styled(mapping[key], tok)
        return out.lower() if key in lowered else out

    turns = [dict(t) for t in d["turns"]]
    by_turn: dict[int, list[dict]] = {}
    for s in d.get("spans") or []:
        by_turn.setdefault(int(s["turn"]), []).append(dict(s))
    new_spans: list[dict] = []
    for ti, spans in sorted(by_turn.items()):
        text = turns[ti]["text"] if ti < len(turns) else ""
        spans.sort(key=lambda s: (s["start"], s["end"]))
        pieces: list[str] = []
        pos = 0
        shift_at: list[tuple[int, int]] = []  # (original offset, cumulative shift after it)
        shift = 0
        for s in spans:
            if s["label"] not in labels or s["start"] < pos:
                continue
            a, b = s["start"], s["end"]
            old = text[a:b]
            char = s["label"] == "_CHAR"
            parts = []
            last = 0
            n = 0
            for m in _NAME_TOKEN.finditer(old):
                parts.append(old[last : m.start()])
                w = m.group()
                parts.append(w if len(w) < 2 else new_token(w, n))
                n += len(w) >= 2
                last = m.end()
            parts.append(old[last:])
            new = "".join(parts)
            pieces.append(text[pos:a])
            pieces.append(new)
            pos = b
            shift += len(new) - len(old)
            shift_at.append((b, shift))
        pieces.append(text[pos:])
        new_text = "".join(pieces)

        def moved(off: int, is_end: bool) -> int:
            sh = 0
            for end_off, cum in shift_at:
                if end_off < off or (end_off == off and is_end):
                    sh = cum
            return off + sh

        for s in spans:
            a, b = moved(s["start"], False), moved(s["end"], True)
            s2 = dict(s, start=a, end=b, text=new_text[a:b])
            new_spans.append(s2)
        if ti < len(turns):
            turns[ti]["text"] = new_text
    return dict(d, turns=turns, spans=[s for s in new_spans if s["label"] != "_CHAR"])
