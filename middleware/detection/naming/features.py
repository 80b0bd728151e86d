"""The learned reviewer's inputs: which candidates reach it (:func:`gate`) and what it sees of
each (:func:`model_features`): lexicon ranks and English-usage bins, shape, the neighbouring words
and punctuation, the keep review's signals and the session state. The feature strings are the
model's vocabulary (``namemodel.py``): changing one means retraining."""

from __future__ import annotations

import threading

from ..base import TurnContext
from ..keep import is_calendar
from ..knowledge import foreign_word, kinds, sentence_language
from ..lexicon import ABSENT
from ..memory import SessionMemory
from ..public import is_public_surname, personal_cue
from .context import ADDRESSING, PREPOSITIONS, PRONOUN_12, public_talk
from .tokens import GREETINGS, NAMEISH, Tok, name_class, name_neighbour


def gate(toks: list[Tok], k: int, cls: str, strength: float) -> bool:
    """Candidates the rules give no score but the model may still find (ordinary-word names,
    unknown capitalised tokens, lowercase names); everything else never reaches the model."""
    t = toks[k]
    if is_calendar(t.text):
        return False
    if strength > 0:
        return True
    if t.cap:
        if t.upper and len(t.text) < 4:
            return False
        if cls == "word":
            return not t.sent_init and t.info.word_margin < 2.0
        return True
    if t.lower:
        if cls in NAMEISH:
            return True
        prev = toks[k - 1].low if k >= 1 else ""
        if cls in ("wordish", "unknown") and prev in GREETINGS and len(t.text) >= 3 and t.info.logp_lower < -11.0:
            return True
    return False


def _bin_rank(r: int) -> str:
    return "0" if r <= 50 else "1" if r <= 200 else "2" if r <= 500 else "3" if r <= 1000 else "4" if r <= 2500 else "n"


def _bin_lp(lp: float) -> str:
    if lp <= ABSENT:
        return "a"
    return "r" if lp <= -15 else "u" if lp <= -13 else "o" if lp <= -11 else "c" if lp <= -9 else "f"


def gap_class(gap: str, edge: bool, poss: bool = False, end: bool = False) -> str:
    """Punctuation between two tokens: '_' plain space, ',' '.' '?' '!' ':' '-', 'q' quotes/brackets,
    '^'/'$' turn start/end, 'p' possessive, '.' also for a line break."""
    if poss:
        return "p"
    g = gap.strip()
    if not g:
        if edge:
            return "$" if end else "^"
        return "." if "\n" in gap else "_"
    c = g[0]
    if c in ",.?!:;":
        return "." if c == ";" else c
    if c in "-\u2013\u2014":
        return "-"
    if c in "\"'\u201c\u201d\u2018\u2019([{)]}":
        return "q"
    return "o"


