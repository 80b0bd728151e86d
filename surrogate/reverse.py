"""Re-identification of tutor replies: surrogates of this session → the real values.

Only strings in the session's mapping are mapped back, on word boundaries (never inside another
word). Robust to case ("LUCIA" → "MARIA"), possessives ("Lucia's" → "Maria's": the name token is
matched, the "'s" stays), and a full surrogate name shortened to first or last name (names map
token by token), and to "L. Garcia" when the session knows the person "Lucia Garcia". Phone
numbers match on their digits with a separator only where plainsight's surrogate has one (any
phone separator there), never spaced out digit by digit. A surrogate that is an everyday English
word is only matched when not written in lower case.

Work is linear in the reply's length: an Aho-Corasick automaton (``pyahocorasick``; a pure-Python
scan where it is missing) finds every occurrence of every surrogate's literal core in one pass,
each occurrence is verified by that target's own small anchored pattern (word boundaries, case,
initials' context), and the leftmost, highest-priority matches are kept, as one alternation of
all the targets would have chosen them, without its cost (the alternation took minutes on a
mapping of thousands of values and a long reply).

The matcher is cached on the mapping and rebuilt only when the mapping changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plainsight.middleware.schemas import EntityOut

from .names import fold
from .state import SessionMapping, ValueEntry
from .text import apply_case, case_pattern, common_words


@dataclass(slots=True)
class _Target:
    kind: str  # "name" | "initial" | "value" | "digits"
    label: str
    surrogate: str
    real: str


class _Matcher:
    """Targets in priority order (their index is the alternation order), and the automaton of
    their literal cores (lower case) → indices of the targets that start with that core."""

    __slots__ = ("regex", "targets", "sources", "compiled", "cores", "prefix", "automaton", "by_core")

    def __init__(self, targets: list[_Target], sources: list[str], cores: list[str],
                 prefix: list[re.Pattern[str] | None]) -> None:
        self.targets = targets
        #: each target's verification pattern, compiled when its core first occurs in a reply
        #: (compiling thousands up front cost more than the reply they would verify)
        self.sources = sources
        self.compiled: dict[int, re.Pattern[str]] = {}
        self.cores = cores
        self.prefix = prefix
        #: kept for callers that test ``m.regex is None`` (no target at all)
        self.regex = True if targets else None
        self.by_core: dict[str, list[int]] = {}
        for i, c in enumerate(cores):
            self.by_core.setdefault(c, []).append(i)
        self.automaton = _automaton(self.by_core) if targets else None


def _automaton(by_core: dict[str, list[int]]):
    try:
        import ahocorasick
    except ImportError:  # pragma: no cover - the dependency is declared; slower fallback
        return None
    a = ahocorasick.Automaton()
    for core, idx in by_core.items():
        a.add_word(core, (len(core), tuple(idx)))
    a.make_automaton()
    return a


def _occurrences(m: _Matcher, low: str):
    """(start, target indices) of every occurrence of every core in ``low``."""
    if m.automaton is not None:
        for end, (n, idx) in m.automaton.iter(low):
            yield end - n + 1, idx
        return
    for core, idx in m.by_core.items():  # pragma: no cover - fallback without pyahocorasick
        i = low.find(core)
        while i >= 0:
            yield i, tuple(idx)
            i = low.find(core, i + 1)


def _lower_same_length(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _flex(s: str) -> str:
    """Escaped literal with any whitespace run matching any whitespace run."""
    return r"\s+".join(re.escape(p) for p in s.split())


_SEP = r"[\s().\-/]{1,3}"
_EXT_SEP = r"\s*(?:x|ext\.?|extension|#)\s*"
_URL_PREFIX = re.compile(r"(?:[a-z][a-z0-9+.\-]*://)?(?:www\d?\.)?\Z", re.IGNORECASE)


def _digits_pattern(digits: str, layout: str | None = None) -> tuple[str, str]:
    """The digits with a phone separator only where ``layout`` (the surrogate as plainsight wrote
    it) has one, an extension marker where it has one; without a layout the digits run together.
    Returns (pattern, literal core: the first run of digits)."""
    seps: list[str] = [""] * (len(digits) - 1)
    if layout is not None:
        gaps = re.split(r"\d", layout)[1:-1]
        if len(gaps) == len(digits) - 1:
            seps = ["" if not g else _EXT_SEP if re.search(r"[A-Za-z#]", g) else _SEP for g in gaps]
    out = [re.escape(digits[0])] if digits else []
    core = digits[:1]
    in_core = True
    for sep, d in zip(seps, digits[1:]):
        out.append(sep + re.escape(d))
        in_core = in_core and not sep
        if in_core:
            core += d
    return "".join(out), core


_UNSPACED_NAME = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u3040-\u30ff]+")

#: (priority, pattern, literal core, prefix pattern or None, target)
_Alt = tuple[int, str, str, "re.Pattern[str] | None", _Target]


def _build(state: SessionMapping) -> _Matcher:
    alts: list[_Alt] = []
    for key, sur in state.names.items():
        t = _Target("name", "NAME", sur, state.name_real.get(key, key))
        if _UNSPACED_NAME.fullmatch(sur):  # "李娜" inside "我叫李娜": no word boundaries in Chinese / Korean
            alts.append((len(sur), re.escape(sur), sur, None, t))
        else:
            alts.append((len(sur), r"(?<!\w)" + re.escape(sur) + r"(?!\w)", sur, None, t))
    # Initials: "E. Sula" → "J. Smith" (the letter alone is replaced; its dot stays). Matched
    # case-sensitively: a lone lower-case "a" before a surname is an article, not an initial.
    for f, l in state.people:
        sf, sl = state.names.get(f), state.names.get(l)
        if sf and sl:
            real_first = state.name_real.get(f, f)
            t = _Target("initial", "NAME", sf[0], real_first[0].upper())
            alts.append((1, r"(?<!\w)(?-i:" + re.escape(sf[0].upper()) + r")(?=\.?\s+" + re.escape(sl) + r"(?!\w))",
                         sf[0], None, t))
    for key, value in state.initials.items():
        real_letter, kind, rest = key.split("|", 2)
        letter = value[0]
        t = _Target("initial", "NAME", letter, value[1:] or real_letter.upper())
        upper = r"(?-i:" + re.escape(letter.upper()) + r")"
        # between or after surrogate names a lower-case initial is safe to take too ("eric t. samoylova")
        either = r"(?-i:[" + re.escape(letter.upper()) + re.escape(letter.lower()) + r"])"
        if kind == "first" and rest in state.names:
            pat = r"(?<!\w)" + upper + r"(?=\.?\s+" + re.escape(state.names[rest]) + r"(?!\w))"
            prio = 2
        elif kind == "last" and rest in state.names:
            pat = r"(?<=" + re.escape(state.names[rest]) + r"\s)" + either + r"(?!\w)"
            prio = 2
        elif kind == "mid":
            f, _, l = rest.partition("|")
            if f not in state.names or l not in state.names:
                continue
            pat = (r"(?<=" + re.escape(state.names[f]) + r"\s)" + either + r"(?=\.?\s+" + re.escape(state.names[l])
                   + r"(?!\w))")
            prio = 3  # more specific than the first-name initial of the same person
        else:
            continue
        alts.append((prio, pat, letter, None, t))
    for label, entries in state.values.items():
        out_label = "URL" if label == "_DOMAIN" else label
        for e in entries.values():
            for pat, length, real_digits, core, prefix in _value_patterns(label, e):
                if not core:
                    continue
                if real_digits is not None:
                    alts.append((length, pat, core, prefix, _Target("digits", out_label, e.surrogate, real_digits)))
                else:
                    alts.append((length, pat, core, prefix, _Target("value", out_label, e.surrogate, e.real)))
    for tag, real in state.tag_real.items():
        label = tag[1:].rsplit("_", 1)[0]
        alts.append((len(tag), r"(?-i:" + re.escape(tag) + r")", tag, None, _Target("value", label, tag, real)))
    if not alts:
        return _Matcher([], [], [], [])
    alts.sort(key=lambda a: -a[0])  # longest first: an e-mail wins over the name inside it
    return _Matcher(
        [a[4] for a in alts],
        [a[1] for a in alts],
        [_lower_same_length(a[2]) for a in alts],
        [a[3] for a in alts],
    )


def _value_patterns(label: str, e: ValueEntry) -> list[tuple[str, int, str | None, str, re.Pattern[str] | None]]:
    """(regex, priority length, real digits for digit-poured targets or None, literal core the
    match starts with (after the optional prefix), optional prefix pattern)."""
    if label == "PHONE":
        from .generators import parse_phone

        pats: list[tuple[str, int, str | None, str, re.Pattern[str] | None]] = []
        sur_digits = "".join(c for c in e.surrogate if c.isdigit())
        real_digits = "".join(c for c in e.real if c.isdigit())
        sur_nsn = e.aux.partition("|")[0]
        real_nsn = parse_phone(e.real).nsn
        for d, r, layout in ((sur_digits, real_digits, e.surrogate), (sur_nsn, real_nsn, None)):
            if len(d) >= 5 and len(d) == len(r):
                body, core = _digits_pattern(d, layout)
                pats.append((r"(?<![\d\w])" + body + r"(?!\d)", len(d) + 4, r, core, None))
        if not sur_digits and e.surrogate.strip():  # a number written in words: the words as written
            pats.append((r"(?<!\w)" + _flex(e.surrogate) + r"(?!\w)", len(e.surrogate), None,
                         e.surrogate.split()[0], None))
        return pats
    if label == "URL":
        core = e.aux or e.surrogate
        pat = r"(?<![\w/])(?:[a-z][a-z0-9+.\-]*://)?(?:www\d?\.)?" + re.escape(core) + r"/?(?![\w/])"
        return [(pat, len(core) + 12, None, core, _URL_PREFIX)]
    if label == "USERNAME":
        core = (e.aux or e.surrogate).lstrip("@")
        return [(r"(?<![\w@])@?" + re.escape(core) + r"(?!\w)", len(core) + 1, None, core, _AT_PREFIX)]
    if label == "ID_NUM":
        return [(r"(?<!\w)" + re.escape(e.surrogate) + r"(?!\w)", len(e.surrogate), None, e.surrogate, None)]
    parts = e.surrogate.split()
    return [(r"(?<![\w.@])" + _flex(e.surrogate) + r"(?![\w@])", len(e.surrogate), None, parts[0] if parts else "", None)]


_AT_PREFIX = re.compile(r"@?\Z")


def matcher(state: SessionMapping) -> _Matcher:
    cached = state._reverse
    if cached is not None and cached[0] == state.generation:
        return cached[1]
    m = _build(state)
    state._reverse = (state.generation, m)
    return m


def _restore_name(matched: str, t: _Target) -> str:
    if matched == t.surrogate:
        return t.real
    p = case_pattern(matched)
    if p == "title":
        return t.real if t.real[:1].isupper() else t.real[:1].upper() + t.real[1:]
    if p in ("lower", "upper"):
        return apply_case(matched, t.real)
    return t.real


def _candidates(m: _Matcher, text: str) -> list[tuple[int, int, int]]:
    """(start, target index, end) of every verified match of every target, in one pass."""
    out: list[tuple[int, int, int]] = []
    seen: set[tuple[int, int]] = set()
    low = _lower_same_length(text)
    compiled, sources, prefix = m.compiled, m.sources, m.prefix
    for cs, idx in _occurrences(m, low):
        for i in idx:
            starts = [cs]
            pre = prefix[i]
            if pre is not None and cs > 0:
                w0 = max(0, cs - 40)
                pm = pre.search(text, w0, cs)  # the optional scheme / "@" right before the core
                if pm is not None and pm.start() < cs:
                    starts.insert(0, pm.start())
            for st in starts:
                if (st, i) in seen:
                    continue
                seen.add((st, i))
                pat = compiled.get(i)
                if pat is None:
                    pat = compiled[i] = re.compile(sources[i], re.IGNORECASE)
                mt = pat.match(text, st)
                if mt is not None and mt.end() > mt.start():
                    out.append((st, i, mt.end()))
                    break
    out.sort()
    return out


def reidentify(text: str, state: SessionMapping) -> tuple[str, list[EntityOut]]:
    """Map this session's surrogates in ``text`` back to the real values.

    Returns the new text and the restored entities, located in the new text.
    """
    m = matcher(state)
    if m.regex is None or not text:
        return text, []
    out: list[str] = []
    ents: list[EntityOut] = []
    pos = 0
    length = 0
    common = common_words()
    for start, i, end in _candidates(m, text):
        if start < pos:  # inside a match already taken (the leftmost, highest-priority one wins)
            continue
        t = m.targets[i]
        matched = text[start:end]
        if t.kind == "name":
            if matched.islower() and fold(matched) in common:
                continue
            real = _restore_name(matched, t)
        elif t.kind == "initial":
            real = apply_case(matched, t.real)
        elif t.kind == "digits":
            # the real number in the tutor's layout: "(415) 555-0117" written as 415.555.0117
            it = iter(t.real)
            real = "".join(next(it) if c.isdigit() else c for c in matched)
        else:
            real = t.real
        chunk = text[pos:start]
        out.append(chunk)
        length += len(chunk)
        out.append(real)
        ents.append(EntityOut(start=length, end=length + len(real), label=t.label, source="reidentify"))
        length += len(real)
        pos = end
    out.append(text[pos:])
    return "".join(out), ents
