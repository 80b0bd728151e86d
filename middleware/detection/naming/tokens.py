"""Word tokens of a turn and what the lexicon says of each: name class, word-likeness, name parts."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..keep import is_calendar, is_place
from ..lexicon import ABSENT, UNKNOWN, Lexicon, TokenInfo
from ..public import PLACE_HEADS, POSSESSIVES, RELATIONS
from ...values import NAME_TITLES

_WORD = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['\u2019][sS]$")
_SENT_END = set(".?!:;\n\"“”([{–—-•*")

#: Words that directly precede a vocative ("Hi X", "Good job, X", "Thank you X").
GREETINGS = frozenset(
    """hi hello hey heya hiya howdy yo bye goodbye thanks thank thx ty welcome congrats congratulations
    dear morning afternoon evening night job done work try sorry yes yeah yep okay ok alright right
    great good excellent awesome perfect correct wow sure nice cool well fantastic amazing brilliant
    bravo please see later cheers listen look wait""".split()
) | frozenset(
    # greetings of the languages learners practise: "¡Hola Carmen!", "Bonjour Amélie", "Buenos días Ana"
    """hola buenos buenas días tardes noches bonjour bonsoir salut coucou ciao buongiorno buonasera hallo servus
    tag morgen abend olá hej ahoj szia cześć czesc privet merhaba namaste konnichiwa
    gracias merci danke grazie obrigado obrigada adiós adios""".split()
)
#: Greetings strong enough to tag a following name token even when text continues ("Hi Maria can ...").
STRONG_GREETINGS = frozenset("""hi hello hey heya hiya howdy bye goodbye dear thanks thx welcome congrats congratulations morning
    afternoon evening hola días tardes noches bonjour bonsoir salut coucou ciao buongiorno buonasera hallo servus
    olá hej ahoj szia cześć czesc privet merhaba gracias merci danke grazie obrigado obrigada adiós adios""".split())
#: Titles after which a capitalised word is a name ("Mr. X" — the title stays outside the span).
TITLES = NAME_TITLES

#: Closed-class / chat words that are never a person's name even though names-dataset lists them.
STOP = frozenset(
    """a an the i me my mine you your yours he him his she her hers it its we us our they them their this that
    these those who whom whose what which where when why how there here and or but nor so yet if then than
    because as at by for from in into of off on onto out over to up with without about above after again
    against all any both each few more most other some such no not only own same too very can will just
    should now is am are was were be been being have has had do does did done shall would could may might
    must ok okay yes yeah yep yup nope nah oh ah uh um hmm hm huh wow oops hey hi hello bye please thanks
    thank sorry well good great nice cool fine right wrong sure true false correct perfect excellent awesome
    everyone everybody anyone anybody someone somebody nobody guys class friends students student teacher
    tutor sir maam ma'am miss mister buddy dude man kids boys girls ladies folks team today tomorrow
    yesterday first second third next last one two three four five six seven eight nine ten also even
    still maybe let lets let's like love go going got get see look wait listen think know said say says
    honey sweetie sweetheart darling hon kiddo pal champ love babe baby
    sh shh shhh sssh ssh yay yey yah oy unm umm uhm uhh mm mmm mhm ugh eh aw aww ooh ohh whoa yikes geez jeez gosh duh meh
    ha haha hah woah gee jr sr
    way why what's that's it's here's there's let's i'm you're we're they're don't can't won't didn't
    ive youre dont cant didnt doesnt isnt wasnt wont thats whats theyre weve youve theres wouldnt couldnt
    shouldnt arent werent havent hasnt""".split()
) | frozenset(
    # function words of the languages learners practise, capitalised at a sentence start after a
    # greeting ("Hola! Muy bien.", "Bonjour! Je suis fatiguée"); not those that are also given names
    # or surnames somewhere in the name lexicon ("Nada", "Sou", "Bien", "Pero" stay candidates)
    """nous vous suis sommes êtes très oui avec dans aussi beaucoup aujourd'hui demain hier nosotros vosotros
    ellos ellas eres estoy estás está estamos también porque qué cómo dónde cuándo wir ist sind und nicht sehr
    auch heute gestern danke molto anche oggi ieri domani grazie perché você muito estou também hoje ontem
    amanhã obrigado obrigada""".split()
) | TITLES
#: Stop words that are also first names: a name only when capitalised mid-sentence after a greeting.
NAME_STOPS = frozenset({"will", "may"})


@dataclass(slots=True)
class Tok:
    start: int
    end: int
    text: str
    info: TokenInfo
    cap: bool  # first letter upper-case
    upper: bool  # all upper-case (and > 1 letter)
    lower: bool
    sent_init: bool
    low: str  # case-folded text
    poss: bool = False  # followed by a possessive 's (not part of the token)


def tokenize(text: str, lex: Lexicon) -> list[Tok]:
    toks: list[Tok] = []
    for m in _WORD.finditer(text):
        s, e = m.start(), m.end()
        w = m.group()
        poss = False
        if _POSSESSIVE.search(w) and len(w) >= 3:
            e -= 2
            w = w[:-2]
            poss = True
        j = s - 1
        while j >= 0 and text[j] in " \t\"'“‘[(*_":
            j -= 1
        sent_init = j < 0 or text[j] in _SENT_END
        info = lex.info(w)
        if not info.is_name and ("-" in w) and w.count("-") <= 2:
            parts = [lex.info(p) for p in w.split("-") if p]
            if parts and all(p.is_name and p.logp_lower < -13 for p in parts):
                info = TokenInfo(min(p.first_rank for p in parts), min(p.last_rank for p in parts), ABSENT, ABSENT)
            elif w[0].isupper() and not w.isupper() and all(p[:1].isupper() for p in w.split("-")) \
                    and any(p.is_name for p in parts):
                # "Green-Ellis", "Clinton-Dix": a double-barrelled name, not an ordinary word
                info = TokenInfo(min(p.first_rank for p in parts), min(p.last_rank for p in parts), ABSENT, ABSENT)
            elif any(p.logp_lower > ABSENT for p in parts):  # "one-third", "uh-huh": ordinary words
                info = TokenInfo(logp_lower=max(p.logp_lower for p in parts), logp_title=ABSENT)
        if info is UNKNOWN and len(w) > 4 and w[-1] in "sS":
            stem = lex.info(w[:-1]) if w[-2] not in "sS" else UNKNOWN
            es = lex.info(w[:-2]) if w[-2] in "eE" else UNKNOWN
            lp = max(stem.logp_lower, es.logp_lower)
            if lp > -15.0 and not (stem.is_name and stem.word_margin < 0):  # "frostings", "sixths", "boxes"
                info = TokenInfo(logp_lower=max(-15.9, lp - 1.0))
        cap = w[0].isupper()
        upper = len(w) > 1 and w.isupper()
        if sent_init and toks and j >= 1 and text[j] == "." and toks[-1].end == j:
            pt = toks[-1]
            if pt.low in _ABBREV_TOKENS or (len(pt.text) == 1 and pt.cap and len(toks) >= 2 and toks[-2].cap
                                             and text[toks[-2].end : pt.start] == " "):
                sent_init = False  # "Mt. Everest", "Paul D. Hubbard": an abbreviation or initial, not a sentence end
        toks.append(Tok(s, e, w, info, cap, upper, w.islower(), sent_init, w.casefold(), poss))
    return toks


_ABBREV_TOKENS = frozenset("mt st mr mrs ms dr prof jr sr vs ft".split())


def name_class(t: Tok) -> str:
    """'pure' (name, not an English word), 'propn' (name mostly written capitalised), 'wordish'
    (name that is also an ordinary word: Will, Hope), 'unknown' (not in any table), 'word'."""
    i = t.info
    if i.is_name:
        if i.logp_lower <= -16.5:
            return "pure"
        if i.word_margin < -1.0:
            return "propn"
        return "wordish"
    if i.logp_title <= ABSENT and i.logp_lower <= -16.0:
        return "unknown"  # absent, or a very rare word never written capitalised ("Vacos" read as a plural)
    return "word"


NAMEISH = ("pure", "propn")

#: School vocabulary the general word statistics miss (they come from ordinary English text):
#: never a name unless a direct cue says so.
CURRICULAR_WORDS = frozenset("""
parallelogram rhombus rhombi trapezoid trapezium quadrilateral polygon pentagon hexagon heptagon
octagon nonagon decagon isosceles scalene equilateral hypotenuse perpendicular congruent
vertex vertices diagonal perimeter circumference radius radii diameter cylinder cone sphere
prism pyramid cuboid tessellation symmetry reflection rotation translation coordinate
quadrant axis axes integer integers numerator denominator decimal percent percentage ratio
proportion quotient dividend divisor multiplicand addend subtrahend minuend factor factors
multiple multiples exponent exponents logarithm polynomial binomial monomial trinomial coefficient
variable equation inequality expression algebra geometry arithmetic calculus trigonometry
sine cosine tangent theorem lemma axiom proof median mean mode range quartile histogram
probability fraction fractions mixed improper reciprocal array arrays tally pictograph
photosynthesis mitochondria ecosystem molecule molecules atom atoms electron proton neutron
""".split())


def _inflections(low: str):
    for suf, add in (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"), ("ly", "")):
        if low.endswith(suf) and len(low) - len(suf) >= 3:
            yield low[: -len(suf)] + add


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_CONTRACTION = re.compile(r"[a-z](?:n['’]t|['’](?:ve|re|ll))$")


_WORDLIKE_MEMO: dict[tuple[str, float], bool] = {}


def looks_like_word(low: str, lex: Lexicon, common: float = -12.0) -> bool:
    """A token no name table knows that is really a word: school vocabulary, an inflection of a
    word, or a typo one edit away from a common word ("anwer", "spase", "Parallelograms").
    Memoised (bounded): the edit search costs a few hundred lookups."""
    key = (low, common)
    hit = _WORDLIKE_MEMO.get(key)
    if hit is None:
        if len(_WORDLIKE_MEMO) >= 50_000:
            _WORDLIKE_MEMO.clear()
        hit = _WORDLIKE_MEMO[key] = _looks_like_word(low, lex, common)
    return hit


#: Laughter and its spellings: "haha", "hahaaaa", "hehe", "lol", "lmao".
_LAUGH = re.compile(r"(?:h+a+){2,}h*|a*(?:h+a+)+h+|(?:h+e+){2,}h*|l+o+l+|lm+f?a+o+|ro+fl+")
_RUN3 = re.compile(r"(.)\1{2,}")


def _looks_like_word(low: str, lex: Lexicon, common: float) -> bool:
    if low in CURRICULAR_WORDS or any(b in CURRICULAR_WORDS for b in _inflections(low)):
        return True
    if _LAUGH.fullmatch(low):
        return True
    if _RUN3.search(low):  # "Sooo", "Gooood", "Yesss": a word typed with a letter held down
        for squeezed in (_RUN3.sub(r"\1", low), _RUN3.sub(r"\1\1", low)):
            if lex.info(squeezed).logp_lower > common:
                return True
    if _CONTRACTION.search(low):
        return True  # you've, doesn't, we're, they'll: never a name
    if not 4 <= len(low) <= 14 or not low.isalpha():
        return False
    for base in _inflections(low):
        if lex.info(base).logp_lower > common:
            return True
    if len(low) >= 7:  # two common words typed together: "wellplayed", "goodjob", "thankyou"
        for i in range(3, len(low) - 2):
            if lex.info(low[:i]).logp_lower > -11.0 and lex.info(low[i:]).logp_lower > -11.0:
                return True
    splits = [(low[:i], low[i:]) for i in range(len(low) + 1)]
    for a, b in splits:
        cands = []
        if b:
            cands.append(a + b[1:])
            cands.extend(a + c + b[1:] for c in _LETTERS if c != b[0])
        if len(b) > 1:
            cands.append(a + b[1] + b[0] + b[2:])
        cands.extend(a + c + b for c in _LETTERS)
        for w in cands:
            if lex.info(w).logp_lower > common:
                return True
    return False


def split_word(toks: list, text: str, k: int, lex: Lexicon) -> bool:
    """Token k (lowercase) completes the lowercase token before it into a word ("arith matic",
    "calcu lation"): the first half is not a word of its own, the two joined are (or a typo of one)."""
    if k < 1 or text[toks[k - 1].end : toks[k].start] != " ":
        return False
    a, b = toks[k - 1], toks[k]
    if not a.lower or len(a.text) < 2 or len(a.text) + len(b.text) < 7 or a.info.logp_lower > -13.0:
        return False
    return looks_like_word(a.low + b.low, lex, common=-14.0)


# ---------------------------------------------------------------------------------------------
# name parts: initials, neighbours, lowercase full names
# ---------------------------------------------------------------------------------------------

_PARTICLES_LOWER = ("de", "da", "del", "della", "di", "van", "von", "der", "den", "la", "le", "du", "dos", "das", "bin", "al", "el")
_CALENDAR_FIRST = frozenset("jan april may june august".split())


def initial_at(toks: list[Tok], j: int, text: str) -> bool:
    """Is the one-letter token ``toks[j]`` an initial (followed by '.', or by a capitalised name part)?"""
    t = toks[j]
    if text[t.end : t.end + 1] == ".":
        return True
    if j + 1 < len(toks) and text[t.end : toks[j + 1].start] == " ":
        nt = toks[j + 1]
        return nt.cap and len(nt.text) > 1 and nt.low not in STOP and name_class(nt) in ("pure", "propn", "unknown")
    return False


def is_part(t: Tok, anchor: Tok) -> bool:
    """Can ``t`` continue a name next to ``anchor`` (same casing style)?"""
    if anchor.cap:
        if not t.cap:
            return t.low in _PARTICLES_LOWER
        if len(t.text) == 1:
            return True  # initial
        if t.low in STOP or is_place(t.text):
            return False
        if is_calendar(t.text):  # "Jan Jílek", "April Kowalczyk": a first name before a surname
            return t.low in _CALENDAR_FIRST and (anchor.info.last_rank <= 2500 or name_class(anchor) == "unknown")
        cls = name_class(t)
        return cls in ("pure", "propn", "unknown") or (cls == "wordish" and t.info.name_rank <= 2500 and t.info.word_margin < 1.0)
    # lowercase names continue with lowercase names
    if t.lower and name_class(t) in ("pure", "propn"):
        return True
    return False


def name_neighbour(toks: list[Tok], k: int, text: str) -> bool:
    """Is token k next to a capitalised name part or an initial (one person's full name)?"""
    for j in (k - 1, k + 1):
        if not (0 <= j < len(toks)):
            continue
        lo, hi = (j, k) if j < k else (k, j)
        gap = text[toks[lo].end : toks[hi].start]
        if gap.strip(" .") or len(gap) > 3 or gap.count(".") > 1:
            continue
        if "." in gap and len(toks[lo].text) != 1:
            continue  # "The Shining. Abraham Lincoln": a sentence ends there (only an initial takes a '.')
        u = toks[j]
        if not u.cap or u.upper and len(u.text) > 1:
            continue
        if len(u.text) == 1:
            if u.text != "I" and initial_at(toks, j, text):
                return True  # an initial: "Vide A. Persson"
            continue
        if u.low in STOP or u.low in PLACE_HEADS:
            continue
        if name_class(u) in ("pure", "propn", "unknown"):
            return True
    return False


def possessed_relation(toks: list[Tok], k: int) -> bool:
    """Is token ``k`` a relation word after a possessive ("meine Schwester", "mi hermana", "my
    bro")? Then it is the relation, never a name or a name part — while "Tia said hi" or "Mari
    is here" stay candidates (names that are also relation words somewhere)."""
    return k >= 1 and toks[k].low in RELATIONS and toks[k - 1].low in POSSESSIVES


def lower_full_name(toks: list[Tok], k: int, text: str) -> bool:
    """"patricia desrosiers": a first name then a surname, both names only, typed in lowercase."""
    t = toks[k]
    if name_class(t) not in NAMEISH or t.info.first_rank > 1000 or t.low in STOP:
        return False
    if k + 1 >= len(toks) or text[t.end : toks[k + 1].start] != " ":
        return False
    nt = toks[k + 1]
    if len(nt.text) == 1 and k + 2 < len(toks):  # "eric g. samoylova"
        nt = toks[k + 2]
    return nt.lower and nt.low not in STOP and name_class(nt) in NAMEISH and nt.info.last_rank <= 2500
