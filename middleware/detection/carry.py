"""Values split over a turn's letters or over two turns, joined with the session memory (issue #22).

People type a private value in pieces:

* spelled letter by letter when asked ("How do you spell your name?" — "T O M",
  "K-O-W-A-L-S-K-I"), or over two turns ("B A R" then "T E K"): the letters of a spelled run are
  joined, and the run is a NAME when a spelling (or a name) was asked for, when the joined
  letters are a name ("T O M"), or when it goes on the run that ended the previous turn and the
  two join into a name ("B A R" + "T E K" = "Bartek"); the joined name becomes a person of the
  session, so "Bartek" is found later in any case;
* a name broken over two turns ("its Chris" then "tina sorry"): a short turn that opens with a
  token which, put after the name that ended the previous turn, makes a name ("Christina");
* a phone number broken over two turns ("0433 812" then "904 sorry"): a turn of digit groups
  that goes on a partial number the previous turn ended with, when the two make a phone
  number's length; a turn of nothing but a 6-8 digit group that starts with 0 or +, or answers
  a question about a phone number, is such a partial number itself.

What one turn leaves for the next lives in ``SessionMemory.carry`` (part of the sealed session
state; valid for the next turn only). Cost: a few regex tests per turn.
"""

from __future__ import annotations

import re

from .base import Span, has_digit
from .lexicon import Lexicon
from .memory import SessionMemory
from .naming.tokens import NAMEISH, STOP, name_class, tokenize

SOURCE = "carry"
#: A request to spell a name ("can you spell your name?", "how do you spell that?", "letter by
#: letter please"); not a spelling exercise ("spell cat").
_SPELL_ASK = re.compile(r"\bspell(?:ing)?\s+(?:(?:your|ur|his|her|their|the)\s+)?(?:(?:first|last|full|sur|family)\s*)?"
                        r"(?:name|it|that|this)\b|\bspell(?:ing)?\s*\?|\bletter by letter\b", re.IGNORECASE)
#: An introduction right before a spelled run ("my name is j.e.s.s.i.c.a").
_INTRO_BEFORE = re.compile(r"(?i)\b(?:my name is|name's|name’s|i'm|i’m|im|i am|call me|it's|it’s|its|this is|spelled|spelt)"
                           r"[ \t]*[:,-]?[ \t]*$")
#: A phone number's cue right before a (partial) number at the end of a turn ("my number is 555").
_PHONE_CUE = re.compile(r"(?i)\b(?:(?:my|his|her|our|their|your|mum's|mom's|dad's)\s+(?:phone|cell|mobile|number|phone number|"
                        r"cell number|mobile number|whatsapp)|call\s+(?:me|us)\s+(?:on|at)|text\s+(?:me|us)\s+(?:on|at))"
                        r"\s*(?:is|:|-)?\s*(?:\+?\d[\d ().-]*)?$")
#: A question about a phone number.
_PHONE_ASK = re.compile(r"\b(?:phone|number|mobile|cell|whatsapp|call you|text you)\b", re.IGNORECASE)
#: Letters typed one by one with one kind of separator: "T O M", "K-O-W-A-L-S-K-I", "t.o.m".
_SPELLED = re.compile(r"(?<![\w'’-])[A-Za-z](?P<sep> |-|\. ?)[A-Za-z](?:(?P=sep)[A-Za-z]){0,24}(?![\w'’-])")
#: Words around a piece of a value that say nothing ("its", "sorry", "the rest is").
_SPELL_GATE = re.compile(r"\b[A-Za-z](?: |-|\. ?)[A-Za-z](?: |-|\. ?)[A-Za-z]\b|\b[A-Za-z](?: |-|\. ?)[A-Za-z]\b(?=\W*$)|^\W*[A-Za-z](?: |-|\. ?)[A-Za-z]\b")
_FILLER = frozenset("""its it's it’s it is my the number phone mobile cell no sorry soz oops then and rest ok okay
    oh wait i mean also last first part is name surname letters spelled spell thanks thx lol yes yeah yep""".split())
_DIGIT_GROUPS = re.compile(r"\+?\(?\d[\d ().-]*\d|\d")


def _is_name(word: str, lex: Lexicon) -> bool:
    """A name of the lexicon that is not an ordinary word ("tom", "kowalski", "bartek", "christina")."""
    toks = tokenize(word, lex)
    if len(toks) != 1:
        return False
    t = toks[0]
    if t.low in STOP or len(word) < 3:
        return False
    return name_class(t) in NAMEISH or (t.info.is_name and t.info.first_rank <= 2000 and t.info.logp_lower < -12.0)


def _plain_run(text: str, m: re.Match) -> bool:
    """A spelled run that stands alone: capitals, a space or hyphen between them (not "P. E. I",
    an abbreviation), and no letters running on ("B O R EEEE D", "I G G Y @IGGYAZALEA")."""
    run = m.group()
    if not run.isupper() or "." in run:
        return False
    before, after = text[: m.start()].rstrip(), text[m.end() :].lstrip()
    return not (after[:1].isalpha() and after.split(None, 1)[0].isupper()) and not after.startswith("@") \
        and not (before[-1:].isalpha() and before.split()[-1].isupper())


def _phone_cue(before: str, digits: str, carry: dict, role: str) -> bool:
    """A phone's cue before a number ending the turn: a phone word ("my cell is 617"), or "my
    number is" before a number that starts with 0 or answers a question about a phone ("my number
    is 345" in a number game stays)."""
    m = _PHONE_CUE.search(before)
    if m is None:
        return False
    if re.search(r"(?i)phone|cell|mobile|whatsapp|call|text", m.group()):
        return True
    return digits.startswith(("0", "+")) or bool(carry.get("phone") and carry.get("phone") != role)


