"""What is not private: a public figure, a fictional character, a place, a language, an event, a
brand, an organisation's name, an example name in quotes (issue #12). :func:`public_keep` returns
the token range to keep and its evidence (``keep-public``, ``keep-fiction``, ``keep-place``,
``keep-word``, ``keep-org``, ``keep-example``), or None when the candidate may be a private person.
The closed classes come from ``detection/public.py``; the evidence here is the chat around them."""

from __future__ import annotations

from ..base import TurnContext
from ..keep import is_calendar, is_place
from ..lexicon import NO_RANK, Lexicon
from ..memory import SessionMemory
from ..public import ORG_HEADS, PUBLIC_ROLES, RELATIONS, classes_of, is_public_surname, personal_cue, place_context, starts_entry, topic_cues
from .context import LEARNER_ROLES, PERSONAL_INFO, SENT_BREAK, public_talk, sentence
from .tokens import GREETINGS, NAMEISH, STOP, TITLES, Tok, is_part, looks_like_word, name_class, name_neighbour

Keep = tuple[int, int, str]

#: Nouns after "the <Name>" that make the name a modifier ("the Johnson novel", "the Smith family"):
#: the determiner then belongs to the noun, and the name may be a person's.
_DET_HEADS = frozenset("""novel novels book books film films movie movies song songs album albums version versions family
    families case house household show era administration government years brothers sisters twins kids boys girls residence
    estate company firm collection paintings concert tour style way method account report file trial campaign""".split())
#: Prepositions before a holiday or an event ("during Ramadan", "at Easter", "since Halloween").
_EVENT_PREP = frozenset("during for at on after before since until till in over".split())
#: returned by a rule that found the candidate to be a person: no later rule may keep it
_PERSON = (-1, -1, "")


def public_keep(toks: list[Tok], lows: list[str], k: int, text: str, memory: SessionMemory, topic_now: int,
                confirmed: set[int], pubskip: set[int], ctx: TurnContext, quoted: list[tuple[int, int]],
                lex: Lexicon) -> Keep | None:
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
    if personal_cue(lows, k, k):
        return None
    found = _closed_class(toks, lows, k, text, memory, topic_now, confirmed)
    if found is not None:
        return None if found is _PERSON else found  # a classed phrase, or a token of a person's full name
    if not (t.cap or t.lower) or t.low in GREETINGS:
        return None  # "Great Job Tesha": a greeting word, and the name after it is addressed
    # "Mr. Okafor coached our team this season": a title (not "coach") makes a person of one's life
    titled = k >= 1 and (lows[k - 1].rstrip(".") in TITLES or lows[k - 1] in TITLES) and lows[k - 1] != "coach"
    #: a conversation about public life: cue words in at least two of its turns (this one included)
    talk = public_talk(memory) and not titled
    found = _known_public(toks, lows, k, memory, pubskip, talk)
    if found is None:
        sent = 0 if memory.classroom or titled else sentence_evidence(toks, lows, k, text, talk)
        if sent >= 2 and memory.turns < 1:
            sent = 0  # a first message alone may be prose about a song or a film naming a private author
        found = (_by_sentence(toks, k, text, talk, sent)
                 or _full_name(toks, lows, k, text, confirmed, lex, full_ev=bool(talk or sent or (
                     topic_now > 0 and memory.turns >= 1 and not memory.classroom and not titled)))
                 or _by_shape(toks, lows, k, text, memory, ctx, quoted))
    return found


