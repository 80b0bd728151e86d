"""Direct evidence that a token is a person's name: a title ("Mr. X"), a relation ("my friend
mark"), a greeting or vocative ("Hi X", "Good job, X.", "Will, can you ..."), a self-introduction
("I'm X", "call me X", "my name is X"), and the answer to a name question ("What's your name?" —
"jildau"). Each returns what it found, or ``None`` when it has nothing to say; ``""`` means the
token is decidedly not a directly cued name."""

from __future__ import annotations

import re

from ..keep import is_calendar
from ..knowledge import foreign_word, kinds, sentence_language
from ..lexicon import Lexicon, get_lexicon
from ..memory import SessionMemory
from ..public import POSSESSIVES, RELATIONS
from .context import ADDRESSING, FAMILY
from .tokens import GREETINGS, NAME_STOPS, NAMEISH, STOP, STRONG_GREETINGS, TITLES, Tok, looks_like_word, name_class

INTRO_PREV = (("my", "name", "is"), ("name", "is"), ("name's",), ("i'm",), ("im",), ("i", "am"), ("call", "me"),
              ("called",), ("this", "is"), ("it's",), ("its",), ("am",))
#: Adjectives / states that follow "I'm" and are not names.
NOT_AFTER_IM = frozenset(
    """good fine ok okay done ready here there back sorry confused lost stuck sure not so just going trying
    doing getting finished new happy sad tired bored great alright working still also really very almost
    gonna thinking talking looking in on at from with a an the""".split()
)
_TITLE_GAP = re.compile(r"\.? ?")
#: Verbs that introduce a name after a relation word (EN, FR, ES, DE, IT, PT), lower-case.
NAMING_VERBS = frozenset(
    """called named is was heißt heisst hieß hiess nennt nennen heißen llama llaman llamaba se nommé nommée
    appelle appelait chiama chiamano chama chamava""".split()
)
#: French / Italian / Catalan elision: "s'appelle", "m'appelle", "l'ami", "qu'il", "c'est"
_ELIDED = re.compile(r"(?:[cdjlmnst]|qu)['’]\w", re.IGNORECASE)
_VOC_LEAD = ("so", "and", "now", "okay", "ok", "well", "but", "yes", "no", "alright", "actually")
_VOC_BETWEEN = ("so", "okay", "ok", "now", "and", "yes", "no", "well", "then", "alright", "right", "but")


def cue(toks: list[Tok], k: int, text: str, gap_prev: str, gap_next: str, cls: str, late: bool = False) -> str:
    """'intro' (self-introduction), 'direct' (greeting, vocative, relation), 'title' (Mr. X) or ''.
    ``late``: the session is past its opening turns (where "it's Maria" introduces someone)."""
    t = toks[k]
    if t.low in STOP and t.low not in NAME_STOPS:
        return ""
    if _relation_any(toks, k, gap_prev):
        return "direct"  # "my cousin June", "my grandad Bill": a relation makes a person, whatever the lexicon says
    if is_calendar(t.text):
        if t.lower and t.low not in NAME_STOPS and _relation(toks, k, gap_prev, cls):
            return "direct"  # "my cousin june": a month that is a name, after a relation
        return ""
    prev0 = toks[k - 1].low if k >= 1 else ""
    if prev0 in LOWER_TITLES and t.lower and gap_prev in (" ", ". ") and _name_part(t, cls) \
            and (cls in NAMEISH or (len(t.text) >= 4 and re.search(r"[aeiouy]", t.low))):
        return "direct"  # "mrs gallagher", "mr. okafor": a courtesy title typed in lowercase (chat, not a word problem)
    if prev0 in PERSON_VERBS and t.lower and gap_prev == " " and cls in NAMEISH and t.info.first_rank <= 1000 \
            and t.info.logp_lower < -13.0:
        return "direct"  # "ask jake he sits next to me", "text maria": a lowercase first name a person verb takes
    if prev0 == "the" and k >= 2 and toks[k - 2].low in _FAMILY_LEAD and t.cap and not t.upper and gap_prev == " " \
            and _family_plural(t):
        return "direct"  # "We stayed with the Gallaghers": a family by its surname
    if _here_intro(toks, k, gap_prev, gap_next):
        return "intro"  # "Dawn here!", "hi, Chris here": a speaker saying who they are
    if prev0 in TITLES and t.cap and len(t.text) > 1 and _TITLE_GAP.fullmatch(gap_prev) and (cls != "word" or t.info.word_margin < 0):
        return "title"
    if _relation(toks, k, gap_prev, cls) and not _plain_foreign_word(toks, k):
        return "direct"
    nameish = cls in NAMEISH or (cls == "wordish" and t.cap)
    if cls == "unknown" and t.cap and len(t.text) >= 3:
        nameish = True
    if t.low in TITLES:
        return ""
    if not nameish:
        return _lowercase_intro(toks, k, gap_prev, cls)
    if t.lower and cls not in NAMEISH and cls != "unknown":
        return ""
    if cls == "wordish" and t.info.first_rank > 1000 and not (k >= 1 and toks[k - 1].low in STRONG_GREETINGS):
        return ""
    prev = [toks[j].low for j in range(max(0, k - 3), k)]
    found = _greeting(toks, k, prev, gap_prev, gap_next, cls)
    if found is not None:
        return found
    for rule in (_vocative, _introduction):
        found = rule(toks, k, prev, gap_prev, gap_next, cls) if rule is _vocative else rule(toks, k, prev, gap_prev, cls, late)
        if found is not None:
            return "" if found and _not_a_person_shape(toks, k, text) else found
    if prev and prev[-1] in TITLES and t.cap and _TITLE_GAP.fullmatch(gap_prev):
        return "title"  # "Mr. Smith" (the title stays out of the span)
    return ""