def _only_filler(text: str) -> bool:
    return all(w in _FILLER for w in re.findall(r"[a-z'’]+", text.casefold()))


def find(text: str, role: str, memory: SessionMemory, spans: list[Span], lex: Lexicon) -> list[Span]:
    """The spans of this turn's pieces (NAME for spelled or split names, PHONE for split numbers)
    that overlap none of ``spans``."""
    carry = memory.carry if memory.carry.get("t") == memory.turns - 1 else {}
    out: list[Span] = []

    def free(a: int, b: int) -> bool:
        return not any(s.start < b and a < s.end for s in (*spans, *out))

    asked = bool(carry.get("ask")) and carry.get("ask") != role or bool(memory.expect_name and memory.expect_name != role)
    # 1. spelled letters
    if _SPELL_GATE.search(text):
        for m in _SPELLED.finditer(text):
            letters = "".join(c for c in m.group() if c.isalpha()).casefold()
            cont = bool(carry.get("letters")) and _only_filler(text[: m.start()])
            joined = carry["letters"] + letters if cont else letters
            if len(letters) < 3 and not cont:
                continue
            intro = bool(_INTRO_BEFORE.search(text[max(0, m.start() - 24) : m.start()]))
            if not (asked or intro or (cont and carry.get("masked")) or (cont and _is_name(joined, lex))
                    or (_plain_run(text, m) and _is_name(letters, lex))):
                continue
            if free(m.start(), m.end()):
                out.append(Span(m.start(), m.end(), "NAME", SOURCE, 0.95, "spelled"))
            if len(joined) >= 3:
                memory.add_person(joined, 1.0)  # "Bartek" later, in any case
    # 2. a name broken over two turns ("its Chris" / "tina sorry")
    if carry.get("name"):
        toks = tokenize(text, lex)
        if toks and len(toks) <= 5 and _only_filler(text[: toks[0].start]):
            t = toks[0]
            joined = carry["name"] + t.low
            if (len(t.text) >= 2 and t.low not in STOP and t.info.logp_lower < -12.0 and _is_name(joined, lex)
                    and free(t.start, t.end)):
                out.append(Span(t.start, t.end, "NAME", SOURCE, 0.9, "split"))
                memory.add_person(joined, 1.0)
    # 3. a phone number broken over two turns (only the turn's first and last 64 characters are read)
    if has_digit(text):
        head = text[:64]
        first = _DIGIT_GROUPS.search(head)
        if first is not None and carry.get("digits") and _only_filler(head[: first.start()]):
            n = len(re.sub(r"\D", "", first.group()))
            if 7 <= len(carry["digits"]) + n <= 15 and free(first.start(), first.end()):
                out.append(Span(first.start(), first.end(), "PHONE", SOURCE, 0.9, "split"))
        off = max(0, len(text) - 64)
        last = None
        for last in _DIGIT_GROUPS.finditer(text, off):
            pass
        if last is not None and _only_filler(text[last.end():]) and not re.search(r"[.,]\d", last.group()):
            n = len(re.sub(r"\D", "", last.group()))
            alone = len(text) <= 64 and _only_filler(text[: last.start()])
            if 3 <= n <= 8 and _phone_cue(text[max(0, last.start() - 32) : last.start()], last.group(), carry, role):
                if free(last.start(), last.end()):
                    out.append(Span(last.start(), last.end(), "PHONE", SOURCE, 0.85, "partial"))  # "my cell is 617" (...)
            elif alone and (6 <= n <= 8 or (4 <= n <= 8 and last.group().startswith(("0", "+")))) \
                    and (last.group().startswith(("0", "+"))
                                            or (carry.get("phone") and carry.get("phone") != role)):
                if free(last.start(), last.end()):
                    out.append(Span(last.start(), last.end(), "PHONE", SOURCE, 0.85, "partial"))  # "0433 812" (...)
    return out


def remember(text: str, role: str, spans: list[Span], memory: SessionMemory, turn: int) -> None:
    """What turn number ``turn`` (this one) leaves for the next one: a spelling request, a spelled
    run, a name or a partial phone number that ends the turn."""
    new: dict = {}
    low = text.casefold()
    if ("spell" in low or "letter" in low) and _SPELL_ASK.search(text):
        new["ask"] = role or "?"
    if "?" in text and _PHONE_ASK.search(text):
        new["phone"] = role or "?"
    end = len(text)
    while end > 0 and not text[end - 1].isalnum():
        end -= 1
    last = max((s for s in spans if s.end >= end), key=lambda s: s.end, default=None)
    spelled = None
    if end >= 3 and text[end - 2] in " .-":  # (a spelled run ends the turn: "... T E K")
        for spelled in _SPELLED.finditer(text, max(0, len(text) - 120)):
            pass
    if spelled is not None and _only_filler(text[spelled.end():]):
        prev = memory.carry if memory.carry.get("t") == turn - 1 else {}
        letters = "".join(c for c in spelled.group() if c.isalpha()).casefold()
        if prev.get("letters") and _only_filler(text[: spelled.start()]):
            letters = prev["letters"] + letters
        new["letters"] = letters[-40:]
        new["masked"] = any(s.label == "NAME" and s.start <= spelled.start() < s.end for s in spans)
    elif last is not None and last.label == "NAME":
        words = re.findall(r"[^\W\d_]+", text[last.start : last.end])
        if words and len(words[-1]) >= 2:
            new["name"] = words[-1].casefold()
    elif last is not None and last.label == "PHONE":
        digits = re.sub(r"\D", "", text[last.start : last.end])
        if len(digits) < 10:
            new["digits"] = digits
    if new:
        new["t"] = turn
        memory.carry = new
    elif memory.carry:
        memory.carry = {}
