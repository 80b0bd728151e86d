"""Person-name finding for chat: rules settle what they are sure of, a small learned reviewer the rest.

Rules (decide alone), per word token of a turn:

* session memory: a person confirmed earlier in the session, in any case, possessive stripped;
* direct cues: greetings / vocatives ("Hi X", "thanks X!", "Good job, X.", "Will, can you ..."),
  self-introductions ("I'm X", "call me X", "my name is X"), relations ("my friend mark"), titles
  ("Mr. X" — the title stays outside the span);
* keeps: characters of the turn's problem metadata (and typos of them), public figures, places,
  curricular eponyms ("Newton's second law", "Pascal's triangle"), fixed phrases ("Bless you").

Learned reviewer (``namemodel.py``), for every other candidate: lexicon names without a cue, names
that are also ordinary words ("Sandy", "Rim"), capitalised tokens no table knows, lowercase names,
names talked about in the third person (classmate or word-problem character?). Its features are
the lexicon evidence (names-dataset ranks; case-sensitive English word probabilities), shape,
neighbouring words and punctuation, the rules' own evidence (the keep review's signals: narrative
verb, quantities, I/you in the sentence, ...) and the session state (classroom, people addressed).
Without a model (weights file absent) the rules' lexicon candidates and keep review decide, with
optional spaCy PERSON evidence for unknown tokens.

Adjacent name parts are merged into one span ("Faina D. Yefremova"); titles and "'s" stay out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from .base import Span, TurnContext
from .keep import (
    FAMOUS_FULL,
    has_quantities,
    is_calendar,
    is_curricular_head,
    is_famous,
    is_place,
    narrative_role,
    problem_texts,
)
from .lexicon import ABSENT, NO_RANK, UNKNOWN, Lexicon, TokenInfo, get_lexicon
from .memory import SessionMemory
from .public import ORG_HEADS, PLACE_HEADS, PUBLIC_ROLES, RELATIONS, classes_of, is_public_surname, personal_cue, place_context, starts_entry, topic_cues
from .namemodel import NameModel, get_model
from ..schemas import KNOWN_ROLES  # noqa: F401  (one list of speaker roles; re-exported)

_WORD = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['\u2019][sS]$")
_SENT_END = set(".?!:;\n\"“”([{–—-•*")

#: Words that directly precede a vocative ("Hi X", "Good job, X", "Thank you X").
GREETINGS = frozenset(
    """hi hello hey heya hiya howdy yo bye goodbye thanks thank thx ty welcome congrats congratulations
    dear morning afternoon evening night job done work try sorry yes yeah yep okay ok alright right
    great good excellent awesome perfect correct wow sure nice cool well fantastic amazing brilliant
    bravo please see later cheers listen look wait""".split()
)
#: Greetings strong enough to tag a following name token even when text continues ("Hi Maria can ...").
STRONG_GREETINGS = frozenset("hi hello hey heya hiya howdy bye goodbye dear thanks thx welcome congrats congratulations morning afternoon evening".split())
TITLES = frozenset("mr mrs ms miss mx mister dr doctor prof professor sir madam madame coach mme mlle".split())

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
    way why what's that's it's here's there's let's i'm you're we're they're don't can't won't didn't""".split()
)

STOP = STOP | TITLES
#: Stop words that are also first names: a name only when capitalised mid-sentence after a greeting.
_NAME_STOPS = frozenset({"will", "may"})

_INTRO_PREV = (("my", "name", "is"), ("name", "is"), ("name's",), ("i'm",), ("im",), ("i", "am"), ("call", "me"),
               ("called",), ("this", "is"), ("it's",), ("its",), ("am",))
#: Adjectives / states that follow "I'm" and are not names.
_NOT_AFTER_IM = frozenset(
    """good fine ok okay done ready here there back sorry confused lost stuck sure not so just going trying
    doing getting finished new happy sad tired bored great alright working still also really very almost
    gonna thinking talking looking in on at from with a an the""".split()
)


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


_NAMEISH = ("pure", "propn")

#: Candidates reviewed (keep rules + model) per turn; beyond this a turn is pathological and the
#: remaining capitalised candidates are masked without review (bounded work, fails closed).
MAX_REVIEWS_PER_TURN = 300

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


def _looks_like_word(low: str, lex: Lexicon, common: float) -> bool:
    if low in CURRICULAR_WORDS or any(b in CURRICULAR_WORDS for b in _inflections(low)):
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
_PERSONAL = re.compile(r"\b(?:I|you|we|me|us|my|your|our|I'm|you're|we're|I’m|you’re|we’re)\b", re.IGNORECASE)
_PERSONAL_1_2 = re.compile(r"\b(?:I|you|me|my|your|I'm|you're|I’m|you’re)\b", re.IGNORECASE)
_ADDRESSING = frozenset("can could would will please you your what how why do did are is have tell come listen look i".split())
#: A sentence about someone's personal data is about a real person, never a word-problem character.
_PERSONAL_INFO = re.compile(r"\b(?:address|phone|e-?mail|account|password|birthday|born|lives|lived|married|wife|husband|"
                            r"passport|license|licence|salary|bank)\b", re.IGNORECASE)
_THIRD = re.compile(r"\b(?:he|she|his|her|him|hers|himself|herself)\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow (?:many|much|long|far|old|tall)\b", re.IGNORECASE)
#: More maths-question wording (only for the story-character rule, not a model feature).
_MATHS_Q = re.compile(r"\b(?:how (?:big|large|wide|heavy|fast|high|deep)|subtract|multiply|divide|total|area|perimeter|volume)\b",
                      re.IGNORECASE)
_CLASSROOM = re.compile(
    r"\b(?:you guys|everyone|everybody|boys and girls|raise your hands?|all of you|y'all|you all|(?<!his )(?<!her )(?<!their )class|table \w+|row \w+|"
    r"partners?|groups?|line up|your seats?|eyes on me)\b", re.IGNORECASE)
_STORY = re.compile(r"\b(?:question|problem|story)\b", re.IGNORECASE)
_FAMILY = frozenset("mom mum mother dad father sister brother aunt uncle cousin grandma grandpa grandmother grandfather friend friends son daughter wife husband teacher tutor neighbor neighbour classmate".split())
_ABBREV_BEFORE = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|vs|etc)|(?<![\w.])[A-Z])$")
_SENT_SPLIT = re.compile(r"[.?!\n]")


#: A sentence is looked for at most this far on each side of a token: real sentences are shorter,
#: and unpunctuated input (hostile or pasted) must not make every token scan the whole text.
_SENTENCE_WINDOW = 400


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around text[start:end] (cheap split on . ? ! and newlines; "Mr." and initials
    do not end a sentence), within a bounded window."""
    lo = max(0, start - _SENTENCE_WINDOW)
    hi = min(len(text), end + _SENTENCE_WINDOW)
    a = start
    while a > lo:
        c = text[a - 1]
        if c in "?!\n":
            break
        if c == ".":
            m = _ABBREV_BEFORE.search(text, max(0, a - 8), a - 1)
            if not m:
                break
        a -= 1
    e = end
    while True:
        m = _SENT_SPLIT.search(text, e, hi)
        if not m:
            e = hi
            break
        e = m.end()
        if m.group() != "." or not _ABBREV_BEFORE.search(text, max(0, m.start() - 8), m.start()):
            break
    return text[a:e]


_SPEECH_NEXT = frozenset("said says saying asked asks thinks thought knows knew told tells explained explains means meant "
                         "wrote did got noticed agrees agreed disagrees answered found figured showed shared".split())


#: Curricular heads that make "<Name>('s) <head>" an eponym even when a model sees a person.
_EPONYM_HEADS = frozenset("""law laws theorem theorems sum sums principle constant conjecture equation equations formula
    identity sequence series paradox lemma postulate hypothesis integral transform inequality triangle distribution sieve
    spiral notation algorithm rule rules method's scale cycle effect""".split())