def model_features(toks: list[Tok], k: int, text: str, cls: str, score: float, strength: float, sig: dict,
                   kept: bool, memory: SessionMemory, ctx: TurnContext, ner: bool, gap_prev: str, gap_next: str,
                   lows: list[str] | tuple = (), topic_now: int = 0) -> list[str]:
    """The feature strings of the candidate at ``k``; ``lows``/``topic_now``: the turn's case-folded
    tokens and public-life cue count (empty/0 when scored outside a turn)."""
    t = toks[k]
    i = t.info
    shape = "U" if t.upper else "C" if t.cap else "l" if t.lower else "m"
    fr, lr, lo, ti = _bin_rank(i.first_rank), _bin_rank(i.last_rank), _bin_lp(i.logp_lower), _bin_lp(i.logp_title)
    gp, gn = gap_class(gap_prev, k == 0), gap_class(gap_next, k + 1 >= len(toks), t.poss, True)
    p1 = toks[k - 1].low if k >= 1 and gp in ("_", ",") else gp
    n1 = toks[k + 1].low if k + 1 < len(toks) and gn in ("_", ",") else gn
    p2 = toks[k - 2].low if k >= 2 and gp == "_" and gap_class(text[toks[k - 2].end : toks[k - 1].start], False) == "_" else "-"
    n2 = (toks[k + 2].low if k + 2 < len(toks) and gn == "_" and gap_class(text[toks[k + 1].end : toks[k + 2].start], False) == "_"
          else "-")
    nb = ""
    for j in (k - 1, k + 1):
        if 0 <= j < len(toks) and toks[j].cap and (j == k - 1 and gp == "_" or j == k + 1 and gn == "_"):
            nb += "L" if j < k else "R"
            nb += name_class(toks[j])[:2]
    addressed = memory.addressed()
    f = [
        "c=" + cls, "s=" + shape, "cs=" + cls + shape, "si=%d%s" % (t.sent_init, shape),
        "fr=" + fr, "lr=" + lr, "frlr=" + fr + lr, "lo=" + lo, "ti=" + ti, "loti=" + lo + ti, "frlo=" + fr + lo,
        "cfr=" + cls + fr, "len=%d" % min(len(t.text), 9),
        "gp=" + gp, "gn=" + gn, "gpgn=" + gp + gn, "cgpgn=" + cls + gp + gn, "sgpgn=%s%d%s%s" % (shape, t.sent_init, gp, gn),
        "p1=" + p1, "n1=" + n1, "p2p1=" + p2 + "_" + p1, "n1n2=" + n1 + "_" + n2, "cp1=" + cls + p1, "cn1=" + cls + n1,
        "nb=" + nb, "rs=%.2f" % score, "mem=%.1f" % strength,
        "room=%d%d" % (memory.classroom, min(addressed, 2)),
    ]
    if not t.text.isascii():
        f.append("nonascii")
    if ner:
        f.append("ner")
    for key, v in sig.items():
        if v and key not in ("curricular", "head"):  # those two: as "ch=<head>" below
            f.append("k:" + key)
    # vocative shape: "X, can you ...", "..., X?"; a pronoun I/you next to the name ("X and I",
    # "you and X"); the preposition before it; a hypothetical ("if X had 5 ..."); curricular head
    nxt1 = toks[k + 1].low if k + 1 < len(toks) else ""
    f.append("adr=" + gn + ("A" if nxt1 in ADDRESSING else ""))
    if any(toks[j].low in PRONOUN_12 for j in range(max(0, k - 3), min(len(toks), k + 4)) if j != k):
        f.append("near12")
    if k >= 1 and toks[k - 1].low in PREPOSITIONS and gp == "_":
        f.append("pp=" + toks[k - 1].low)
    if sig["hyp"]:
        f.append("hyp")
    if sig["head"]:
        f.append("ch=" + ("p" if t.poss else "") + sig["head"])
    # the session's public-life talk is evidence about surnames and full names, not about a first
    # name alone: "Mateo starts nursery on Monday" in a chat about football is still a person of
    # one's life (the turn's own cue words still count: "Eli is struggling this season")
    neighbour = name_neighbour(toks, k, text)
    first_only = i.first_rank <= i.last_rank and i.first_rank <= 1000 and not neighbour
    f.append("tc=%d" % min(topic_now, 3))
    if not first_only:
        talk = public_talk(memory)
        f.append("talk=%d%d" % (talk, min(memory.topic, 3) if memory.topic * 4 >= memory.turns + 1 else 0))
    if is_public_surname(t.low):
        f.append("psur")
    if lows and personal_cue(lows, k, k):
        f.append("rel")
    if k >= 1 and toks[k - 1].low in ("a", "an", "the"):
        f.append("det")
    if neighbour:
        f.append("full")
    f.extend(knowledge_features(toks, k, text, cls, shape, gp, gn, p1))
    f.append("kept=%d" % kept)
    f.append("story=%d%d%d%d" % (sig["verb"], sig["qty"], sig["p12"], memory.classroom or addressed >= 2))
    f.append("vq=%d%d%s" % (sig["verb"], sig["qty"] or sig["tqty"], n1 if sig["verb"] else ""))
    return f


#: Per-turn facts computed once for all of a turn's candidates, per thread (the token list is the
#: key: held until the thread's next turn, compared by identity).
_FACTS = threading.local()


def _turn_facts(toks: list[Tok], k: int) -> tuple[int, str, int | None]:
    """(case statistics of the turn, language of the sentence holding token ``k``, the turn's share
    of words English seldom uses)."""
    facts = _FACTS.__dict__
    if facts.get("toks") is not toks:
        facts["toks"], facts["cap"], facts["langs"], facts["unk"] = toks, _cap_share(toks), {}, _unknown_share(toks)
    langs = facts["langs"]
    a = k
    while a > 0 and not toks[a].sent_init:
        a -= 1
    lang = langs.get(a)
    if lang is None:
        b = a + 1
        while b < len(toks) and not toks[b].sent_init:
            b += 1
        lang = langs[a] = sentence_language([x.low for x in toks[a:b]])
    return facts["cap"], lang, facts["unk"]


#: A lowercase word rarer than this in English usage (natural-log probability; about 5 in 10 million
#: words) is one English text seldom uses: a word of another language, a typo, heavy slang.
_RARE_IN_ENGLISH = -14.5


#: Languages whose writing capitalises every noun: there a capital letter says nothing of a name.
NOUN_CAPITALISING = frozenset({"de"})