def _closed_class(toks: list[Tok], lows: list[str], k: int, text: str, memory: SessionMemory, topic_now: int,
                  confirmed: set[int]) -> Keep | None:
    """Whole phrases (up to four tokens) of the closed classes, then the token alone."""
    t = toks[k]
    n = len(toks)
    topical = topic_now > 0 or memory.topic >= 2
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
                return _PERSON
            if b > a:
                ev = {"people": "keep-public", "fiction": "keep-fiction", "places": "keep-place"}.get(cl[0], "keep-word")
                return a, b, ev
            if name_neighbour(toks, k, text):
                return _PERSON  # "Valentine S. Yermakov", "Lara Fiorentino": one token of a person's full name
            common_first = t.info.first_rank <= 1000
            det = (k >= 1 and lows[k - 1] in ("a", "an", "the") and text[toks[k - 1].end : t.start] == " "
                   and not (k + 1 < n and lows[k + 1] in _DET_HEADS))
            prev = lows[k - 1] if k >= 1 else ""
            nxt = lows[k + 1] if k + 1 < n else ""
            paired = _paired_with_class(lows, k, cl)  # "Christmas or Eid", "Paris and Florence"
            if ("things" in cl or "languages" in cl) and (not common_first or det or topical or t.upper or paired
                                                          or t.info.logp_lower > -12.0 or prev in _EVENT_PREP):
                return k, k, "keep-word"
            if "places" in cl and (not common_first or paired or place_context(prev, nxt)):
                return k, k, "keep-place"
            if ("fiction" in cl or "people" in cl) and (not common_first or topical or det):
                return k, k, "keep-fiction" if "fiction" in cl else "keep-public"
            return None
    return None


def _paired_with_class(lows: list[str], k: int, cl: tuple[str, ...]) -> bool:
    """Is token ``k`` joined by "and" / "or" to a token of one of its own closed classes?"""
    for conj, other in ((k - 1, k - 2), (k + 1, k + 2)):
        if 0 <= other < len(lows) and lows[conj] in ("and", "or") and set(classes_of(lows[other])) & set(cl):
            return True
    return False


def _known_public(toks: list[Tok], lows: list[str], k: int, memory: SessionMemory, pubskip: set[int], talk: bool) -> Keep | None:
    """A name the session already kept as public ("Brady" after "Tom Brady"); in talk about public
    life, a surname only ever found by the lexicon or the reviewer (never addressed, introduced or
    given a relation) that comes back; a public figure's surname in talk about public life
    ("With Mayfield as the quarterback", "Messi's last season") or next to one kept in this turn
    ("Steve Jobs and Wozniak")."""
    t = toks[k]
    if memory.is_public(t.text) and t.low not in memory.people:
        return k, k, "keep-public"
    if talk and 0.0 < memory.person_strength(t.text) < 1.0 and t.info.last_rank < NO_RANK \
            and (t.info.last_rank < t.info.first_rank or t.info.first_rank > 1000):
        return k, k, "keep-public"
    if is_public_surname(t.low) and t.cap and (t.info.last_rank < t.info.first_rank or t.info.first_rank > 1000):
        if talk or (k >= 2 and lows[k - 1] in ("and", "or") and (k - 2) in pubskip):
            return k, k, "keep-public"
    return None


def _by_sentence(toks: list[Tok], k: int, text: str, talk: bool, sent: int) -> Keep | None:
    """Sentence-level evidence (issue #12, second round), for whole names and surnames only: a
    public role right before the name ("QB Lamar Jackson", "president Lincoln"), a question about
    knowing of someone ("Have you heard of X?", "Do you know who X is?"), or a cue word of public
    life in the same sentence ("Jerry Jones plays football"). A private person is named by a first
    name in chat; a first name alone stays a person here. Then a surname alone in talk about public
    life ("coaches like Gruden", "players like brady"): people of one's own life are called by their
    first name, public figures by their surname."""
    t = toks[k]
    if sent == 3 and t.cap and not name_neighbour(toks, k, text):
        return k, k, "keep-public"  # a role right before even a first name: "the Quarterback Cam's attitude"
    if sent == 2 and t.cap and not name_neighbour(toks, k, text) and (t.info.last_rank < t.info.first_rank
                                                                       or t.info.first_rank > 1000):
        return k, k, "keep-public"  # "even with coach McVay", "trade for Clinton-Dix in the NFL"
    if talk and t.info.last_rank < t.info.first_rank and not (k + 1 < len(toks) and name_neighbour(toks, k, text)):
        return k, k, "keep-public"
    # a capitalised name no name table knows ("Mahomes", "Siemian"), alone, in talk about public
    # life: the people of one's life have names the tables know, and a relation word or an
    # address would have claimed them before
    if talk and t.cap and not t.upper and not t.sent_init and name_class(t) == "unknown" and not name_neighbour(toks, k, text):
        return k, k, "keep-public"
    return None