def _relation_any(toks: list[Tok], k: int, gap_prev: str) -> bool:
    """"my cousin June", "your grandad Bill": a capitalised token after a possessed relation word
    is that person's name, whatever the lexicon says of the word."""
    t = toks[k]
    if not (k >= 2 and t.cap and not t.upper and len(t.text) >= 2 and gap_prev == " "):
        return False
    rel = toks[k - 1].low
    if not (rel in FAMILY or rel in RELATIONS or rel in _MORE_RELATIONS):
        return False
    j = k - 2
    if toks[j].low in _KIN_ADJECTIVES and j >= 1:
        j -= 1  # "my little brother Rocky", "my best friend Sky"
    return toks[j].low in POSSESSIVES or (toks[j].poss and toks[j].cap)


#: Knowledge classes (``knowledge.py``) that make a bare vocative or "I'm X" shape doubtful: a
#: language, a demonym, a religion ("I'm Irish", "Icelandic?"): the learned reviewer decides, with
#: the context. Not holidays (their names hold saints: "It's Maria"), nor months (calendar words
#: have their own rule above).
_DOUBTFUL_KINDS = frozenset("LNG")


def _not_a_person_shape(toks: list[Tok], k: int, text: str) -> bool:
    """General knowledge takes away the certainty of a bare vocative or an introduction: the word
    is a language, nationality or religion ("I'm Irish", "Icelandic?"), or a place
    in a list of places ("Miami, Florida", "France, Spain and Italy"); "India, what do you think?"
    stays a vocative."""
    kk = kinds(toks[k].low)
    if not kk:
        return False
    if any(c in _DOUBTFUL_KINDS for c in kk):
        return True
    return ((k >= 1 and toks[k - 1].cap and text[toks[k - 1].end : toks[k].start] == ", " and bool(kinds(toks[k - 1].low)))
            or (k + 1 < len(toks) and toks[k + 1].cap and text[toks[k].end : toks[k + 1].start] == ", "
                and bool(kinds(toks[k + 1].low))))


def _plain_foreign_word(toks: list[Tok], k: int) -> bool:
    """A lowercase word after a relation that is a frequent word of the sentence's language, not a
    name ("Meine Mutter kocht gern"): the relation cue does not take it."""
    t = toks[k]
    if not t.lower:
        return False
    a = k
    while a > 0 and not toks[a].sent_init:
        a -= 1
    b = k + 1
    while b < len(toks) and not toks[b].sent_init:
        b += 1
    lang = sentence_language([x.low for x in toks[a:b]])
    return lang != "en" and foreign_word(t.low, lang)