#: Two-word expressions whose first word is a name in some country but never here ("Bless you").
_IDIOMS = frozenset({("bless", "you"), ("rock", "paper"), ("thank", "god"), ("dear", "god"), ("oh", "god")})
#: Rejected candidates at least this likely are reported as doubts (``Cascade.candidates``).
DOUBT_MIN = 0.08
#: A sentence-initial ordinary-word name running into the sentence ("Grace period ...") needs more.
_SENT_INIT_WORD_THRESHOLD = 0.5
_CALENDAR_FIRST = frozenset("jan april may june august".split())
_SPEECH_ING_NEXT = frozenset("saying telling asking thinking explaining showing talking sharing doing trying going working".split())
_POSSESSIVES = frozenset("my your his her our their".split())
_PRONOUN_12 = frozenset("i me you we us my your".split())
_PREPOSITIONS = frozenset("with to for from at by of on about like than after before behind next between and or".split())
_HYPOTHETICAL = re.compile(r"(?:if|suppose|imagine|say|let's say|let’s say|what if)\b", re.IGNORECASE)


#: strongest first: the evidence a multi-token span reports
_EVIDENCE_ORDER = ("intro", "direct", "memory", "title", "model", "rules", "context", "bounded")


#: "What's your name?", "who am I talking to?", "what should I call you?": the answer is a name.
_NAME_QUESTION = re.compile(
    r"\b(?:what(?:'s|’s| is| was)? (?:your|ur|ya) (?:first |last |full |real |nick|sur)?name|"
    r"(?:(?<=^)|(?<=[.!?,] )|(?<=\band )|(?<=\bhi )|(?<=\bhello )|(?<=\bhey ))(?:your|ur) (?:first |last |full )?name\s*\?|"
    r"who (?:am i|are we) (?:talking|speaking|chatting|working) (?:to|with)|who is this\b|who's this\b|"
    r"what (?:should|can|do|shall) (?:i|we) call you|what do (?:you|people|they) call you|what do you go by|"
    r"(?:may|can|could) i (?:have|ask|get|know) (?:your|ur) name|(?:tell|give) me (?:your|ur) name|"
    r"(?:can|could) you (?:tell|give) me (?:your|ur) name)",
    re.IGNORECASE,
)
#: Lead-in words of an answer ("it's", "my name is", "I'm", "call me", "this is").
_ANSWER_LEAD = frozenset(
    "it's its it’s it is i'm im i’m i am my name names is call me this it's ok okay sure yes yeah yep um uh "
    "well oh first last full nickname".split()
)


def _split_word(toks: list, text: str, k: int, lex: Lexicon) -> bool:
    """Token k (lowercase) completes the lowercase token before it into a word ("arith matic",
    "calcu lation"): the first half is not a word of its own, the two joined are (or a typo of one)."""
    if k < 1 or text[toks[k - 1].end : toks[k].start] != " ":
        return False
    a, b = toks[k - 1], toks[k]
    if not a.lower or len(a.text) < 2 or len(a.text) + len(b.text) < 7 or a.info.logp_lower > -13.0:
        return False
    return looks_like_word(a.low + b.low, lex, common=-14.0)


#: Verbs of word problems (possession, buying, making, moving, sharing), for the story-character
#: rule. Not the verbs of a classroom narrating its students ("remembered", "noticed", "did",
#: "made it easier", "has done").
_PROBLEM_VERBS = frozenset(
    """has have had wants wanted needs needed buys bought sells sold spends spent earns earned gets gives gave
    takes took eats ate drinks drank runs ran rides rode walks walked drives drove saves saved pays paid
    bakes baked collects collected picks picked plants planted fills filled paints painted builds owns owned
    uses used samples sampled washes washed swims swam jogs jogged cuts shares shared divides puts orders ordered
    counts receives received charges charged invites invited brings brought plans planned grows grew measures
    measured mixes mixed pours poured feeds travels traveled travelled scores scored sprints sprinted sews sewed
    knits knitted packs packed ships shipped rents rented borrows borrowed lends lent owes owed""".split()
)
_PARTICIPLE_IRREGULAR = frozenset("done made been got gotten given taken written drawn seen said told shown known thought found".split())


def _story_character(toks: list, text: str, k: int, sig: dict, memory: SessionMemory, sentence: str) -> bool:
    """Strong evidence that a name the keep review kept is a character of a word problem, strong
    enough that the learned reviewer does not overrule it: one-to-one tutoring (not a classroom,
    where classmates are talked about), no I/you/we/let's in the sentence, the name is the subject
    of a word-problem verb ("Ron has red pens", "Mia and Daquan have a stand", "Tony samples") or
    the agent of a passive ("washed by Lucy"), and the turn poses maths ("$12", "how big", "the
    problem") or speaks of the actor as he/she, or the session already kept this name as a
    character. Direct address ("Bye Sofia") and known people never reach this point, and the
    caller drops the rule for a turn that addresses anyone."""
    if memory.classroom or memory.addressed() >= 2 or sig["pers"] or sig["family"] or sig["pinfo"] or sig["speech"]:
        return False
    if _LETS.search(sentence):
        return False
    n = len(toks)
    j = k + 1
    if j + 1 < n and toks[j].low == "and" and toks[j + 1].cap:
        j += 2
    subject = False
    if j < n and not re.search(r"[,.;:!?\n]", text[toks[j - 1].end : toks[j].start]):
        w1 = toks[j].low
        w2 = toks[j + 1].low if j + 1 < n else ""
        if w1 in _PROBLEM_VERBS:
            subject = not (w1 in ("has", "have", "had") and (w2 in _PARTICIPLE_IRREGULAR or (w2.endswith("ed") and len(w2) > 4)))
    passive = (k >= 2 and toks[k - 1].low == "by" and toks[k - 2].low.endswith("ed")
               and text[toks[k - 2].end : toks[k].start].strip() == "by")
    if not (subject or passive):
        return False
    if sig["kept_mem"]:
        return True
    return bool(sig["qty"] or sig["tqty"] or sig["storyw"] or sig["hyp"] or sig["third"] or sig["howmany"]
                or _MATHS_Q.search(sentence))


#: Roles whose turns the story-character rule leaves to the reviewer: a student talking about
#: "Kevin has 2 dogs" is more often a real person than a problem the student poses.
_LEARNER_ROLES = frozenset({"student", "students", "multiple students", "learner", "user", "human", "class"})

_LETS = re.compile(r"\blet(?:'|’)?s\b|\blet us\b", re.IGNORECASE)