def _full_name(toks: list[Tok], lows: list[str], k: int, text: str, confirmed: set[int], lex: Lexicon,
               full_ev: bool) -> Keep | None:
    """A full name in talk about public life: "Did you know Kellan Moore is the only lefty?" (a cue
    word anywhere in a chat turn counts for a whole name: "Are you an NFL fan? Familiar with Nick
    Foles at all?"; not in a first message, a classroom, or after a title)."""
    t = toks[k]
    n = len(toks)
    j1 = k + 1
    if j1 + 1 < n and len(toks[j1].text) == 1 and (toks[j1].cap or t.lower) and text[toks[j1].end : toks[j1 + 1].start] in (" ", ". "):
        j1 += 1  # "Paul D. Hubbard": a middle initial
    if not (full_ev and j1 < n and text[t.end : toks[k + 1].start] == " "):
        return None
    u = toks[j1]
    ok = ("pure", "propn", "unknown", "wordish")
    # a capitalised ordinary word mid-sentence after a first name is its surname: "Andrew Luck"
    ok_u = ok + ("word",) if (t.cap and u.cap and not u.upper and not u.sent_init and t.info.first_rank <= 1000
                              and not is_calendar(u.text)) else ok
    if ((t.cap and u.cap and not t.upper and not u.upper) or (t.lower and u.lower and name_class(t) in NAMEISH)
            # "Alex smith", "Woodrow wilson": a first name, then a surname typed in lowercase
            or (t.cap and not t.upper and u.lower and name_class(t) in NAMEISH and name_class(u) in NAMEISH
                and t.info.first_rank <= 1000 and u.info.last_rank <= 2500 and u.info.logp_lower < -11.0)) \
            and name_class(t) in ok and name_class(u) in ok_u and u.low not in STOP and len(u.text) >= 2 \
            and not (name_class(u) == "unknown" and looks_like_word(u.low, lex)) and not PERSONAL_INFO.search(sentence(text, t.start, u.end)):
        b = j1
        while b + 1 < n and text[toks[b].end : toks[b + 1].start] in (" ", ". ") and is_part(toks[b + 1], t) \
                and toks[b + 1].low not in STOP:
            b += 1
        if not personal_cue(lows, k, b) and not any(j in confirmed for j in range(k, b + 1)):
            return k, b, "keep-public"
    return None


def _by_shape(toks: list[Tok], lows: list[str], k: int, text: str, memory: SessionMemory, ctx: TurnContext,
              quoted: list[tuple[int, int]]) -> Keep | None:
    """The words around a capitalised token: an organisation's head after it, a determiner, a team
    after its place, a title of a work; a lowercase ordinary word; an example in quotes."""
    t = toks[k]
    n = len(toks)
    # part of an organisation's, a school's or a street's name: "Parker Elementary School",
    # "Lopez Street", "Kowalski & Sons" (capitalised head right after the name)
    j = k + 1
    while j < n and j <= k + 2 and toks[j].cap and name_class(toks[j]) in ("pure", "propn") and \
            text[toks[j - 1].end : toks[j].start] == " ":
        j += 1  # "Martin Luther King Elementary"
    if t.cap and j < n and toks[j].cap and lows[j] in ORG_HEADS and text[toks[j - 1].end : toks[j].start] in (" ", " & "):
        return k, j - 1, "keep-org"
    place = _place_after_preposition(toks, lows, k, text)
    if place is not None:
        return place
    # an ordinary word said as an exclamation: "Lovely!", "Brilliant!", "Sweet!" (its lowercase
    # form common; a name called out is addressed by a greeting or known to the session)
    if (t.cap and t.sent_init and text[t.end : t.end + 1] == "!" and t.info.logp_lower > -11.5
            and t.info.word_margin >= 1.0 and not memory.is_person(t.text)):
        return k, k, "keep-word"
    # a determiner before a capitalised word: "an Emmy", "the Montagues", "the King"
    if (t.cap and not t.upper and k >= 1 and lows[k - 1] in ("a", "an", "the") and text[toks[k - 1].end : t.start] == " "
            and not (k + 1 < n and lows[k + 1] in _DET_HEADS) and not name_neighbour(toks, k, text)):
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
    if quoted and (ctx.role or "").strip().casefold() not in LEARNER_ROLES:
        if any(a <= t.start and t.end <= b for a, b in quoted):
            return k, k, "keep-example"
    return None