def _relation(toks: list[Tok], k: int, gap_prev: str, cls: str) -> bool:
    """"my friend mark", "your sister Ana", "Marta's brother Jordi" (an ordinary-word name only if
    not a common word)."""
    t = toks[k]
    if k >= 2 and t.lower and (toks[k - 1].low in FAMILY or toks[k - 1].low in RELATIONS or toks[k - 1].low in _MORE_RELATIONS) and (
            _ELIDED.match(t.text) or t.low in NAMING_VERBS
            or (k + 1 < len(toks) and toks[k + 1].cap and not toks[k + 1].upper)):
        # "mon frère s'appelle Hugo", "mein Bruder heißt Lukas", "my brother is called Hugo": the
        # lower-case word after the relation is a verb and the name follows it
        return False
    return (k >= 2 and (toks[k - 1].low in FAMILY or toks[k - 1].low in RELATIONS or toks[k - 1].low in _MORE_RELATIONS)
            and (toks[k - 2].low in POSSESSIVES or (toks[k - 2].poss and toks[k - 2].cap))
            and gap_prev == " "
            and (cls in NAMEISH or (cls == "unknown" and len(t.text) >= 3)
                 or (cls == "wordish" and t.info.first_rank <= 300 and t.info.logp_lower < -9.5)
                 # "my friend Will Turner", "my sister Hope": a capitalised name after the relation
                 or (t.cap and not t.upper and t.info.is_name and t.info.first_rank <= 2500)))


def _lowercase_intro(toks: list[Tok], k: int, gap_prev: str, cls: str) -> str:
    """"my name is jildau", "call me zorvath": an unknown lowercase word after an introduction;
    "hi im ash", "hi its autumn :)": a given name that is also a word, after an introduction, when
    it ends the clause (not "im late", "its cold outside")."""
    t = toks[k]
    if k < 1 or toks[k - 1].low not in _INTRO_LAST:
        return ""
    if not re.fullmatch(r"[ ,:]*", (gap_prev[2:] if toks[k - 1].poss else gap_prev) or " "):
        return ""
    prev3 = tuple(toks[j].low for j in range(max(0, k - 3), k))
    if toks[k - 1].poss:
        prev3 = prev3[:-1] + (prev3[-1] + "'s",)  # tokenize() strips "'s": "my name's jade", "hi it's autumn"
    if t.lower and cls == "unknown" and len(t.text) >= 3:
        if prev3[-3:] == ("my", "name", "is") or prev3[-2:] == ("call", "me"):
            return "intro"
    strong = prev3[-3:] == ("my", "name", "is") or prev3[-2:] in (("call", "me"), ("my", "name's"))
    if (strong and t.lower and len(t.text) >= 2 and t.low not in NOT_AFTER_IM and t.info.is_name
            and t.info.first_rank <= 1500 and _clause_end(toks, k)):
        return "intro"  # "call me max", "my name's jade": a name the speaker gives, even a common word
    if (cls == "wordish" and len(t.text) >= 3 and t.low not in NOT_AFTER_IM and t.info.first_rank <= 1000
            and t.info.logp_lower < -11.0 and _clause_end(toks, k)):
        if prev3[-3:] == ("my", "name", "is") or prev3[-2:] in (("call", "me"), ("i", "am")) or prev3[-1:] in (("im",), ("i'm",), ("i’m",)):
            return "intro"  # "hi im ash", "my name is dawn"
        j = k - 2 if prev3[-1:] in (("its",), ("it's",), ("it’s",)) else k - 3 if prev3[-2:] == ("it", "is") else -1
        if j >= 0 and (toks[j].low in STRONG_GREETINGS or toks[j].low in ("yo", "sup")):
            return "intro"  # "hi its autumn :)"
    return ""


#: Particles inside a full name typed in lowercase ("tran van minh", "maria de souza").
_NAME_PARTICLES = frozenset("van von de da di del della der den du dos das le la bin binti al el ibn".split())


def intro_parts(toks: list[Tok], k: int, text: str) -> list[int]:
    """The lowercase name parts that follow an introduced lowercase name ("my name is tran van
    minh": 'van', 'minh'): up to three tokens, one space apart, each a name and not an ordinary
    word (a particle only before one)."""
    out: list[int] = []
    j = k + 1
    while j < len(toks) and len(out) < 3 and text[toks[j - 1].end : toks[j].start] == " ":
        t = toks[j]
        if not t.lower:
            break
        if t.low in _NAME_PARTICLES:
            if j + 1 < len(toks) and text[t.end : toks[j + 1].start] == " " and _name_part(toks[j + 1], name_class(toks[j + 1])) \
                    and toks[j + 1].lower:
                out.append(j)
                j += 1
                continue
            break
        if not _name_part(t, name_class(t)) or looks_like_word(t.low, get_lexicon()):
            break
        out.append(j)
        j += 1
    return out