def _coordinated_with(toks: list, text: str, k: int, kept: set[int]) -> bool:
    """Is token k joined by "and" to a token kept in this turn ("Lucy and Kevin")?"""
    for j, a, b in ((k - 2, k - 2, k), (k + 2, k, k + 2)):
        if j in kept and 0 <= j < len(toks) and toks[(a + b) // 2].low == "and":
            gap = text[toks[a].end : toks[b].start]
            if "," not in gap and "." not in gap and "\n" not in gap:
                return True
    return False


def _one_edit(a: str, b: str) -> bool:
    """a and b differ by exactly one insertion, deletion or substitution."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)) :] == b[i + 1 :]


def _near_problem(low: str, problem: set[str]) -> bool:
    return len(low) >= 5 and any(len(p) >= 5 and p[0] == low[0] and _one_edit(low, p) for p in problem)


def _bin_rank(r: int) -> str:
    return "0" if r <= 50 else "1" if r <= 200 else "2" if r <= 500 else "3" if r <= 1000 else "4" if r <= 2500 else "n"


def _bin_lp(lp: float) -> str:
    if lp <= ABSENT:
        return "a"
    return "r" if lp <= -15 else "u" if lp <= -13 else "o" if lp <= -11 else "c" if lp <= -9 else "f"


def _gap_class(gap: str, edge: bool, poss: bool = False, end: bool = False) -> str:
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


_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,300})[\"\u201d]|(?:(?<=^)|(?<=[\s(\[:,]))['\u2018]([^'\u2018\u2019\n]{2,300}?)['\u2019](?=[\s.,;:!?)\]]|$)")


def public_talk(memory: SessionMemory) -> bool:
    """Is the session a conversation about public life (sport, films, books, politics)? Cue words
    in at least two turns, or in one turn of a session already two turns long (this one included),
    in at least a quarter of its turns, and not a classroom (whose own pupils are talked about)."""
    return (memory.topic >= 2 or (memory.topic >= 1 and memory.turns >= 1)) \
        and memory.topic * 4 >= memory.turns + 1 and (not memory.classroom or memory.topic * 2 >= memory.turns + 1)


#: Nouns after "the <Name>" that make the name a modifier ("the Johnson novel", "the Smith family"):
#: the determiner then belongs to the noun, and the name may be a person's.
_SENT_BREAK = re.compile(r"[.!?;]\s|\n|[!?]")
_DET_HEADS = frozenset("""novel novels book books film films movie movies song songs album albums version versions family
    families case house household show era administration government years brothers sisters twins kids boys girls residence
    estate company firm collection paintings concert tour style way method account report file trial campaign""".split())
#: Prepositions before a holiday or an event ("during Ramadan", "at Easter", "since Halloween").
_EVENT_PREP = frozenset("during for at on after before since until till in over".split())


def _quoted_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of quoted passages ("...", '...', curly quotes) of a turn."""
    out = []
    for m in _QUOTED.finditer(text):
        g = 1 if m.group(1) is not None else 2
        out.append((m.start(g), m.end(g)))
    return out


class NameFinder:
    """Finds NAME spans in one turn, reading and updating the session memory."""

    source = "names"

    def __init__(self, lexicon: Lexicon | None = None, model: "NameModel | None | bool" = True) -> None:
        self.lex = lexicon or get_lexicon()
        #: the learned reviewer (``namemodel.py``); None = rules only
        self.model = get_model() if model is True else (model or None)

    # ------------------------------------------------------------------ session bookkeeping
    def observe_context(self, ctx: TurnContext, memory: SessionMemory) -> None:
        role = (ctx.role or "").strip()
        rk = role.casefold()
        if rk and rk not in KNOWN_ROLES and rk not in memory.roles_seen:
            memory.roles_seen.add(rk)
            words = [w for w in re.split(r"[\s_.\-]+", role) if len(w) > 1 and any(c.isalpha() for c in w)]
            if words and len(words) <= 4:
                memory.add_person(" ".join(words), 2.0)
        for ptext in problem_texts(ctx.metadata):
            # a stable digest, not hash(): the set lives in the sealed session state, and a str's
            # hash() changes from one process to the next (replays must be byte-identical)
            h = int.from_bytes(hashlib.blake2b(ptext.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")
            if h in memory.problems_seen:
                continue
            memory.problems_seen.add(h)
            for t in tokenize(ptext, self.lex):
                if t.cap and not t.upper and t.low not in STOP and len(t.text) > 1:
                    memory.add_problem(t.text)

    # ------------------------------------------------------------------ per turn
    def find(self, text: str, ctx: TurnContext, memory: SessionMemory, ner_spans: list[tuple[int, int]] | None = None,
             trace: list | None = None, doubts: list | None = None,
             blocked: list[tuple[int, int]] | None = None, keeps: list | None = None) -> list[Span]:
        """NAME spans of one turn. ``trace`` (training only): receives ``(start, end, features)`` for
        every candidate the model scores; ``doubts``: receives ``(start, end, probability)`` of the
        candidates the model rejected without being sure (for a later reviewer, e.g. the LLM stage);
        ``blocked``: ranges already found by the pattern recognizers (a URL, an e-mail address, ...)
        whose tokens are not name candidates; ``keeps``: receives ``(start, end, evidence)`` of the
        name-like spans decided to be kept (``keep-public``, ``keep-fiction``, ``keep-place``,
        ``keep-word``, ``keep-example``, ``keep-story``)."""
        self.observe_context(ctx, memory)
        if not memory.classroom and (_CLASSROOM.search(text) or (ctx.role or "").casefold() in ("multiple students", "students", "class")):
            memory.classroom = True
        toks = tokenize(text, self.lex)
        role_key = (ctx.role or "").strip().casefold()
        answer_from, asked_here = self._name_question(text, toks, role_key, memory)
        if not toks:
            return []
        n = len(toks)
        model = self.model
        reviews = 0
        quantities = None  # computed lazily
        ner_starts = {}
        if ner_spans:
            for a, b in ner_spans:
                for k, t in enumerate(toks):
                    if a <= t.start and t.end <= b:
                        ner_starts[k] = (a, b)

        lows = [t.low for t in toks]
        topic_now = topic_cues(lows, [t.cap and not t.sent_init for t in toks])
        if topic_now:
            memory.topic += 1
        self._turn = (lows, topic_now)  # for model_features (one turn at a time per finder)
        rejected: set[int] = set()  # tokens the learned reviewer rejected
        pubskip: set[int] = set()  # tokens of a phrase kept as public (figure, character, place, word)
        quoted: list[tuple[int, int]] | None = None  # computed lazily
        decided: dict[int, float] = {}  # token index -> score
        story: list[int] = []  # kept by _story_character, pending the whole turn
        how: dict[int, str] = {}  # token index -> evidence (Span.evidence)
        confirmed: set[int] = set()  # decided by a direct cue / memory / role
        intro: set[int] = set()  # self-introductions
        if answer_from is not None:
            answer = self._name_answer(toks, answer_from)
            for k in answer:
                decided[k] = 0.95
                how[k] = "intro"
                confirmed.add(k)
                intro.add(k)
            if asked_here and not answer:
                memory.expect_name = role_key or "?"  # "What's your name? Mine is Ms. Lee." — the answer comes next
        for k, t in enumerate(toks):
            if len(t.text) < 2 or k in decided or k in pubskip:
                continue
            if blocked and any(a <= t.start and t.end <= b for a, b in blocked):
                continue
            cls = name_class(t)
            gap_prev = text[toks[k - 1].end : t.start] if k >= 1 else text[: t.start]
            gap_next = text[t.end : toks[k + 1].start] if k + 1 < n else text[t.end :]
            # 1. session memory (confirmed people: any case, possessive stripped)
            strength = memory.person_strength(t.text)
            if t.low in STOP and not (t.low in _NAME_STOPS and t.cap and (not t.sent_init or gap_next[:1] == ",")):
                continue
            if t.low in GREETINGS and strength < 1.0:
                continue  # "Great Job Tesha", "Awesome": the greeting, never the name
            if t.low == "im" and k + 1 < n and gap_next.strip() == "":
                continue  # "hi im Jo", "Im kofi": the introduction (I'm), not part of the name
            memory_ok = strength > 0 and (t.cap or cls not in ("wordish", "word"))
            cue = self._cue(toks, k, text, gap_prev, gap_next, cls)
            if memory.in_problem(t.text) and strength < 2.0 and cue != "intro":
                if keeps is not None and t.cap:
                    keeps.append((t.start, t.end, "keep-problem"))
                continue  # a character of the session's problem text
            if memory.problem and strength <= 0 and not cue and _near_problem(t.low, memory.problem):
                continue  # a typo of one ("Catlin" for "Caitlin"), unless addressed or known
            if memory_ok and strength >= 1.0:
                decided[k] = 0.95
                how[k] = "memory"
                confirmed.add(k)
                continue
            # 2. direct cues (greetings, vocatives, self-introductions) override the keep review
            if cue in ("intro", "direct"):
                decided[k] = 0.95
                how[k] = cue
                confirmed.add(k)
                if cue == "intro":
                    intro.add(k)
                continue
            if cue == "title" and k >= 1 and toks[k - 1].low in ("coach", "miss") and public_talk(memory):
                cue = ""  # "coach Gruden", "I miss Peyton" in a conversation about sport: not a title
            # 3. weaker evidence: titles, lexicon, memory learnt from lexicon, NER
            score = 0.0
            if cue == "title":
                score = 0.9
            elif memory_ok:
                score = 0.85
            elif t.lower and self._lower_full_name(toks, k, text):
                score = 0.7  # "patricia desrosiers": a first name then a surname, both names only
            elif not t.cap or is_calendar(t.text) or (t.upper and (len(t.text) < 4 or cls not in _NAMEISH)):
                score = 0.0
            elif cls in _NAMEISH:
                score = 0.8
            elif cls == "unknown" and k in ner_starts:
                score = 0.7
            elif cls == "wordish" and k in ner_starts and not t.sent_init and t.info.first_rank <= 1000:
                score = 0.6
            elif cls == "word" and k in ner_starts and not t.sent_init and t.info.word_margin < -2:
                score = 0.55
            if score <= 0 and (model is None or not self._gate(toks, k, cls, strength)):
                continue
            if not cue and not t.cap and _split_word(toks, text, k, self.lex):
                continue  # "arith matic": the second half of a word typed with a space in it
            reviews += 1
            if reviews > MAX_REVIEWS_PER_TURN:
                # pathological input (thousands of name-like tokens): stop reviewing, fail closed
                if score > 0 or t.cap:
                    decided[k] = max(score, 0.5)
                    how[k] = "bounded"
                continue
            if score <= 0 and not memory.is_person(t.text) and (
                (cls == "unknown" and looks_like_word(t.low, self.lex))
                # a rare name typed in lowercase one edit away from a very common word: "anwer", "spase"
                or (not t.cap and t.info.name_rank > 200 and looks_like_word(t.low, self.lex, common=-10.5))
            ):
                continue  # no cue, and it is a word (a typo, a plural, school vocabulary)
            # 4. not private: a public figure, a fictional character, a place, a language, an event,
            #    a brand, an example name in quotes (``public.py``); none of it when a relation word
            #    says the name is a person of the speaker's life ("my friend Will Turner")
            if quoted is None:
                quoted = _quoted_ranges(text) if ("'" in text or '"' in text or "\u201c" in text or "\u2018" in text) else []
            pk = self._public_keep(toks, lows, k, text, memory, topic_now, confirmed, pubskip, ctx, quoted)
            if pk is not None:
                a, b, ev = pk
                for j in range(a, b + 1):
                    pubskip.add(j)
                    decided.pop(j, None)
                span_text = text[toks[a].start : toks[b].end]
                if ev in ("keep-public", "keep-fiction", "keep-place"):
                    memory.add_public(span_text)
                else:
                    memory.add_kept(span_text) if b == a else None
                if keeps is not None:
                    keeps.append((toks[a].start, toks[b].end, ev))
                continue
            # 5. keep review (rules), then the learned reviewer when there is one
            if quantities is None:
                quantities = has_quantities(text)
            sig = self._signals(toks, k, text, memory, quantities, gap_next)
            kept = self._keep_decision(toks, k, memory, sig)
            if model is None:
                if kept:
                    memory.add_kept(t.text)
                    continue
                decided[k] = score
                how[k] = "rules"
                continue
            if kept and (sig["famous"] or sig["place"] or sig["famous_full"] or sig["head"] in _EPONYM_HEADS):
                memory.add_kept(t.text)  # public figures, places, eponyms: the model does not overrule these
                if keeps is not None:
                    keeps.append((t.start, t.end, "keep-place" if sig["place"] else "keep-word" if sig["head"] in _EPONYM_HEADS
                                  and not (sig["famous"] or sig["famous_full"]) else "keep-public"))
                continue
            sentence = _sentence(text, t.start, t.end)
            if ((kept or (sig["hyp"] and _MATHS_Q.search(sentence))) and not cue and strength <= 0
                    and (ctx.role or "").strip().casefold() not in _LEARNER_ROLES
                    and _story_character(toks, text, k, sig, memory, sentence)):
                story.append(k)  # a word-problem character unless someone is addressed in this turn (below)
            if k + 1 < n and (t.low, toks[k + 1].low) in _IDIOMS:
                continue
            if cue == "title" and not kept:
                decided[k] = score  # "Mr. Nekrasov": a title is as direct as a greeting
                how[k] = "title"
                continue
            feats = self.model_features(toks, k, text, cls, score, strength, sig, kept, memory, ctx, k in ner_starts, gap_prev, gap_next)
            if trace is not None:
                trace.append((t.start, t.end, feats))
            thr = model.threshold_for(cls)
            if cls in ("wordish", "word") and t.sent_init and t.cap and not gap_next.strip():
                thr = max(thr, _SENT_INIT_WORD_THRESHOLD)  # "Grace period is over", "Mark the answer"
            p = model.prob(feats)
            if p >= thr:
                decided[k] = max(score, 0.8)
                how[k] = "model"
            else:
                rejected.add(k)
                if kept:
                    memory.add_kept(t.text)
                if doubts is not None and p >= DOUBT_MIN:
                    doubts.append((t.start, t.end, p))

        for k in [k for k in decided if k not in confirmed and is_curricular_head(toks[k].text)
                  and not (k > 0 and (toks[k - 1].low.rstrip(".") in TITLES or toks[k - 1].low in TITLES
                                      or toks[k - 1].low in GREETINGS))]:
            del decided[k]  # "Riemann Sum", "Newton's Second Law": a curricular word, not a surname
        if story and not confirmed:
            # nobody is addressed or known in this turn: the tutor is telling a problem, not talking
            # to or about the class ("So -- hey, Aries. So Dawing has 97 pencils" stays a person)
            for k in story:
                decided.pop(k, None)
                memory.add_kept(toks[k].text)
                if keeps is not None:
                    keeps.append((toks[k].start, toks[k].end, "keep-story"))
            for k in [k for k in decided if k not in confirmed and _coordinated_with(toks, text, k, set(story))]:
                del decided[k]  # "washed by Lucy and Kevin": the partner of a story character is one too
        if pubskip:
            # one decision for a whole name: a part next to a kept public figure or character is kept
            # with it ("Kellan" next to a kept "Moore"), unless someone addressed or introduced it
            for k in sorted(decided):
                if k in confirmed:
                    continue
                for j in (k - 1, k + 1):
                    if j in pubskip and 0 <= j < n:
                        lo, hi = (j, k) if j < k else (k, j)
                        if text[toks[lo].end : toks[hi].start] == " " and toks[j].cap == toks[k].cap:
                            del decided[k]
                            pubskip.add(k)
                            memory.add_public(toks[k].text)
                            if keeps is not None:
                                keeps.append((toks[k].start, toks[k].end, "keep-public"))
                            break
        talk = public_talk(memory)
        if not talk:
            self._full_names(toks, text, decided, memory, rejected)  # (not in a conversation about public life)
        if not decided:
            return []
        self._extend_lists(toks, text, decided, memory, rejected | pubskip if talk else pubskip)
        spans = self._merge(toks, text, decided, confirmed, memory, intro, how)
        if keeps:  # a keep that ended up inside a name found after all ("Ivan King") is no keep
            keeps[:] = [kp for kp in keeps if not any(sp.start < kp[1] and kp[0] < sp.end for sp in spans)]
        return spans

    # ------------------------------------------------------------------ name questions
    def _name_question(self, text: str, toks: list[Tok], role: str, memory: SessionMemory) -> tuple[int | None, bool]:
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
            for m in _NAME_QUESTION.finditer(text):
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

    def _name_answer(self, toks: list[Tok], start: int) -> list[int]:
        """Token indices of the name in a short answer to a name question ("jildau", "it's Zorvath
        Quellin", "Maria L."): at most three name tokens after lead-in words, in an answer of at
        most seven tokens; words ("no", "why", "fine", "student") are not names."""
        rest = toks[start:]
        if not rest or len(rest) > 7:
            return []
        out: list[int] = []
        for k in range(start, len(toks)):
            t = toks[k]
            if t.low in _ANSWER_LEAD or t.low in GREETINGS:
                if out:
                    break
                continue
            if len(t.text) < 2 or not t.text.replace("-", "").replace("'", "").isalpha() or t.low in STOP:
                if out and len(t.text) == 1 and t.text.isalpha():
                    continue  # a middle initial: "Maria L. Lopez"
                if out:
                    break
                return []
            nameish = t.info.is_name or not looks_like_word(t.low, self.lex) or bool(out and t.cap)  # "Jildau Bouts"
            if not nameish or (not t.cap and t.info.logp_lower > -11.0 and t.info.word_margin > 0):
                return []  # an ordinary word: this turn is not a name
            out.append(k)
            if len(out) > 3:
                return []
        return out

    # ------------------------------------------------------------------ learned reviewer
    @staticmethod
    def _gate(toks: list[Tok], k: int, cls: str, strength: float) -> bool:
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
            if cls in _NAMEISH:
                return True
            prev = toks[k - 1].low if k >= 1 else ""
            if cls in ("wordish", "unknown") and prev in GREETINGS and len(t.text) >= 3 and t.info.logp_lower < -11.0:
                return True
        return False

    def model_features(self, toks: list[Tok], k: int, text: str, cls: str, score: float, strength: float, sig: dict,
                       kept: bool, memory: SessionMemory, ctx: TurnContext, ner: bool, gap_prev: str, gap_next: str) -> list[str]:
        t = toks[k]
        i = t.info
        shape = "U" if t.upper else "C" if t.cap else "l" if t.lower else "m"
        fr, lr, lo, ti = _bin_rank(i.first_rank), _bin_rank(i.last_rank), _bin_lp(i.logp_lower), _bin_lp(i.logp_title)
        gp, gn = _gap_class(gap_prev, k == 0), _gap_class(gap_next, k + 1 >= len(toks), t.poss, True)
        p1 = toks[k - 1].low if k >= 1 and gp in ("_", ",") else gp
        n1 = toks[k + 1].low if k + 1 < len(toks) and gn in ("_", ",") else gn
        p2 = toks[k - 2].low if k >= 2 and gp == "_" and _gap_class(text[toks[k - 2].end : toks[k - 1].start], False) == "_" else "-"
        n2 = (toks[k + 2].low if k + 2 < len(toks) and gn == "_" and _gap_class(text[toks[k + 1].end : toks[k + 2].start], False) == "_"
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
        f.append("adr=" + gn + ("A" if nxt1 in _ADDRESSING else ""))
        if any(toks[j].low in _PRONOUN_12 for j in range(max(0, k - 3), min(len(toks), k + 4)) if j != k):
            f.append("near12")
        if k >= 1 and toks[k - 1].low in _PREPOSITIONS and gp == "_":
            f.append("pp=" + toks[k - 1].low)
        if sig["hyp"]:
            f.append("hyp")
        if sig["head"]:
            f.append("ch=" + ("p" if t.poss else "") + sig["head"])
        lows, topic_now = getattr(self, "_turn", ([], 0))
        # the session's public-life talk is evidence about surnames and full names, not about a first
        # name alone: "Mateo starts nursery on Monday" in a chat about football is still a person of
        # one's life (the turn's own cue words still count: "Eli is struggling this season")
        first_only = i.first_rank <= i.last_rank and i.first_rank <= 1000 and not self._name_neighbour(toks, k, text)
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
        if self._name_neighbour(toks, k, text):
            f.append("full")
        f.append("kept=%d" % kept)
        f.append("story=%d%d%d%d" % (sig["verb"], sig["qty"], sig["p12"], memory.classroom or addressed >= 2))
        f.append("vq=%d%d%s" % (sig["verb"], sig["qty"] or sig["tqty"], n1 if sig["verb"] else ""))
        return f

    # ------------------------------------------------------------------ evidence helpers
    # ------------------------------------------------------------------ evidence helpers
    def _lower_full_name(self, toks: list[Tok], k: int, text: str) -> bool:
        t = toks[k]
        if name_class(t) not in _NAMEISH or t.info.first_rank > 1000 or t.low in STOP:
            return False
        if k + 1 >= len(toks) or text[t.end : toks[k + 1].start] != " ":
            return False
        nt = toks[k + 1]
        if len(nt.text) == 1 and k + 2 < len(toks):  # "eric g. samoylova"
            nt = toks[k + 2]
        return nt.lower and nt.low not in STOP and name_class(nt) in _NAMEISH and nt.info.last_rank <= 2500

    def _full_names(self, toks: list[Tok], text: str, decided: dict[int, float], memory: SessionMemory,
                    rejected: set[int] | tuple = ()) -> None:
        """"… — Zorvath Quellin here": two adjacent capitalised tokens that are names or unknown to
        every table (not words, places, calendar, famous or story characters) read as a person's
        first and last name, whatever the session looks like. Word-problem characters rarely come
        with a surname; public figures and places are excluded by their lists."""
        ok = ("unknown", "pure", "propn")
        for k in range(len(toks) - 1):
            t, u = toks[k], toks[k + 1]
            if k in decided and k + 1 in decided:
                continue
            if k in rejected and k + 1 in rejected and t.info.is_name and u.info.is_name:
                continue  # two known names the learned reviewer saw and rejected (it knows the public-life cues)
            if not (t.cap and u.cap) or t.upper or u.upper or text[t.end : u.start] != " ":
                continue
            if name_class(t) not in ok or name_class(u) not in ok:
                continue
            if t.sent_init and name_class(t) != "pure" and t.info.is_word:
                continue
            if t.low == "im":  # "Im Kofi": I'm + a name, not a full name
                continue
            if any(is_famous(x.text) or is_place(x.text) or is_calendar(x.text) or memory.is_kept(x.text)
                   or is_curricular_head(x.text) or x.low in GREETINGS or x.low in STOP or looks_like_word(x.low, self.lex) for x in (t, u)):
                continue
            if f"{t.low} {u.low}" in FAMOUS_FULL:
                continue
            decided.setdefault(k, 0.75)
            decided.setdefault(k + 1, 0.75)

    def _extend_lists(self, toks: list[Tok], text: str, decided: dict[int, float], memory: SessionMemory,
                      skip: set[int] | tuple = ()) -> None:
        """"Eklund, Michael and Hodge": capitalised neighbours of a found name in a list are names too."""
        for k in sorted(decided):
            for step in (1, -1):
                j = k
                while True:
                    nj = j + step
                    sep = ""
                    if 0 <= nj < len(toks) and toks[nj].low in ("and", "or"):
                        sep = toks[nj].low
                        nj += step
                    if not (0 <= nj < len(toks)):
                        break
                    lo, hi = (j, nj) if step == 1 else (nj, j)
                    gap = re.sub(r"\s+", " ", text[toks[lo].end : toks[hi].start]).strip()
                    if gap not in ((", " + sep).strip(", ") if sep else ",", f", {sep}" if sep else ",", sep or ","):
                        break
                    cand = toks[nj]
                    if nj in skip:
                        break  # kept as public, or rejected by the reviewer in a conversation about public life
                    if nj in decided:
                        j = nj
                        continue
                    cls = name_class(cand)
                    if (not cand.cap or cand.upper or cand.low in STOP or cand.low in GREETINGS or len(cand.text) < 2
                            or (name_class(cand) == "unknown" and looks_like_word(cand.low, self.lex))
                            or is_calendar(cand.text)
                            or is_place(cand.text) or is_famous(cand.text) or memory.is_kept(cand.text)
                            or not (cls in ("pure", "propn", "unknown") or (cls == "wordish" and cand.info.word_margin < 1.0))):
                        break
                    decided[nj] = 0.7
                    j = nj

    def _public_keep(self, toks: list[Tok], lows: list[str], k: int, text: str, memory: SessionMemory, topic_now: int,
                     confirmed: set[int], pubskip: set[int], ctx: TurnContext,
                     quoted: list[tuple[int, int]]) -> tuple[int, int, str] | None:
        """Is the candidate at ``k`` (with its neighbours) something public rather than a private
        person? Returns the token range kept and its evidence, or None. Order: a relation word or a
        greeting makes it a person (None); then whole phrases of the closed classes (a Pantheon
        public figure, a fictional character, a place, an event: one decision for the whole name,
        "Atticus Finch", "Steve Jobs"); then one token: an event / language / brand, a place (a
        common first name only with place context: "in Georgia", "Georgia Tech"), a character or
        mononym, a public figure's surname in a conversation about public life, a name the session
        already kept as public; a full name in a conversation about public life; a determiner
        before it ("an Emmy", "the Montagues"); an example name in quotes in a teacher's turn."""
        t = toks[k]
        n = len(toks)
        topical = topic_now > 0 or memory.topic >= 2
        #: a conversation about public life: cue words in at least two of its turns (this one included)
        talk = public_talk(memory)
        rel_k = personal_cue(lows, k, k)
        if rel_k:
            return None
        # whole phrases (up to four tokens) of the closed classes
        for a in range(max(0, k - 3), k + 1):
            if a < k and (not starts_entry(lows[a]) or a in confirmed):
                continue
            for b in range(min(n - 1, a + 3), max(a, k) - 1, -1):
                if b > a and any(text[toks[j].end : toks[j + 1].start] != " " for j in range(a, b)):
                    continue
                if b > a and not toks[b].cap and toks[a].cap:
                    continue
                phrase = lows[a] if a == b else " ".join(lows[a : b + 1])
                cl = classes_of(phrase)
                if not cl or (a == b and a != k):
                    continue
                if any(j in confirmed for j in range(a, b + 1)) or personal_cue(lows, a, b):
                    return None
                if b > a:
                    ev = {"people": "keep-public", "fiction": "keep-fiction", "places": "keep-place"}.get(cl[0], "keep-word")
                    return a, b, ev
                if self._name_neighbour(toks, k, text):
                    return None  # "Valentine S. Yermakov", "Lara Fiorentino": one token of a person's full name
                common_first = t.info.first_rank <= 1000
                det = (k >= 1 and lows[k - 1] in ("a", "an", "the") and text[toks[k - 1].end : t.start] == " "
                       and not (k + 1 < n and lows[k + 1] in _DET_HEADS))
                prev = lows[k - 1] if k >= 1 else ""
                nxt = lows[k + 1] if k + 1 < n else ""
                if ("things" in cl or "languages" in cl) and (not common_first or det or topical or t.upper
                                                              or t.info.logp_lower > -12.0 or prev in _EVENT_PREP):
                    return k, k, "keep-word"
                if "places" in cl and (not common_first or place_context(prev, nxt)):
                    return k, k, "keep-place"
                if ("fiction" in cl or "people" in cl) and (not common_first or topical or det):
                    return k, k, "keep-fiction" if "fiction" in cl else "keep-public"
                break
        if not (t.cap or t.lower) or t.low in GREETINGS:
            return None  # "Great Job Tesha": a greeting word, and the name after it is addressed
        common_first = t.info.first_rank <= 1000
        if memory.is_public(t.text) and t.low not in memory.people:
            return k, k, "keep-public"  # "Brady" after "Tom Brady" was kept
        # in talk about public life, a surname only ever found by the lexicon or the reviewer (never
        # addressed, introduced or given a relation) that comes back is the public figure talked about
        # "Mr. Okafor coached our team this season": a title (not "coach") makes a person of one's life
        titled = k >= 1 and (lows[k - 1].rstrip(".") in TITLES or lows[k - 1] in TITLES) and lows[k - 1] != "coach"
        if titled:
            talk = False
        if talk and 0.0 < memory.person_strength(t.text) < 1.0 and t.info.last_rank < NO_RANK \
                and (t.info.last_rank < t.info.first_rank or t.info.first_rank > 1000):
            return k, k, "keep-public"
        # a public figure's surname in talk about public life ("With Mayfield as the quarterback",
        # "Messi's last season"), or next to one kept in this turn ("Steve Jobs and Wozniak")
        if is_public_surname(t.low) and t.cap and (t.info.last_rank < t.info.first_rank or not common_first):
            if talk or (k >= 2 and lows[k - 1] in ("and", "or") and (k - 2) in pubskip):
                return k, k, "keep-public"
        # sentence-level evidence (issue #12, second round), for whole names and surnames only: a
        # public role right before the name ("QB Lamar Jackson", "president Lincoln"), a question
        # about knowing of someone ("Have you heard of X?", "Do you know who X is?"), or a cue word
        # of public life in the same sentence ("Jerry Jones plays football"). A private person is
        # named by a first name in chat; a first name alone stays a person here.
        sent = 0 if memory.classroom or titled else self._sentence_evidence(toks, lows, k, text, talk)
        if sent >= 2 and memory.turns < 1:
            sent = 0  # a first message alone may be prose about a song or a film naming a private author
        if sent == 3 and t.cap and not self._name_neighbour(toks, k, text):
            return k, k, "keep-public"  # a role right before even a first name: "the Quarterback Cam's attitude"
        if sent == 2 and t.cap and not self._name_neighbour(toks, k, text) and (t.info.last_rank < t.info.first_rank
                                                                                   or t.info.first_rank > 1000):
            return k, k, "keep-public"  # "even with coach McVay", "trade for Clinton-Dix in the NFL"
        # a surname alone in talk about public life ("coaches like Gruden", "players like brady"):
        # people of one's own life are called by their first name; public figures by their surname
        if talk and t.info.last_rank < t.info.first_rank and not (k + 1 < n and self._name_neighbour(toks, k, text)):
            return k, k, "keep-public"
        # a full name in talk about public life: "Did you know Kellan Moore is the only lefty?"
        # (a cue word anywhere in a chat turn counts for a whole name: "Are you an NFL fan? Familiar
        # with Nick Foles at all?"; not in a first message, a classroom, or after a title)
        full_ev = talk or sent or (topic_now > 0 and memory.turns >= 1 and not memory.classroom and not titled)
        j1 = k + 1
        if j1 + 1 < n and len(toks[j1].text) == 1 and (toks[j1].cap or t.lower) and text[toks[j1].end : toks[j1 + 1].start] in (" ", ". "):
            j1 += 1  # "Paul D. Hubbard": a middle initial
        if full_ev and j1 < n and text[t.end : toks[k + 1].start] == " ":
            u = toks[j1]
            ok = ("pure", "propn", "unknown", "wordish")
            # a capitalised ordinary word mid-sentence after a first name is its surname: "Andrew Luck"
            ok_u = ok + ("word",) if (t.cap and u.cap and not u.upper and not u.sent_init and t.info.first_rank <= 1000
                                      and not is_calendar(u.text)) else ok
            if ((t.cap and u.cap and not t.upper and not u.upper) or (t.lower and u.lower and name_class(t) in _NAMEISH)
                    # "Alex smith", "Woodrow wilson": a first name, then a surname typed in lowercase
                    or (t.cap and not t.upper and u.lower and name_class(t) in _NAMEISH and name_class(u) in _NAMEISH
                        and t.info.first_rank <= 1000 and u.info.last_rank <= 2500 and u.info.logp_lower < -11.0)) \
                    and name_class(t) in ok and name_class(u) in ok_u and u.low not in STOP and len(u.text) >= 2 \
                    and not (name_class(u) == "unknown" and looks_like_word(u.low, self.lex)) and not _PERSONAL_INFO.search(_sentence(text, t.start, u.end)):
                b = j1
                while b + 1 < n and text[toks[b].end : toks[b + 1].start] in (" ", ". ") and self._is_part(toks[b + 1], t) \
                        and toks[b + 1].low not in STOP:
                    b += 1
                if not personal_cue(lows, k, b) and not any(j in confirmed for j in range(k, b + 1)):
                    return k, b, "keep-public"
        # part of an organisation's, a school's or a street's name: "Parker Elementary School",
        # "Lopez Street", "Kowalski & Sons" (capitalised head right after the name)
        j = k + 1
        while j < n and j <= k + 2 and toks[j].cap and name_class(toks[j]) in ("pure", "propn") and \
                text[toks[j - 1].end : toks[j].start] == " ":
            j += 1  # "Martin Luther King Elementary"
        if t.cap and j < n and toks[j].cap and lows[j] in ORG_HEADS and text[toks[j - 1].end : toks[j].start] in (" ", " & "):
            return k, j - 1, "keep-org"
        # a determiner before a capitalised word: "an Emmy", "the Montagues", "the King"
        if (t.cap and not t.upper and k >= 1 and lows[k - 1] in ("a", "an", "the") and text[toks[k - 1].end : t.start] == " "
                and not (k + 1 < n and lows[k + 1] in _DET_HEADS) and not self._name_neighbour(toks, k, text)):
            return k, k, "keep-word"
        # a team after its place: "the Iowa Hawkeyes", "the Boston Celtics" (a plural after the + place)
        if (t.cap and not t.upper and t.low.endswith("s") and k >= 2 and lows[k - 2] == "the" and toks[k - 1].cap
                and is_place(toks[k - 1].text) and text[toks[k - 1].end : t.start] == " "):
            return k - 1, k, "keep-word"
        # a capitalised common word mid-sentence, then this one: the title of a work or a brand ("It was
        # Space Jam", "a pair of Air Jordans"), not a person (titles, relations, greetings excepted;
        # not in a turn typed In Title Case)
        if (t.cap and not t.upper and not t.sent_init and k >= 1 and text[toks[k - 1].end : t.start] == " "):
            pv = toks[k - 1]
            if (pv.cap and not pv.upper and not pv.sent_init and name_class(pv) == "word" and pv.info.logp_lower > -12.0
                    and pv.low not in STOP and pv.low not in TITLES and pv.low not in RELATIONS and pv.low not in GREETINGS
                    and sum(1 for x in toks if x.cap and not x.sent_init) * 3 < len(toks)):
                return k, k, "keep-word"
        # a lowercase ordinary word with no cue: "thank goodness", "brought me great joy" (its lowercase
        # form far more common than the capitalised one; a cue, a relation or the session memory
        # would have decided it before)
        if (t.lower and name_class(t) in ("wordish", "word") and t.info.word_margin >= 2.0 and t.info.logp_lower > -12.0
                and not t.poss and not t.sent_init and not (k >= 1 and lows[k - 1] in GREETINGS and lows[k - 1] != "thank")  # "thank goodness"; "thanks joy" is addressed
                and not memory.is_person(t.text)):
            return k, k, "keep-word"
        # an example name in quotes in a teacher's turn: "'Sam and I went home' or 'me and Sam'?"
        if quoted and (ctx.role or "").strip().casefold() not in _LEARNER_ROLES:
            if any(a <= t.start and t.end <= b for a, b in quoted):
                return k, k, "keep-example"
        return None

    @staticmethod
    def _sentence_evidence(toks: list[Tok], lows: list[str], k: int, text: str, talk: bool) -> int:
        """Evidence in the candidate's own sentence that a whole name or a surname at ``k`` is a
        public figure: 2 = a public role right before it ("QB Lamar Jackson", "senator Warren",
        "coach McVay" in talk about sport; not after a possessive: "my coach Dan") or a cue word of
        public life in the sentence ("Jerry Jones plays football"); 1 = a question about knowing
        of someone ("Have you ever heard of X?", "Do you know who X is?", "a fan of X"); 0 = none."""
        n = len(toks)
        if k >= 1 and text[toks[k - 1].end : toks[k].start] == " " and lows[k - 1] in PUBLIC_ROLES:
            role = lows[k - 1]
            poss = any(lows[j] in ("my", "our", "your", "his", "her", "their") for j in range(max(0, k - 3), k - 1))
            if not poss and (role != "coach" or talk) and (toks[k - 1].lower or role != "coach"):
                return 3
        lo = k
        while lo > 0 and not _SENT_BREAK.search(text[toks[lo - 1].end : toks[lo].start]):
            lo -= 1
        hi = k
        while hi + 1 < n and not _SENT_BREAK.search(text[toks[hi].end : toks[hi + 1].start]):
            hi += 1
        caps = [toks[j].cap and not toks[j].sent_init for j in range(lo, hi + 1)]
        if topic_cues(lows[lo : hi + 1], caps):
            return 2
        prev2 = " ".join(lows[max(0, k - 2) : k])
        if prev2 in ("heard of", "fan of", "know of", "knew of", "think of", "think about") or lows[k - 1 : k] == ["who"] \
                and k >= 2 and lows[k - 2] in ("know", "knows", "remember", "recall") \
                and any(lows[j] in ("is", "was") for j in range(k + 1, min(n, k + 5))):
            return 1
        return 0

    @staticmethod
    def _name_neighbour(toks: list[Tok], k: int, text: str) -> bool:
        """Is token k next to a capitalised name part or an initial (one person's full name)?"""
        for j in (k - 1, k + 1):
            if not (0 <= j < len(toks)):
                continue
            lo, hi = (j, k) if j < k else (k, j)
            gap = text[toks[lo].end : toks[hi].start]
            if gap.strip(" .") or len(gap) > 3 or gap.count(".") > 1:
                continue
            u = toks[j]
            if not u.cap or u.upper and len(u.text) > 1:
                continue
            if len(u.text) == 1:
                if u.text != "I" and NameFinder._initial_at(toks, j, text):
                    return True  # an initial: "Vide A. Persson"
                continue
            if u.low in STOP or u.low in PLACE_HEADS:
                continue
            if name_class(u) in ("pure", "propn", "unknown"):
                return True
        return False

    def _cue(self, toks: list[Tok], k: int, text: str, gap_prev: str, gap_next: str, cls: str) -> str:
        """'direct' (greeting, vocative, self-introduction), 'title' (Mr. X) or ''."""
        t = toks[k]
        if (t.low in STOP and t.low not in _NAME_STOPS) or is_calendar(t.text):
            return ""
        prev0 = toks[k - 1].low if k >= 1 else ""
        if prev0 in TITLES and t.cap and len(t.text) > 1 and re.fullmatch(r"\.? ?", gap_prev) and (cls != "word" or t.info.word_margin < 0):
            return "title"
        # a relation: "my friend mark", "your sister Ana" (an ordinary-word name only if not a common word)
        if (k >= 2 and (toks[k - 1].low in _FAMILY or toks[k - 1].low in RELATIONS) and toks[k - 2].low in _POSSESSIVES
                and gap_prev == " "
                and (cls in _NAMEISH or (cls == "unknown" and len(t.text) >= 3)
                     or (cls == "wordish" and t.info.first_rank <= 300 and t.info.logp_lower < -9.5)
                     # "my friend Will Turner", "my sister Hope": a capitalised name after the relation
                     or (t.cap and not t.upper and t.info.is_name and t.info.first_rank <= 2500))):
            return "direct"
        nameish = cls in _NAMEISH or (cls == "wordish" and t.cap)
        if cls == "unknown" and t.cap and len(t.text) >= 3:
            nameish = True
        if t.low in TITLES:
            return ""
        if not nameish:
            if t.lower and cls == "unknown" and len(t.text) >= 3 and re.fullmatch(r"[ ,:]*", gap_prev or " "):
                prev3 = tuple(toks[j].low for j in range(max(0, k - 3), k))
                if prev3[-3:] == ("my", "name", "is") or prev3[-2:] == ("call", "me"):
                    return "intro"
            return ""
        if t.lower and cls not in _NAMEISH and cls != "unknown":
            return ""
        if cls == "wordish" and t.info.first_rank > 1000 and not (k >= 1 and toks[k - 1].low in STRONG_GREETINGS):
            return ""
        prev = [toks[j].low for j in range(max(0, k - 3), k)]
        nxt_boundary = gap_next.strip() == "" and k + 1 >= len(toks) or (gap_next[:1] in ",.!?;:)" if gap_next else True)
        # greetings / vocatives
        if prev and prev[-1] in GREETINGS and re.fullmatch(r"[ ,!]*", gap_prev or " "):
            g = prev[-1]
            if g in ("morning", "afternoon", "evening", "night") and not (len(prev) >= 2 and prev[-2] == "good"):
                return ""
            if t.low in _NAME_STOPS and not (t.cap and nxt_boundary):
                return ""
            if g in STRONG_GREETINGS and (t.cap or cls in _NAMEISH or cls == "unknown"):
                return "direct"
            if nxt_boundary and "," in (gap_prev + gap_next[:1]) or nxt_boundary and gap_next[:1] in "!?":
                return "direct"
            if nxt_boundary and gap_prev.strip() == "" and g in ("job", "done", "work", "try", "you"):
                return "direct"
        if len(prev) >= 2 and prev[-2:] == ["thank", "you"] and re.fullmatch(r"[ ,]*", gap_prev or " "):
            return "direct"
        # bare vocatives: "Zizan?", "Alifereti, are you ...", "What are we doing, Zizan?", "So, Neliko, the ..."
        if t.cap and not t.upper and (cls != "unknown" or len(t.text) >= 3):
            after = gap_next.strip()[:1] if gap_next.strip() else ("" if k + 1 >= len(toks) else " ")
            last = k + 1 >= len(toks)
            if "[" in gap_prev or after in ("]", ")"):
                return ""
            ends = after == "?" or (after in ("!", ".") and (last or gap_next.strip() in (".", "!")))
            if t.low in _NAME_STOPS:  # "Will, can you read the next one?"
                if t.sent_init and after == "," and k + 1 < len(toks) and toks[k + 1].low in _ADDRESSING:
                    return "direct"
            elif cls == "wordish":  # Will, Hope, Liberty: a called-on question ("Liberty?") or "Olive can you ..."
                if t.info.word_margin < 2.0 and after == "?" and (t.sent_init or gap_prev.strip() == ","):
                    return "direct"
                if t.sent_init and after == " " and k + 2 < len(toks) and toks[k + 1].low in ("can", "could", "would", "do", "did") \
                        and toks[k + 2].low in ("you", "u"):
                    return "direct"
            elif cls == "unknown":
                if after == "?" and (t.sent_init or gap_prev.strip() == ","):
                    return "direct"
                if t.sent_init and after == "," and k + 1 < len(toks) and toks[k + 1].low in _ADDRESSING:
                    return "direct"  # "Warrane, can I ...", "Zizan, you ..."
            else:
                if (t.sent_init or gap_prev.strip() == ",") and ends:
                    return "direct"
                if t.sent_init and after == " " and k + 2 < len(toks) and (
                    (toks[k + 1].low in ("can", "could", "would", "will", "do", "did", "are", "have") and toks[k + 2].low in ("you", "u"))
                    or toks[k + 1].low == "please"):
                    return "direct"
                if after == "," and (t.sent_init or (k >= 1 and toks[k - 1].sent_init and toks[k - 1].low in ("so", "and", "now", "okay", "ok", "well", "but", "yes", "no", "alright", "actually")
                                                     and gap_prev == " ")):
                    return "direct"
                if gap_prev.strip() == "," and after == "," and k >= 1 and toks[k - 1].low in ("so", "okay", "ok", "now", "and", "yes", "no", "well", "then", "alright", "right", "but"):
                    return "direct"
        # self introductions
        poss_prev = bool(prev) and toks[k - 1].poss  # tokenize() strips "'s": "my name's Diego", "it's Maria"
        if prev and re.fullmatch(r"[ ,:]*", (gap_prev[2:] if poss_prev else gap_prev) or " "):
            if poss_prev:
                prev = prev[:-1] + [prev[-1] + "'s"]
            for pat in _INTRO_PREV:
                if len(prev) >= len(pat) and tuple(prev[-len(pat):]) == pat:
                    if t.low in _NOT_AFTER_IM:
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
                    return "intro"
        # titles: "Mr. Smith" (the title stays out of the span)
        if prev and prev[-1] in TITLES and t.cap and re.fullmatch(r"\.? ?", gap_prev):
            return "title"
        return ""

    def _signals(self, toks: list[Tok], k: int, text: str, memory: SessionMemory, quantities: bool, gap_next: str) -> dict:
        """Evidence for the keep review (and features for the model): is the candidate a public
        figure, a place, part of a curricular term, a third-person actor of a word problem, ...?"""
        t = toks[k]
        famous_full = k + 1 < len(toks) and f"{t.low} {toks[k + 1].low}" in FAMOUS_FULL
        curricular = False
        head = ""
        for j in range(k + 1, min(len(toks), k + 4)):
            if is_curricular_head(toks[j].text):
                curricular = not re.search(r"[,.;:!?]", text[t.end : toks[j].start])
                head = toks[j].low if curricular else ""
                break
        sent = _sentence(text, t.start, t.end)
        prev_words = []
        for j in range(k - 1, max(-1, k - 4), -1):
            if re.search(r"[,.;:!?]", text[toks[j].end : toks[j + 1].start]) and not (toks[j].low in TITLES):
                break
            if toks[j].low in TITLES:
                continue
            prev_words.insert(0, toks[j].low)
            if len(prev_words) == 2:
                break
        nxt: list[str] = []
        j = k + 1
        if j < len(toks) and not re.search(r"[,.;:!?]", gap_next):
            if toks[j].low == "and" and j + 1 < len(toks) and toks[j + 1].cap:
                j += 2  # "Mia and Daquan have"
            nxt = [toks[x].low for x in range(j, min(len(toks), j + 2))]
        verb = narrative_role(prev_words, nxt)
        return {
            "kept_mem": memory.is_kept(t.text),
            "famous": is_famous(t.text),
            "place": is_place(t.text),
            "famous_full": famous_full,
            "curricular": curricular,
            "family": bool(prev_words and prev_words[-1] in _FAMILY or (len(prev_words) >= 2 and prev_words[-2] in ("my", "your", "our"))),
            "pinfo": bool(_PERSONAL_INFO.search(sent)),
            "verb": verb,
            "verb0": narrative_role([], nxt),
            "qty": has_quantities(sent),
            "tqty": quantities,
            "storyw": bool(_STORY.search(sent)),
            "p12": bool(_PERSONAL_1_2.search(sent)),
            "pers": bool(_PERSONAL.search(sent)),
            "third": bool(_THIRD.search(sent)),
            "howmany": bool(_HOW_MANY.search(sent)),
            "copula": bool(nxt) and nxt[0] in ("is", "was", "are", "were", "and"),
            "speech": bool(nxt) and (nxt[0] in _SPEECH_NEXT or (nxt[0] in ("is", "was") and len(nxt) > 1 and nxt[1] in _SPEECH_ING_NEXT)),
            "hyp": bool(_HYPOTHETICAL.match(sent.lstrip(" \t\"'\u201c([*-"))),
            "head": head,
        }

    def _keep_decision(self, toks: list[Tok], k: int, memory: SessionMemory, sig: dict) -> bool:
        """The rules' keep review: True = not a participant (public figure, curricular term, place,
        story character)."""
        t = toks[k]
        if sig["kept_mem"] or sig["famous"] or sig["place"]:
            return True
        if sig["famous_full"]:
            memory.add_kept(toks[k + 1].text)
            return True
        if sig["curricular"]:
            return True
        # third-person actor of a word problem / story ("Mike has 4 cookies", "How many yards did
        # Jason run?"). In one-to-one tutoring (fewer than two people addressed so far) a name the
        # tutor talks *about* in a maths context is a character; in a classroom (several people
        # addressed) classmates are talked about too, so stricter evidence is needed.
        if sig["family"]:
            return False  # "my sister Maria", "your friend Tom"
        if sig["pinfo"]:
            return False
        verb, qty = sig["verb"], sig["qty"]
        if memory.addressed() >= 2 or memory.classroom:  # classroom
            return verb and qty and not (sig["pers"] and not sig["howmany"])
        if not (qty or sig["tqty"] or sig["storyw"]):
            # "Tony samples all the students in his classes": a third-person actor with a narrative
            # verb, referred to as he/she, in a sentence without I/you
            return t.sent_init and sig["verb0"] and sig["third"] and not sig["p12"]
        if sig["p12"] and not sig["howmany"]:
            return False  # "I like how Julia is showing me ..." talks about a classmate
        if not verb:
            verb = t.poss or sig["copula"]
        return verb

    # ------------------------------------------------------------------ spans
    def _merge(self, toks: list[Tok], text: str, decided: dict[int, float], confirmed: set[int], memory: SessionMemory,
               intro: set[int] = frozenset(), how: dict[int, str] | None = None) -> list[Span]:
        spans: list[Span] = []
        used: set[int] = set()
        for k in sorted(decided):
            if k in used:
                continue
            a = b = k
            # extend right over name parts / initials separated by a single space
            while b + 1 < len(toks):
                gap = text[toks[b].end : toks[b + 1].start]
                nt = toks[b + 1]
                if gap not in (" ", ". ") or (gap == ". " and len(toks[b].text) != 1):
                    break
                if len(nt.text) == 1 and b + 1 not in decided and not self._initial_at(toks, b + 1, text):
                    break  # "Put those away Mahfuzur I don't ...": the pronoun, not an initial
                if b + 1 in decided or self._is_part(nt, toks[k]):
                    b += 1
                else:
                    break
            # extend left
            while a - 1 >= 0:
                gap = text[toks[a - 1].end : toks[a].start]
                pt = toks[a - 1]
                if gap not in (" ", ". ") or (gap == ". " and len(pt.text) != 1):
                    break
                if pt.low == "im":
                    break  # "hi im Jo": "im" (I'm) introduces the name, it is not part of it
                if a - 1 in decided or (self._is_part(pt, toks[k]) and pt.low not in TITLES and pt.low not in GREETINGS):
                    a -= 1
                else:
                    break
            for j in range(a, b + 1):
                used.add(j)
            # initials at the edges are not names on their own
            while a < b and len(toks[a].text) == 1:
                a += 1
            start, end = toks[a].start, toks[b].end
            if b > a and len(toks[b].text) == 1:
                end = toks[b].end
            score = max(decided.get(j, 0.0) for j in range(a, b + 1))
            tags = {how.get(j, "context") for j in range(a, b + 1) if j in decided} if how is not None else set()
            evidence = next((e for e in _EVIDENCE_ORDER if e in tags), "")
            spans.append(Span(start, end, "NAME", self.source, score, evidence))
            strength = 2.0 if any(j in intro for j in range(a, b + 1)) else 1.0 if any(j in confirmed for j in range(a, b + 1)) else (0.8 if score >= 0.8 else 0.0)
            if strength:
                memory.add_person(text[start:end], strength)
        return spans

    @staticmethod
    def _initial_at(toks: list[Tok], j: int, text: str) -> bool:
        """Is the one-letter token ``toks[j]`` an initial (followed by '.', or by a capitalised name part)?"""
        t = toks[j]
        if text[t.end : t.end + 1] == ".":
            return True
        if j + 1 < len(toks) and text[t.end : toks[j + 1].start] == " ":
            nt = toks[j + 1]
            return nt.cap and len(nt.text) > 1 and nt.low not in STOP and name_class(nt) in ("pure", "propn", "unknown")
        return False

    @staticmethod
    def _is_part(t: Tok, anchor: Tok) -> bool:
        """Can ``t`` continue a name next to ``anchor`` (same casing style)?"""
        if anchor.cap:
            if not t.cap:
                return t.low in ("de", "da", "del", "della", "di", "van", "von", "der", "den", "la", "le", "du", "dos", "das", "bin", "al", "el")
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