def capitalised_by_norm(toks: list[Tok], k: int) -> bool:
    """Token ``k`` is capitalised by its sentence's language, not because it names someone: a plain
    frequent word of that language (never a popular given name: ``knowledge.foreign_word``) that
    starts the sentence, or any such word in a language that capitalises nouns ("Die Katze
    schläft", "Meine Mutter kocht"; "Hola, Pedro" and "Meine Freundin Anna" keep their names)."""
    t = toks[k]
    if not t.cap or t.upper:
        return False
    lang = _turn_facts(toks, k)[1]
    return lang != "en" and (t.sent_init or lang in NOUN_CAPITALISING) and foreign_word(t.low, lang)


def _unknown_share(toks: list[Tok]) -> int | None:
    """How much of the turn's lowercase words English seldom or never uses (``_RARE_IN_ENGLISH``),
    binned (0: < 10 %, 1: < 25 %, 2: < 50 %, 3: more; None: fewer than three lowercase words, too
    few to tell, and the case statistics already mark a short turn). A turn
    in a language no table covers (Tagalog, Malay, transliterated Hindi or Tamil) or in heavy slang
    reads this way, and there an unknown word is no evidence of a name."""
    n = u = 0
    for t in toks:
        if t.lower and len(t.text) > 1 and t.text.isalpha():
            n += 1
            u += t.info.logp_lower < _RARE_IN_ENGLISH
    if n < 3:
        return None
    r = u / n
    return 0 if r < 0.1 else 1 if r < 0.25 else 2 if r < 0.5 else 3


def _cap_share(toks: list[Tok]) -> int:
    """Case statistics of the turn: the share of capitalised words among those not starting a
    sentence, binned (0: < 10 %, 1: < 30 %, 2: < 60 %, 3: more: a headline or a Title-Case tweet)."""
    n = c = 0
    for t in toks:
        if not t.sent_init and len(t.text) > 1:
            n += 1
            c += t.cap
    if n < 3:
        return 9  # too short to tell
    r = c / n
    return 0 if r < 0.1 else 1 if r < 0.3 else 2 if r < 0.6 else 3


def knowledge_features(toks: list[Tok], k: int, text: str, cls: str, shape: str, gp: str, gn: str, p1: str) -> list[str]:
    """General knowledge (``knowledge.py``) and the conventions of informal text, as features: what
    the word (or the two-word phrase it is part of) names besides a person (a language, a country,
    a city, a holiday...), the sentence's language and whether the word is a frequent word of it
    (German nouns, Spanish sentence starts), the turn's case statistics, and hashtags, @handles,
    "RT", emoji next to the word."""
    t = toks[k]
    n = len(toks)
    f = []
    kk = kinds(t.low)
    f.append("gk=" + (kk or "-"))
    if kk:
        f += ["gkc=" + kk + cls, "gks=%s%d%s" % (kk, t.sent_init, shape), "gkp1=" + kk + "_" + p1]
    ph = ""
    if k + 1 < n and gn == "_":
        ph = kinds(t.low + " " + toks[k + 1].low)
    if not ph and k >= 1 and gp == "_":
        ph = kinds(toks[k - 1].low + " " + t.low)
    if ph:
        f.append("gk2=" + ph)
    for j, side in ((k - 1, "L"), (k + 1, "R")):
        if 0 <= j < n and toks[j].cap and (gp == "_" if j < k else gn == "_"):
            nk = kinds(toks[j].low)
            if nk:
                f.append("gkn=" + side + nk)
    cs, lang, unk = _turn_facts(toks, k)
    if unk is not None:
        f += ["unk=%d" % unk, "unks=%d%s%d" % (unk, shape, t.sent_init), "unkc=%d%s" % (unk, cls)]
    f.append("lg=" + lang)
    if lang != "en":
        f.append("lgs=%s%d%s" % (lang, t.sent_init, shape))
        if foreign_word(t.low, lang):
            f += ["fw=%d%s" % (t.sent_init, shape), "fwc=" + cls]
    f += ["capr=%d" % cs, "caprs=%d%s%d" % (cs, shape, t.sent_init), "caprc=%d%s" % (cs, cls)]
    f.append("t0=%d%s" % (k == 0, cls))  # the first word of the turn
    # social-media conventions anywhere in the turn (a hashtag, an @handle, a link, a retweet):
    # capitalisation and names read differently there
    if "#" in text or "@" in text or "http" in text or "www." in text or (toks[0].low == "rt" and toks[0].upper):
        f += ["soc", "socc=%s%s%d" % (cls, shape, t.sent_init), "socg=" + (kk or "-")]
    before = text[t.start - 1] if t.start >= 1 else ""
    if before == "#":
        f.append("hash")
    elif before == "@":
        f.append("handle")
    if toks[0].low == "rt" and toks[0].upper:
        f.append("rt")
    around = text[max(0, t.start - 3) : t.start] + text[t.end : t.end + 3]
    if any(ord(c) >= 0x2190 and not c.isalnum() for c in around):
        f.append("emo")
    return f