#: Last words of the introductions ``_lowercase_intro`` reads ("my name is", "my name's", "call me",
#: "i am", "im", "its", "it is").
_INTRO_LAST = frozenset(("is", "name", "me", "am", "im", "i'm", "i’m", "its", "it", "it's", "it’s"))


def _clause_end(toks: list[Tok], k: int) -> bool:
    """Token ``k`` ends its clause: the turn's end, punctuation or an emoticon, or 'and', 'from',
    'btw' ("hi im ash and i need help")."""
    if k + 1 >= len(toks):
        return True
    gap = toks[k + 1].start - toks[k].end
    if gap > 1 or gap < 1:
        return True  # punctuation, an emoticon or a line break between
    return toks[k + 1].low in ("and", "from", "btw", "here", "but", "i", "im", "i'm")


#: Lowercase courtesy titles after which a lowercase name part is a name ("mrs gallagher"); not
#: "miss" (a verb), "sir", "coach" or the spelled-out "doctor".
LOWER_TITLES = frozenset("mr mrs ms mx dr prof mister".split())
#: Verbs whose object is a person ("ask jake", "text maria").
PERSON_VERBS = frozenset("ask asked asking tell told text texted texting message messaged dm call called "
                         "ping meet met email emailed thank hug".split())
#: A relation word a possessive makes a person's ("my grandad Bill") beyond ``RELATIONS``.
_MORE_RELATIONS = frozenset("grandad granddad gramps grampa grandpop grandmom nan nanna nonna nonno abuela abuelo "
                            "oma opa bff bestfriend stepson stepdaughter godson goddaughter babysitter nanny".split())


#: Words between a possessive and a relation ("my little brother", "my best friend").
_KIN_ADJECTIVES = frozenset("best little big older younger old elder eldest oldest youngest baby twin step half "
                            "favourite favorite new late lil".split())


def _name_part(t: Tok, cls: str) -> bool:
    """A lowercase token that is a name and not an ordinary word ("gallagher", "okafor")."""
    return len(t.text) >= 2 and t.low not in STOP and (cls in NAMEISH or cls == "unknown") and t.info.logp_lower < -13.0


#: Words before "the Gallaghers" that make it a family one stays with or visits.
_FAMILY_LEAD = frozenset("with at to visit visited visiting from stayed stay staying".split())


def _family_plural(t: Tok) -> bool:
    """"Gallaghers", "Johnsons": a surname of the lexicon in the plural (the family)."""
    w = t.text
    if len(w) < 5 or w[-1] != "s" or t.info.is_name:
        return False
    stem = get_lexicon().info(w[:-1])
    return stem.last_rank <= 20000 and stem.logp_lower < -14.0 and stem.first_rank > stem.last_rank


def _here_intro(toks: list[Tok], k: int, gap_prev: str, gap_next: str) -> bool:
    """"Dawn here!", "hi, Chris here": a capitalised name opening a turn (or after a greeting),
    then 'here' and the clause's end."""
    t = toks[k]
    if not (t.cap and not t.upper and len(t.text) >= 2 and k + 1 < len(toks) and toks[k + 1].low == "here"
            and gap_next == " " and not any(c.isupper() for c in t.text[1:])
            and (name_class(t) in NAMEISH or name_class(t) == "unknown"
                 or (t.info.is_name and t.info.first_rank <= 1500 and t.info.logp_lower < -11.0))):
        return False
    if not (k == 0 or (k == 1 and toks[0].low in GREETINGS)):
        return False
    return _clause_end(toks, k + 1)


def _boundary_after(toks: list[Tok], k: int, gap_next: str) -> bool:
    return gap_next.strip() == "" and k + 1 >= len(toks) or (gap_next[:1] in ",.!?;:)" if gap_next else True)


