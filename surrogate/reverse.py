"""Re-identification of tutor replies: surrogates of this session → the real values.

Only strings in the session's mapping are mapped back, on word boundaries (never inside another
word). Robust to case ("LUCIA" → "MARIA"), possessives ("Lucia's" → "Maria's": the name token is
matched, the "'s" stays), and a full surrogate name shortened to first or last name (names map
token by token), and to "L. Garcia" when the session knows the person "Lucia Garcia". Phone
numbers match on their digits whatever separators the tutor used. A surrogate that is an
everyday English word is only matched when not written in lower case.

The compiled matcher is cached on the mapping and rebuilt only when the mapping changed.
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
    __slots__ = ("regex", "targets")

    def __init__(self, regex: re.Pattern[str] | None, targets: list[_Target]) -> None:
        self.regex = regex
        self.targets = targets


def _flex(s: str) -> str:
    """Escaped literal with any whitespace run matching any whitespace run."""
    return r"\s+".join(re.escape(p) for p in s.split())


_FLEX_SEP = r"[\s().\-/]*"
_EXT_SEP = r"\s*(?:x|ext\.?|extension|#)\s*"


def _digits_pattern(digits: str, layout: str | None = None) -> str:
    """The digits with any phone separators between them; an extension marker where ``layout`` has one."""
    seps: list[str] = []
    if layout is not None:
        gaps = re.split(r"\d", layout)[1:-1]
        if len(gaps) == len(digits) - 1:
            seps = [_EXT_SEP if re.search(r"[A-Za-z#]", g) else _FLEX_SEP for g in gaps]
    if not seps:
        seps = [_FLEX_SEP] * (len(digits) - 1)
    out = [re.escape(digits[0])] if digits else []
    for sep, d in zip(seps, digits[1:]):
        out.append(sep + re.escape(d))
    return "".join(out)


_UNSPACED_NAME = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u3040-\u30ff]+")


def _build(state: SessionMapping) -> _Matcher:
    alts: list[tuple[int, str, _Target]] = []
    for key, sur in state.names.items():
        t = _Target("name", "NAME", sur, state.name_real.get(key, key))
        if _UNSPACED_NAME.fullmatch(sur):  # "李娜" inside "我叫李娜": no word boundaries in Chinese / Korean
            alts.append((len(sur), re.escape(sur), t))
        else:
            alts.append((len(sur), r"(?<!\w)" + re.escape(sur) + r"(?!\w)", t))
    # Initials: "E. Sula" → "J. Smith" (the letter alone is replaced; its dot stays). Matched
    # case-sensitively: a lone lower-case "a" before a surname is an article, not an initial.
    for f, l in state.people:
        sf, sl = state.names.get(f), state.names.get(l)
        if sf and sl:
            real_first = state.name_real.get(f, f)
            t = _Target("initial", "NAME", sf[0], real_first[0].upper())
            alts.append((1, r"(?<!\w)(?-i:" + re.escape(sf[0].upper()) + r")(?=\.?\s+" + re.escape(sl) + r"(?!\w))", t))
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
        alts.append((prio, pat, t))
    for label, entries in state.values.items():
        out_label = "URL" if label == "_DOMAIN" else label
        for e in entries.values():
            for pat, length, real_digits in _value_patterns(label, e):
                if real_digits is not None:
                    alts.append((length, pat, _Target("digits", out_label, e.surrogate, real_digits)))
                else:
                    alts.append((length, pat, _Target("value", out_label, e.surrogate, e.real)))
    for tag, real in state.tag_real.items():
        label = tag[1:].rsplit("_", 1)[0]
        alts.append((len(tag), r"(?-i:" + re.escape(tag) + r")", _Target("value", label, tag, real)))
    if not alts:
        return _Matcher(None, [])
    alts.sort(key=lambda a: -a[0])  # longest first: an e-mail wins over the name inside it
    regex = re.compile("|".join(f"({p})" for _, p, _ in alts), re.IGNORECASE)
    return _Matcher(regex, [t for _, _, t in alts])


def _value_patterns(label: str, e: ValueEntry) -> list[tuple[str, int, str | None]]:
    """(regex, priority length, real digits for digit-poured targets or None)."""
    if label == "PHONE":
        from .generators import parse_phone

        pats: list[tuple[str, int, str | None]] = []
        sur_digits = "".join(c for c in e.surrogate if c.isdigit())
        real_digits = "".join(c for c in e.real if c.isdigit())
        sur_nsn = e.aux.partition("|")[0]
        real_nsn = parse_phone(e.real).nsn
        for d, r, layout in ((sur_digits, real_digits, e.surrogate), (sur_nsn, real_nsn, None)):
            if len(d) >= 5 and len(d) == len(r):
                pats.append((r"(?<![\d\w])" + _digits_pattern(d, layout) + r"(?!\d)", len(d) + 4, r))
        if not sur_digits and e.surrogate.strip():  # a number written in words: the words as written
            pats.append((r"(?<!\w)" + _flex(e.surrogate) + r"(?!\w)", len(e.surrogate), None))
        return pats
    if label == "URL":
        core = e.aux or e.surrogate
        pat = r"(?<![\w/])(?:[a-z][a-z0-9+.\-]*://)?(?:www\d?\.)?" + re.escape(core) + r"/?(?![\w/])"
        return [(pat, len(core) + 12, None)]
    if label == "USERNAME":
        core = (e.aux or e.surrogate).lstrip("@")
        return [(r"(?<![\w@])@?" + re.escape(core) + r"(?!\w)", len(core) + 1, None)]
    if label == "ID_NUM":
        return [(r"(?<!\w)" + re.escape(e.surrogate) + r"(?!\w)", len(e.surrogate), None)]
    return [(r"(?<![\w.@])" + _flex(e.surrogate) + r"(?![\w@])", len(e.surrogate), None)]


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
    for mt in m.regex.finditer(text):
        t = m.targets[mt.lastindex - 1]
        matched = mt.group()
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
        chunk = text[pos : mt.start()]
        out.append(chunk)
        length += len(chunk)
        out.append(real)
        ents.append(EntityOut(start=length, end=length + len(real), label=t.label, source="reidentify"))
        length += len(real)
        pos = mt.end()
    out.append(text[pos:])
    return "".join(out), ents
