"""Re-identification of replies for the proxy: only what this request issued, streamed with a
minimal hold-back.

* :func:`issued_mapping` — a copy of the session's mapping restricted to the surrogates that this
  request's de-identification wrote into what went upstream (the entities of the de-identified
  messages). Re-identifying through it restores nothing else: not a surrogate the caller typed
  (it was de-identified to another one), not a value of the session that the request never
  carried, not a name the model wrote on its own.
* :class:`StreamRestorer` — forwards each delta at once except the shortest suffix that could
  still be the start of a surrogate (a sorted table of the issued surrogate forms, searched with
  bisect for every suffix that starts on a word boundary), and flushes at the end. Restoration
  itself is the replacer's public ``reidentify`` on the issued mapping, run on a window of the
  text already seen plus the new piece, so the streamed result equals re-identifying the whole
  reply at once (tests/unit/proxy/test_restore.py checks this for any chunking).
"""

from __future__ import annotations

import bisect
import re
from typing import Iterable

from plainsight.surrogate.names import fold
from plainsight.surrogate.state import SessionMapping

_WS = re.compile(r"\s+")
_WORD_TOKEN = re.compile(r"[^\W\d_]+")
_DIGITS = re.compile(r"\d")
_PHONE_CHARS = frozenset("0123456789 ().-/+\t\n")
#: the window of text already emitted that is re-scanned with each new piece (lookbehinds)
WINDOW = 160


def _norm(s: str) -> str:
    return _WS.sub(" ", s.lower())


def issued_mapping(full: SessionMapping, entity_texts: Iterable[tuple[str, str]]) -> SessionMapping:
    """The part of ``full`` whose surrogates occur in ``entity_texts`` ((label, surrogate text as
    written upstream) pairs): a new mapping for ``reidentify``, never persisted."""
    name_toks: set[str] = set()
    blobs: list[str] = []
    digits: list[str] = []
    for label, text in entity_texts:
        low = text.lower()
        blobs.append(low)
        if label == "NAME":
            name_toks.update(fold(t) for t in _WORD_TOKEN.findall(text))
        d = "".join(_DIGITS.findall(text))
        if len(d) >= 5:
            digits.append(d)
    blob = "\n".join(blobs)
    m = SessionMapping(session_id=full.session_id)
    for k, sur in full.names.items():
        if fold(sur) in name_toks:
            m.names[k] = sur
            m.name_real[k] = full.name_real.get(k, k)
    m.people = [(f, l) for f, l in full.people if f in m.names and l in m.names]
    for key, val in full.initials.items():
        rest = key.split("|", 2)[2]
        if all(p in m.names for p in rest.split("|") if p):
            m.initials[key] = val
    for label, entries in full.values.items():
        for norm, e in entries.items():
            keep = False
            if e.surrogate and e.surrogate.lower() in blob:
                keep = True
            elif e.aux and label != "PHONE" and e.aux.lower() in blob:
                keep = True
            elif label == "PHONE":
                sd = "".join(_DIGITS.findall(e.surrogate))
                nsn = e.aux.partition("|")[0]
                keep = any(sd and (sd in d or d in sd) or (nsn and nsn in d) for d in digits)
            if keep:
                m.values.setdefault(label, {})[norm] = e
    for tag, real in full.tag_real.items():
        if tag.lower() in blob:
            m.tag_real[tag] = real
    m._generation = 1
    return m