def _greeting(toks: list[Tok], k: int, prev: list[str], gap_prev: str, gap_next: str, cls: str) -> str | None:
    """Greetings and thanks before a name: "Hi Maria", "Good job, Tesha.", "Thank you Ana"."""
    t = toks[k]
    nxt_boundary = _boundary_after(toks, k, gap_next)
    if prev and prev[-1] in GREETINGS and re.fullmatch(r"[ ,!]*", gap_prev or " "):
        g = prev[-1]
        if "!" in gap_prev and not nxt_boundary:
            return None  # "Hi! Hope you're well", "Hola! Muy bien": a new sentence, not a vocative
        if g in ("morning", "afternoon", "evening", "night") and not (len(prev) >= 2 and prev[-2] == "good"):
            return ""
        if t.low in NAME_STOPS and not (t.cap and nxt_boundary):
            return ""
        if g in STRONG_GREETINGS and (t.cap or cls in NAMEISH or cls == "unknown"):
            return "direct"
        if nxt_boundary and "," in (gap_prev + gap_next[:1]) or nxt_boundary and gap_next[:1] in "!?":
            return "direct"
        if nxt_boundary and gap_prev.strip() == "" and g in ("job", "done", "work", "try", "you"):
            return "direct"
    if len(prev) >= 2 and prev[-2:] == ["thank", "you"] and re.fullmatch(r"[ ,]*", gap_prev or " "):
        return "direct"
    return None


def _vocative(toks: list[Tok], k: int, prev: list[str], gap_prev: str, gap_next: str, cls: str) -> str | None:
    """Bare vocatives: "Zizan?", "Alifereti, are you ...", "What are we doing, Zizan?", "So, Neliko, the ..."."""
    t = toks[k]
    if not (t.cap and not t.upper and (cls != "unknown" or len(t.text) >= 3)):
        return None
    n = len(toks)
    after = gap_next.strip()[:1] if gap_next.strip() else ("" if k + 1 >= n else " ")
    last = k + 1 >= n
    if "[" in gap_prev or after in ("]", ")"):
        return ""
    nxt = toks[k + 1].low if k + 1 < n else ""
    if t.low in NAME_STOPS:  # "Will, can you read the next one?"
        if t.sent_init and after == "," and nxt in ADDRESSING:
            return "direct"
    elif cls == "wordish":  # Will, Hope, Liberty: a called-on question ("Liberty?") or "Olive can you ..."
        if t.info.word_margin < 2.0 and after == "?" and (t.sent_init or gap_prev.strip() == ","):
            return "direct"
        if t.sent_init and after == " " and k + 2 < n and nxt in ("can", "could", "would", "do", "did") \
                and toks[k + 2].low in ("you", "u"):
            return "direct"
    elif cls == "unknown":
        if after == "?" and (t.sent_init or gap_prev.strip() == ","):
            return "direct"
        if t.sent_init and after == "," and nxt in ADDRESSING:
            return "direct"  # "Warrane, can I ...", "Zizan, you ..."
    else:
        ends = after == "?" or (after in ("!", ".") and (last or gap_next.strip() in (".", "!")))
        if (t.sent_init or gap_prev.strip() == ",") and ends:
            return "direct"
        if t.sent_init and after == " " and k + 2 < n and (
                (nxt in ("can", "could", "would", "will", "do", "did", "are", "have") and toks[k + 2].low in ("you", "u"))
                or nxt == "please"):
            return "direct"
        if after == "," and (t.sent_init or (k >= 1 and toks[k - 1].sent_init and toks[k - 1].low in _VOC_LEAD
                                             and gap_prev == " ")):
            return "direct"
        if gap_prev.strip() == "," and after == "," and k >= 1 and toks[k - 1].low in _VOC_BETWEEN:
            return "direct"
    return None


def _introduction(toks: list[Tok], k: int, prev: list[str], gap_prev: str, cls: str, late: bool) -> str | None:
    """Self-introductions: "I'm X", "my name's X", "call me X"; "this is X" / "it's X" at the start
    of a turn early in the session or after a greeting ("Hi, it's Maria"), never later in the
    session without one ("Yeah, it's Kellan Moore, right?" names someone talked about)."""
    t = toks[k]
    poss_prev = bool(prev) and toks[k - 1].poss  # tokenize() strips "'s": "my name's Diego", "it's Maria"
    if not (prev and re.fullmatch(r"[ ,:]*", (gap_prev[2:] if poss_prev else gap_prev) or " ")):
        return None
    if poss_prev:
        prev = prev[:-1] + [prev[-1] + "'s"]
    for pat in INTRO_PREV:
        if len(prev) >= len(pat) and tuple(prev[-len(pat):]) == pat:
            if t.low in NOT_AFTER_IM:
                return ""
            if pat in (("name", "is"), ("name's",)) and len(prev) > len(pat) and prev[-len(pat) - 1] in ("his", "her", "their"):
                return ""  # "his name is X": someone talked about, not a self-introduction
            if pat == ("called",) and not (len(prev) >= 2 and prev[-2] in ("i'm", "im", "am", "i", "me", "i’m")):
                return ""  # "a video game called Halo", "a college called RPI": not a self-introduction
            if pat in (("this", "is"), ("it's",), ("its",), ("am",), ("called",)) and not (t.cap and cls in ("pure", "propn", "unknown")):
                return ""
            if pat in (("this", "is"), ("it's",), ("its",)):
                # "this is Maria" only as a self-introduction at the start of a turn
                j = k - len(pat) - 1
                if j >= 0 and toks[j].low not in GREETINGS:
                    return ""
                if late and not (j >= 0 and toks[j].low in STRONG_GREETINGS):
                    return ""
            return "intro"
    return None