#: "in Kraków", "moved to Wrocław", "I'm from Łódź", "from Pittsburgh to Cleveland": where a
#: capitalised word after these is a place. "in" alone ("born in", "live in", "in Lisbon"): people are rarely "in" someone; "to" and
#: "from" only after a verb of moving or being from ("talked to Maria", "a letter from Kevin" stay people).
_MOTION = frozenset("""moved move moving went go goes going gone been flew fly flying travel travelled traveled travelling
    drove drive came come comes coming returned return trip trips back way""".split())
_ORIGIN = frozenset("am i'm im are is was were come comes came originally moved back".split())
#: "my job at Siemens", "I study at Harvard" ("look at Maria", "mad at Tom" stay people).
_WORKPLACE = frozenset("""job jobs work works worked working study studies studied studying intern interned internship
    employed employee manager engineer teacher student students position career shift""".split())
#: "believe in", "interested in", "fill in Riteshni", "let in Sam": a person may follow
_IN_PERSON = frozenset("""believe believes believed interested confidence trust faith involved fill fills filled filling
    let lets letting bring brings brought call calls called check checks checked pull pulls pulled loop looped hand
    turn turned fit fits""".split())


def _place_after_preposition(toks: list[Tok], lows: list[str], k: int, text: str) -> Keep | None:
    """A capitalised word, and the capitalised words right after it, after "in" / "to" after a
    verb of moving / "from" after a verb of being from: a place ("in Kraków", "moved to New
    Delhi"), unless possessive ("in Maria's class") or a full name with a name neighbour's shape
    a relation would have claimed before."""
    t = toks[k]
    if not (t.cap and k >= 1 and text[toks[k - 1].end : t.start] == " "):
        return None
    prev = lows[k - 1]
    prev2 = lows[k - 2] if k >= 2 else ""
    if not ((prev == "in" and prev2 not in _IN_PERSON) or (prev == "to" and (prev2 in _MOTION or "places" in classes_of(prev2)))
            or (prev == "from" and prev2 in _ORIGIN) or (prev == "at" and prev2 in _WORKPLACE)):
        return None
    b = k
    while b + 1 < len(toks) and toks[b + 1].cap and not toks[b + 1].upper and text[toks[b].end : toks[b + 1].start] == " " \
            and lows[b + 1] not in STOP:
        b += 1
    if any(toks[j].poss for j in range(k, b + 1)):
        return None
    return k, b, "keep-place"


def sentence_evidence(toks: list[Tok], lows: list[str], k: int, text: str, talk: bool) -> int:
    """Evidence in the candidate's own sentence that a whole name or a surname at ``k`` is a
    public figure: 3 = a public role right before it ("QB Lamar Jackson", "senator Warren",
    "coach McVay" in talk about sport; not after a possessive: "my coach Dan"); 2 = a cue word
    of public life in the sentence ("Jerry Jones plays football"); 1 = a question about knowing
    of someone ("Have you ever heard of X?", "Do you know who X is?", "a fan of X"); 0 = none."""
    n = len(toks)
    if k >= 1 and text[toks[k - 1].end : toks[k].start] == " " and lows[k - 1] in PUBLIC_ROLES:
        role = lows[k - 1]
        poss = any(lows[j] in ("my", "our", "your", "his", "her", "their") for j in range(max(0, k - 3), k - 1))
        if not poss and (role != "coach" or talk) and (toks[k - 1].lower or role != "coach"):
            return 3
    lo = k
    while lo > 0 and not SENT_BREAK.search(text[toks[lo - 1].end : toks[lo].start]):
        lo -= 1
    hi = k
    while hi + 1 < n and not SENT_BREAK.search(text[toks[hi].end : toks[hi + 1].start]):
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