def surrogate_forms(m: SessionMapping) -> tuple[list[str], list[str]]:
    """(text forms, lower case with single spaces; phone digit strings) that a match of ``m``'s
    reverse matcher can begin with: what the stream must not cut inside."""
    forms: set[str] = set()
    phones: set[str] = set()
    for sur in m.names.values():
        forms.add(_norm(sur))
    for f, l in m.people:
        sf, sl = m.names.get(f), m.names.get(l)
        if sf and sl:
            forms.add(_norm(f"{sf[0]}. {sl}"))
            forms.add(_norm(f"{sf[0]} {sl}"))
    for key, val in m.initials.items():
        _real, kind, rest = key.split("|", 2)
        letter = val[0]
        parts = rest.split("|")
        if kind == "first" and rest in m.names:
            forms.add(_norm(f"{letter}. {m.names[rest]}"))
            forms.add(_norm(f"{letter} {m.names[rest]}"))
        elif kind == "last" and rest in m.names:
            forms.add(_norm(f"{m.names[rest]} {letter}"))
        elif kind == "mid" and len(parts) == 2 and all(p in m.names for p in parts):
            forms.add(_norm(f"{m.names[parts[0]]} {letter}. {m.names[parts[1]]}"))
            forms.add(_norm(f"{m.names[parts[0]]} {letter} {m.names[parts[1]]}"))
    for label, entries in m.values.items():
        for e in entries.values():
            if label == "PHONE":
                sd = "".join(_DIGITS.findall(e.surrogate))
                if sd:
                    phones.add(sd)
                nsn = e.aux.partition("|")[0]
                if nsn:
                    phones.add(nsn)
                if not sd and e.surrogate.strip():
                    forms.add(_norm(e.surrogate))
                continue
            cores = {e.surrogate}
            if e.aux and label in ("URL", "USERNAME", "EMAIL"):
                cores.add(e.aux)
            for core in cores:
                c = _norm(core)
                forms.add(c)
                if label in ("URL", "_DOMAIN"):
                    c = c.split("://", 1)[-1]
                    for pre in ("", "www.", "http://", "https://", "http://www.", "https://www."):
                        forms.add(pre + c)
                if label == "USERNAME":
                    forms.add("@" + c.lstrip("@"))
    for tag in m.tag_real:
        forms.add(_norm(tag))
    forms.discard("")
    return sorted(forms), sorted(phones)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _spaced(ch: str) -> bool:
    """A character of a script written with spaces (a word boundary is needed before a match)."""
    return ch.isalnum() and not ("\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af")


class StreamRestorer:
    """Feed a reply's deltas in order; each call returns what may be shown now. ``flush()`` at the end."""

    def __init__(self, replacer, mapping: SessionMapping) -> None:
        self._reid = replacer.reidentify
        self._m = mapping
        self._forms, self._phones = surrogate_forms(mapping)
        self._maxlen = max([len(f) for f in self._forms] + [len(p) * 3 + 4 for p in self._phones] + [0]) + 2
        self._raw = ""  # text already emitted (raw, as the model wrote it): the last WINDOW characters
        self._buf = ""  # held back
        #: the most characters held back at once, and their sum over the deltas
        self.max_held = 0
        self.held_total = 0

    @property
    def active(self) -> bool:
        return bool(self._forms or self._phones)

    def _prefix_of_form(self, s: str) -> bool:
        n = _norm(s)
        i = bisect.bisect_left(self._forms, n)
        return i < len(self._forms) and self._forms[i].startswith(n)

    def _prefix_of_phone(self, s: str) -> bool:
        if not s or s[0] not in "0123456789(+" or any(c not in _PHONE_CHARS for c in s):
            return False
        d = "".join(_DIGITS.findall(s))
        if not d:
            return s[0] in "(+"
        i = bisect.bisect_left(self._phones, d)
        return i < len(self._phones) and self._phones[i].startswith(d)

    def _hold(self, text: str, before: str) -> int:
        """Length of the longest suffix of ``text`` that could still begin a surrogate."""
        n = len(text)
        for p in range(max(0, n - self._maxlen), n):
            s = text[p:]
            prev = text[p - 1] if p else before
            if _spaced(s[0]) and prev and _is_word(prev):
                continue  # no match starts inside a word
            if self._prefix_of_form(s) or (self._phones and self._prefix_of_phone(s)):
                return n - p
        return 0

    def _emit(self, piece: str) -> str:
        if not piece:
            return ""
        if not self.active:
            self._raw = (self._raw + piece)[-WINDOW:]
            return piece
        win = self._raw
        # start the window after a space so that it does not begin inside a value
        sp = win.find(" ")
        if 0 <= sp < len(win) - 1 and len(win) >= WINDOW:
            win = win[sp + 1 :]
        pre = self._reid(win, self._m)[0] if win else ""
        full = self._reid(win + piece, self._m)[0]
        self._raw = (self._raw + piece)[-WINDOW:]
        if full.startswith(pre):
            return full[len(pre) :]
        return self._reid(piece, self._m)[0]  # pragma: no cover - the hold-back makes this unreachable

    def feed(self, delta: str) -> str:
        if not delta:
            return ""
        if not self.active:
            return self._emit(delta)
        text = self._buf + delta
        before = self._raw[-1:] if self._raw else ""
        h = self._hold(text, before)
        cut = len(text) - h
        self._buf = text[cut:]
        self.max_held = max(self.max_held, h)
        self.held_total += h
        return self._emit(text[:cut])

    def flush(self) -> str:
        rest, self._buf = self._buf, ""
        return self._emit(rest)


def reidentify_text(replacer, mapping: SessionMapping, text: str) -> str:
    return replacer.reidentify(text, mapping)[0] if text else text