# ---------------------------------------------------------------------------------------------
# name questions and their answers
# ---------------------------------------------------------------------------------------------

#: "What's your name?", "who am I talking to?", "what should I call you?": the answer is a name.
NAME_QUESTION = re.compile(
    r"\b(?:what(?:'s|’s| is| was)? (?:your|ur|ya) (?:first |last |full |real |nick|sur)?name|"
    r"(?:(?<=^)|(?<=[.!?,] )|(?<=\band )|(?<=\bhi )|(?<=\bhello )|(?<=\bhey ))(?:your|ur) (?:first |last |full )?name\s*\?|"
    r"who (?:am i|are we) (?:talking|speaking|chatting|working) (?:to|with)|who is this\b|who's this\b|"
    r"what (?:should|can|do|shall) (?:i|we) call you|what do (?:you|people|they) call you|what do you go by|"
    r"(?:may|can|could) i (?:have|ask|get|know) (?:your|ur) name|(?:tell|give) me (?:your|ur) name|"
    r"(?:can|could) you (?:tell|give) me (?:your|ur) name)",
    re.IGNORECASE,
)
#: Lead-in words of an answer ("it's", "my name is", "I'm", "call me", "this is").
ANSWER_LEAD = frozenset(
    "it's its it’s it is i'm im i’m i am my name names is call me this it's ok okay sure yes yeah yep um uh "
    "well oh first last full nickname".split()
)


def name_question(text: str, toks: list[Tok], role: str, memory: SessionMemory) -> tuple[int | None, bool]:
    """Updates ``memory.expect_name``; returns the token index from which this turn may answer
    a name question (the previous turn's, by another speaker, or this turn's own "What's your
    last name? Boyle"), or None, and whether the question is this turn's own."""
    start = None
    here = False
    pending = memory.expect_name
    if pending and pending != role:
        start = 0
        memory.expect_name = ""
    elif pending and len(toks) > 4:
        memory.expect_name = ""  # the asker went on talking about something else
    m = None
    low = text.lower()
    if "name" in low or "who" in low or "call you" in low or "go by" in low:  # cheap gate (the regex: ~16 µs)
        for m in NAME_QUESTION.finditer(text):
            pass
    if m is not None:
        q = text.find("?", m.end())
        rest = text[q + 1 :] if q >= 0 else ""
        if q >= 0 and rest.strip():
            start = next((k for k, t in enumerate(toks) if t.start > q), None)
            here = start is not None
        else:
            memory.expect_name = role or "?"
    return start, here


def name_answer(toks: list[Tok], start: int, lex: Lexicon) -> list[int]:
    """Token indices of the name in a short answer to a name question ("jildau", "it's Zorvath
    Quellin", "Maria L."): at most three name tokens after lead-in words, in an answer of at
    most seven tokens; words ("no", "why", "fine", "student") are not names."""
    rest = toks[start:]
    if not rest or len(rest) > 7:
        return []
    out: list[int] = []
    for k in range(start, len(toks)):
        t = toks[k]
        if t.low in ANSWER_LEAD or t.low in GREETINGS:
            if out:
                break
            continue
        if len(t.text) < 2 or not t.text.replace("-", "").replace("'", "").isalpha() or t.low in STOP:
            if out and len(t.text) == 1 and t.text.isalpha():
                continue  # a middle initial: "Maria L. Lopez"
            if out:
                break
            return []
        nameish = t.info.is_name or not looks_like_word(t.low, lex) or bool(out and t.cap)  # "Jildau Bouts"
        if not nameish or (not t.cap and t.info.logp_lower > -11.0 and t.info.word_margin > 0):
            return []  # an ordinary word: this turn is not a name
        out.append(k)
        if len(out) > 3:
            return []
    return out
