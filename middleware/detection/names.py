"""Person-name finding for chat: rules settle what they are sure of, a small learned reviewer the rest.

Rules (decide alone), per word token of a turn:

* session memory: a person confirmed earlier in the session, in any case, possessive stripped;
* direct cues (``naming/cues.py``): greetings / vocatives ("Hi X", "thanks X!", "Good job, X.",
  "Will, can you ..."), self-introductions ("I'm X", "call me X", "my name is X"), relations
  ("my friend mark"), titles ("Mr. X" — the title stays outside the span);
* keeps: characters of the turn's problem metadata (and typos of them), public figures, places,
  languages, events, fictional characters, examples in quotes (``naming/public_keep.py``),
  curricular eponyms ("Newton's second law"), fixed phrases ("Bless you"), word-problem
  characters (``naming/story.py``).

Learned reviewer (``namemodel.py``, features in ``naming/features.py``), for every other candidate:
lexicon names without a cue, names that are also ordinary words ("Sandy", "Rim"), capitalised
tokens no table knows, lowercase names, names talked about in the third person (classmate or
word-problem character?). Without a model (weights file absent) the rules' lexicon candidates and
keep review decide, with optional spaCy PERSON evidence for unknown tokens.

Adjacent name parts are merged into one span ("Faina D. Yefremova"; ``naming/spans.py``).
This module runs the parts in order for one turn: :meth:`NameFinder.find`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .base import Span, TurnContext
from .keep import has_quantities, is_calendar, is_curricular_head, problem_texts
from .lexicon import Lexicon, get_lexicon
from .memory import SessionMemory
from .namemodel import NameModel, get_model
from .naming.context import (
    CLASSROOM,
    LEARNER_ROLES,
    MATHS_Q,
    example_ranges,
    public_talk,
    quoted_ranges,
    script_ranges,
    sentence,
)
from .naming.cues import cue as direct_cue, intro_parts, name_answer, name_question
from .naming.features import capitalised_by_norm, gate, model_features
from .naming.public_keep import public_keep
from .naming.spans import extend_lists, full_names, merge
from .naming.story import EPONYM_HEADS, IDIOMS, coordinated_with, keep_decision, near_problem, signals, story_character
from .naming.tokens import (  # noqa: F401  (re-exported: the name finder's vocabulary)
    GREETINGS,
    NAME_STOPS,
    NAMEISH,
    STOP,
    TITLES,
    Tok,
    looks_like_word,
    lower_full_name,
    name_class,
    possessed_relation,
    split_word,
    tokenize,
)
from .public import classes_of, personal_cue, topic_cues
from ..schemas import KNOWN_ROLES  # noqa: F401  (one list of speaker roles; re-exported)

#: Candidates reviewed (keep rules + model) per turn; beyond this a turn is pathological and the
#: remaining capitalised candidates are masked without review (bounded work, fails closed).
MAX_REVIEWS_PER_TURN = 300
#: Rejected candidates at least this likely are reported as doubts (``Cascade.candidates``).
DOUBT_MIN = 0.08
#: A sentence-initial ordinary-word name running into the sentence ("Grace period ...") needs more.
_SENT_INIT_WORD_THRESHOLD = 0.5
_PUBLIC_KEEPS = ("keep-public", "keep-fiction", "keep-place")
#: Words after which a lowercase token is an ordinary word, not a name: articles and degree adverbs
#: ("as a junior", "very earnest"), and a copula after a personal pronoun ("you are frank"; not
#: "is john coming?", "where is maria", "this is jo").
_ARTICLES_DEGREE = frozenset("a an the very quite really more most less".split())
_COPULAS = frozenset("is are was were be been am".split())
_SUBJECTS = frozenset("i you he she we they".split())


def _word_position(lows: list[str], k: int, gap_prev: str) -> bool:
    if k < 1 or gap_prev != " ":
        return False
    prev = lows[k - 1]
    return prev in _ARTICLES_DEGREE or (prev in _COPULAS and k >= 2 and lows[k - 2] in _SUBJECTS)


#: Words before a lowercase word that make it a thing, not a person of the session ("the ash").
_THING_BEFORE = frozenset("""the a an this that these those my your his her its our their some any each every no
    of in on at per for into from by""".split())
#: A learner's life narrative accepts a name the reviewer gives at least this probability (any, once
#: the learner has named a person of their life by a relation in the session).
_NARRATIVE_MIN = 0.05
_FIRST_PERSON = frozenset("i i'm im me my mine we we're our us".split())
#: Turns at the start of a session where "it's Maria" / "this is Maria" introduce the speaker.
_OPENING_TURNS = 3


@dataclass(slots=True, eq=False)
class _Turn:
    """What :meth:`NameFinder.find` knows and has decided so far about one turn."""

    text: str
    ctx: TurnContext
    toks: list[Tok]
    lows: list[str]
    topic_now: int
    ner_starts: dict[int, tuple[int, int]]
    trace: list | None
    doubts: list | None
    blocked: list[tuple[int, int]] | None
    keeps: list | None
    decided: dict[int, float] = field(default_factory=dict)  # token index -> score
    how: dict[int, str] = field(default_factory=dict)  # token index -> evidence (Span.evidence)
    confirmed: set[int] = field(default_factory=set)  # decided by a direct cue / memory / role
    intro: set[int] = field(default_factory=set)  # self-introductions
    rejected: set[int] = field(default_factory=set)  # tokens the learned reviewer rejected
    pubskip: set[int] = field(default_factory=set)  # tokens of a phrase kept as public (figure, character, place, word)
    public_people: set[int] = field(default_factory=set)  # those kept as a public figure or a character
    story: list[int] = field(default_factory=list)  # kept by story_character, pending the whole turn
    quoted: list[tuple[int, int]] | None = None  # computed lazily
    examples: list[tuple[int, int]] | None = None  # exercise material of a teacher's turn (lazily)
    scripts: list[tuple[int, int]] = field(default_factory=list)  # its scripted dialogues
    quantities: bool | None = None  # computed lazily
    reviews: int = 0

    def decide(self, k: int, score: float, evidence: str, confirmed: bool = False) -> None:
        self.decided[k] = score
        self.how[k] = evidence
        if confirmed:
            self.confirmed.add(k)

    def quoted_ranges(self) -> list[tuple[int, int]]:
        """The turn's quoted passages (computed once)."""
        if self.quoted is None:
            t = self.text
            self.quoted = quoted_ranges(t) if ("'" in t or '"' in t or "\u201c" in t or "\u2018" in t) else []
        return self.quoted

    def keep(self, start: int, end: int, evidence: str) -> None:
        if self.keeps is not None:
            self.keeps.append((start, end, evidence))


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
        if not memory.classroom and (CLASSROOM.search(text) or (ctx.role or "").casefold() in ("multiple students", "students", "class")):
            memory.classroom = True
        toks = tokenize(text, self.lex)
        role_key = (ctx.role or "").strip().casefold()
        answer_from, asked_here = name_question(text, toks, role_key, memory)
        if not toks:
            return []
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
        turn = _Turn(text, ctx, toks, lows, topic_now, ner_starts, trace, doubts, blocked, keeps)
        if answer_from is not None:
            answer = name_answer(toks, answer_from, self.lex)
            for k in answer:
                turn.decide(k, 0.95, "intro", confirmed=True)
                turn.intro.add(k)
            if asked_here and not answer:
                memory.expect_name = role_key or "?"  # "What's your name? Mine is Ms. Lee." — the answer comes next
        for k in range(len(toks)):
            self._review(turn, k, memory)
        spans = self._finish(turn, memory)
        return self._mentions_again(turn, spans, memory) if spans else spans

    def _mentions_again(self, turn: _Turn, spans: list[Span], memory: SessionMemory) -> list[Span]:
        """A person this turn confirmed is masked at every mention of the turn: one unmasked mention
        would stand right beside its surrogate ("my cousin June is coming too. June is great");
        a lowercase mention not after an article or preposition ("hi im ash, ash ketchum lol")."""
        text, toks = turn.text, turn.toks
        words = set()
        for sp in spans:
            for w in re.findall(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*", text[sp.start : sp.end]):
                if len(w) >= 2 and memory.person_strength(w) >= 1.0:
                    words.add(w.casefold())
        if not words:
            return spans
        more = []
        for k, t in enumerate(toks):
            if t.low not in words or t.low in STOP or t.upper and len(t.text) < 3:
                continue
            if any(sp.start < t.end and t.start < sp.end for sp in spans) or k in turn.rejected or k in turn.pubskip:
                continue  # (a mention the reviewer or a keep rule read as something else: "a Rio marker", "to Orlando")
            if turn.keeps and any(a <= t.start and t.end <= b for a, b, _ in turn.keeps):
                continue
            if not t.cap and k >= 1 and turn.lows[k - 1] in _THING_BEFORE:
                continue
            more.append(Span(t.start, t.end, "NAME", self.source, 0.85, "memory"))
        return sorted([*spans, *more], key=lambda s: s.start) if more else spans

    def _review(self, turn: _Turn, k: int, memory: SessionMemory) -> None:
        """Decide token ``k``: 1. what the session knows, 2. direct cues, 3. the rules' score,
        4. public keeps, 5. the keep review and the learned reviewer."""
        toks, text, decided = turn.toks, turn.text, turn.decided
        t = toks[k]
        if len(t.text) < 2 or k in decided or k in turn.pubskip:
            return
        if turn.blocked and any(a <= t.start and t.end <= b for a, b in turn.blocked):
            return
        n = len(toks)
        cls = name_class(t)
        gap_prev = text[toks[k - 1].end : t.start] if k >= 1 else text[: t.start]
        gap_next = text[t.end : toks[k + 1].start] if k + 1 < n else text[t.end :]
        # 1. session memory (confirmed people: any case, possessive stripped)
        strength = memory.person_strength(t.text)
        if t.low in STOP and not (t.low in NAME_STOPS and t.cap and (not t.sent_init or gap_next[:1] == ",")):
            return
        if t.low in GREETINGS and strength < 1.0:
            return  # "Great Job Tesha", "Awesome": the greeting, never the name
        if t.low == "im" and k + 1 < n and gap_next.strip() == "":
            return  # "hi im Jo", "Im kofi": the introduction (I'm), not part of the name
        memory_ok = strength > 0 and (t.cap or cls not in ("wordish", "word") or (
            strength >= 1.0 and not (k >= 1 and turn.lows[k - 1] in _THING_BEFORE)))
        # (a person of the session whose name is also a word, typed in lowercase: "hi im ash" ...
        # "ash again, still stuck"; not "the ash", "in autumn")
        cue = direct_cue(toks, k, text, gap_prev, gap_next, cls, late=memory.turns >= _OPENING_TURNS)
        if cue == "direct" and k >= 1 and turn.lows[k - 1] == "the" and (turn.topic_now or public_talk(memory)):
            cue = ""  # "with the Packers" in talk about sport: a team, not a family
        if not cue and strength < 1.0 and possessed_relation(toks, k):
            return  # "Meine Schwester Anke", "mi Hermana": the relation, not the name
        if not cue and strength < 1.0 and capitalised_by_norm(toks, k):
            return  # "Die Katze schläft", "Pero no sé": the language's capitalisation, not a name
        if self._session_decision(turn, k, memory, cls, cue, strength, memory_ok):
            return
        # 2. direct cues (greetings, vocatives, self-introductions) override the keep review
        if cue in ("intro", "direct"):
            turn.decide(k, 0.95, cue, confirmed=True)
            if not memory.narrative and personal_cue(turn.lows, k, k) \
                    and (turn.ctx.role or "").strip().casefold() in LEARNER_ROLES:
                memory.narrative = True  # the learner talks about the people of their life
            if cue == "intro":
                turn.intro.add(k)
                if t.lower:
                    for j in intro_parts(toks, k, text):  # "my name is tran van minh": every part
                        turn.decide(j, 0.95, cue, confirmed=True)
                        turn.intro.add(j)
            return
        if not cue and t.lower and ((len(t.text) <= 2 and not (k >= 1 and turn.lows[k - 1] in GREETINGS))
                                    or _word_position(turn.lows, k, gap_prev)):
            return  # "jv"; "as a junior", "you are frank", "very earnest": a lowercase name needs a cue ("hi jo")
        if cue == "title" and k >= 1 and toks[k - 1].low in ("coach", "miss") and public_talk(memory):
            cue = ""  # "coach Gruden", "I miss Peyton" in a conversation about sport: not a title
        # 3. weaker evidence: titles, lexicon, memory learnt from lexicon, NER
        score = self._rule_score(turn, k, cls, cue, memory_ok)
        if score <= 0 and (self.model is None or not gate(toks, k, cls, strength)):
            return
        if not cue and not t.cap and split_word(toks, text, k, self.lex):
            return  # "arith matic": the second half of a word typed with a space in it
        turn.reviews += 1
        if turn.reviews > MAX_REVIEWS_PER_TURN:
            # pathological input (thousands of name-like tokens): stop reviewing, fail closed
            if score > 0 or t.cap:
                turn.decide(k, max(score, 0.5), "bounded")
            return
        if score <= 0 and not memory.is_person(t.text) and self._a_word(t, cls):
            return  # no cue, and it is a word (a typo, a plural, school vocabulary)
        # 4. not private: a public figure, a fictional character, a place, a language, an event, a
        #    brand, an example name in quotes; none of it when a relation word says the name is a
        #    person of the speaker's life ("my friend Will Turner")
        if self._public(turn, k, memory):
            return
        # 5. keep review (rules), then the learned reviewer when there is one
        self._keep_review(turn, k, memory, cls, cue, score, strength, gap_prev, gap_next)

    def _session_decision(self, turn: _Turn, k: int, memory: SessionMemory, cls: str, cue: str, strength: float,
                          memory_ok: bool) -> bool:
        """What the session already knows decides token ``k`` (True: decided, kept or skipped): a
        character of the problem text or a typo of one, a person confirmed before, a name masked
        before, an exercise's example name, a closed-class word the session kept."""
        t = turn.toks[k]
        if memory.in_problem(t.text) and strength < 2.0 and cue != "intro":
            if t.cap:
                turn.keep(t.start, t.end, "keep-problem")
            return True  # a character of the session's problem text
        if memory.problem and strength <= 0 and not cue and near_problem(t.low, memory.problem):
            return True  # a typo of one ("Catlin" for "Caitlin"), unless addressed or known
        if memory_ok and strength >= 1.0:
            turn.decide(k, 0.95, "memory", confirmed=True)
            return True
        if strength >= 0.8 and t.cap and not t.upper and cls in NAMEISH and not cue and not memory.is_kept(t.text) \
                and not memory.is_public(t.text) and not turn.topic_now and not public_talk(memory):
            # a name masked earlier in the session is masked wherever it comes back: one unmasked
            # mention would both leak it and link it to its surrogate ("Mateo starts nursery on
            # Monday." ... "Yes! Mateo loves him"); not in talk about public life, where the names
            # that come back are mostly the public figures talked about
            turn.decide(k, 0.85, "memory")
            return True
        # an example name of an exercise ("Read this: Kate's proposal was rejected"), or a turn
        # echoing one; an addressed name or a person known to the session stays a person
        if t.cap and self._example(turn, k, memory, cue):
            return True
        if (cue == "direct" and strength < 1.0 and memory.is_kept(t.text) and classes_of(t.low)
                and not (k >= 1 and turn.lows[k - 1] in GREETINGS)):
            turn.pubskip.add(k)
            turn.keep(t.start, t.end, "keep-word")
            return True  # "Eid." answering "Christmas or Eid?": a holiday, place or title the session kept, not a vocative
        return False

    def _a_word(self, t: Tok, cls: str) -> bool:
        """A token no table knows that is a word, or a rare name typed in lowercase one edit away
        from a very common word ("anwer", "spase")."""
        return ((cls == "unknown" and looks_like_word(t.low, self.lex))
                or (not t.cap and t.info.name_rank > 200 and looks_like_word(t.low, self.lex, common=-10.5)))

    def _label_is_name(self, word: str) -> bool:
        """A speaker label of a scripted dialogue is a name, not a word ("Note:", "Answer:")."""
        info = self.lex.info(word)
        return word.casefold() not in STOP and info.is_name and info.word_margin < 1.0

    def _example(self, turn: _Turn, k: int, memory: SessionMemory, cue: str) -> bool:
        """Keep token ``k`` as an example name: inside a teacher's exercise material (after "Read
        this sentence:", "For example:", a sentence with a blank, a quoted passage, a scripted
        dialogue), or a name the session has only met as an exercise's character, wherever it
        comes back ("Kate's proposal was rejected", "Sarah and Mark meet at a party")."""
        t = turn.toks[k]
        if turn.examples is None:
            turn.examples = self._exercise_ranges(turn, memory)
        if cue == "direct" and not any(a <= t.start and t.end <= b for a, b in turn.scripts):
            return False  # an addressed name is a person, except in a scripted dialogue's lines
        inside = any(a <= t.start and t.end <= b for a, b in turn.examples)
        if not inside and not (t.low in memory.examples and memory.person_strength(t.text) < 0.8):
            return False  # (a name the session has only met as an exercise's character is that character)
        memory.add_kept(t.text)
        memory.examples.add(t.low)
        turn.pubskip.add(k)
        turn.keep(t.start, t.end, "keep-example")
        return True

    def _exercise_ranges(self, turn: _Turn, memory: SessionMemory) -> list[tuple[int, int]]:
        """A teacher's exercise material in this turn (none in a learner's turn): instructions'
        material, quoted passages and scripted dialogues (also kept in ``turn.scripts``)."""
        if (turn.ctx.role or "").strip().casefold() in LEARNER_ROLES:
            return []
        text = turn.text
        ranges = example_ranges(text) + turn.quoted_ranges()
        if ":" in text:
            turn.scripts = script_ranges(text, self._label_is_name)
            ranges += turn.scripts
        return ranges

    def _rule_score(self, turn: _Turn, k: int, cls: str, cue: str, memory_ok: bool) -> float:
        """The rules' confidence without a direct cue (0 = not a candidate for the rules)."""
        t = turn.toks[k]
        ner = k in turn.ner_starts
        if cue == "title":
            return 0.9
        if memory_ok:
            return 0.85
        if t.lower and lower_full_name(turn.toks, k, turn.text):
            return 0.7  # "patricia desrosiers": a first name then a surname, both names only
        if not t.cap or is_calendar(t.text) or (t.upper and (len(t.text) < 4 or cls not in NAMEISH)):
            return 0.0
        if cls in NAMEISH:
            return 0.8
        if cls == "unknown" and ner:
            return 0.7
        if cls == "wordish" and ner and not t.sent_init and t.info.first_rank <= 1000:
            return 0.6
        if cls == "word" and ner and not t.sent_init and t.info.word_margin < -2:
            return 0.55
        return 0.0

    def _public(self, turn: _Turn, k: int, memory: SessionMemory) -> bool:
        """Step 4: keep the candidate (and its phrase) when it is something public."""
        text, toks = turn.text, turn.toks
        pk = public_keep(toks, turn.lows, k, text, memory, turn.topic_now, turn.confirmed, turn.pubskip, turn.ctx,
                         turn.quoted_ranges(), self.lex)
        if pk is None:
            return False
        a, b, ev = pk
        for j in range(a, b + 1):
            turn.pubskip.add(j)
            turn.decided.pop(j, None)
            if ev in ("keep-public", "keep-fiction"):
                turn.public_people.add(j)
        span_text = text[toks[a].start : toks[b].end]
        if ev in _PUBLIC_KEEPS:
            memory.add_public(span_text)
        elif b == a:
            memory.add_kept(span_text)
        turn.keep(toks[a].start, toks[b].end, ev)
        return True

    def _keep_review(self, turn: _Turn, k: int, memory: SessionMemory, cls: str, cue: str, score: float,
                     strength: float, gap_prev: str, gap_next: str) -> None:
        """Step 5: the rules' keep review (story characters, eponyms, places), then the model."""
        toks, text, model = turn.toks, turn.text, self.model
        t = toks[k]
        if turn.quantities is None:
            turn.quantities = has_quantities(text)
        sig = signals(toks, k, text, memory, turn.quantities, gap_next)
        kept = keep_decision(toks, k, memory, sig)
        if model is None:
            if kept:
                memory.add_kept(t.text)
            else:
                turn.decide(k, score, "rules")
            return
        if kept and (sig["famous"] or sig["place"] or sig["famous_full"] or sig["head"] in EPONYM_HEADS):
            memory.add_kept(t.text)  # public figures, places, eponyms: the model does not overrule these
            turn.keep(t.start, t.end, "keep-place" if sig["place"] else "keep-word" if sig["head"] in EPONYM_HEADS
                      and not (sig["famous"] or sig["famous_full"]) else "keep-public")
            return
        sent = sentence(text, t.start, t.end)
        if ((kept or MATHS_Q.search(sent)) and not cue and strength <= 0
                and (turn.ctx.role or "").strip().casefold() not in LEARNER_ROLES
                and story_character(toks, text, k, sig, memory, sent)):
            turn.story.append(k)  # a word-problem character unless someone is addressed in this turn (below)
        if k + 1 < len(toks) and (t.low, toks[k + 1].low) in IDIOMS:
            return
        if cue == "title" and not kept:
            turn.decide(k, score, "title")  # "Mr. Nekrasov": a title is as direct as a greeting
            return
        feats = model_features(toks, k, text, cls, score, strength, sig, kept, memory, turn.ctx, k in turn.ner_starts,
                               gap_prev, gap_next, turn.lows, turn.topic_now)
        if turn.trace is not None:
            turn.trace.append((t.start, t.end, feats))
        thr = model.threshold_for(cls)
        if cls in ("wordish", "word") and t.sent_init and t.cap and not gap_next.strip():
            thr = max(thr, _SENT_INIT_WORD_THRESHOLD)  # "Grace period is over", "Mark the answer"
        p = model.prob(feats)
        if p < thr and (p >= _NARRATIVE_MIN or memory.narrative) and self._life_narrative(turn, k, memory, cls):
            thr = p  # a learner telling of their own life: the people in it are theirs
        if p >= thr:
            turn.decide(k, max(score, 0.8), "model")
        else:
            turn.rejected.add(k)
            if kept:
                memory.add_kept(t.text)
            if turn.doubts is not None and p >= DOUBT_MIN:
                turn.doubts.append((t.start, t.end, p))

    @staticmethod
    def _life_narrative(turn: _Turn, k: int, memory: SessionMemory, cls: str) -> bool:
        """A learner's turn about their own life ("My son. Olga took him to the doctor.", "Yes,
        Ines goes twice a week with Carlos."): a capitalised name (a name in the lexicon, not an
        ordinary word) in a learner's turn that speaks in the first person, or in a session where
        the learner has named a person of their life by a relation ("my daughter Ines"), with no
        word problem (no problem text) and no talk about public life."""
        t = turn.toks[k]
        if not (t.cap and not t.upper and cls in NAMEISH) or classes_of(t.low) or memory.is_kept(t.text):
            return False  # (a language, a place, a public name, a character: not a person of one's life)
        if (turn.ctx.role or "").strip().casefold() not in LEARNER_ROLES:
            return False
        if memory.problem or memory.classroom or turn.topic_now or public_talk(memory):
            return False
        return memory.narrative or any(w in _FIRST_PERSON for w in turn.lows)

    # ------------------------------------------------------------------ the whole turn
    def _finish(self, turn: _Turn, memory: SessionMemory) -> list[Span]:
        """Decisions that need the whole turn, then the spans."""
        toks, text, decided = turn.toks, turn.text, turn.decided
        for k in [k for k in decided if k not in turn.confirmed and is_curricular_head(toks[k].text)
                  and not (k > 0 and (toks[k - 1].low.rstrip(".") in TITLES or toks[k - 1].low in TITLES
                                      or toks[k - 1].low in GREETINGS))]:
            del decided[k]  # "Riemann Sum", "Newton's Second Law": a curricular word, not a surname
        if turn.story and not turn.confirmed:
            self._drop_story_characters(turn, memory)
        if turn.pubskip:
            self._join_public_neighbours(turn, memory)
        talk = public_talk(memory)
        if not talk:
            full_names(toks, text, decided, memory, self.lex, turn.rejected)  # (not in a conversation about public life)
        if not decided:
            return []
        extend_lists(toks, text, decided, memory, self.lex, turn.rejected | turn.pubskip if talk else turn.pubskip)
        spans = merge(toks, text, decided, turn.confirmed, memory, self.source, turn.intro, turn.how)
        keeps = turn.keeps
        if keeps:  # a keep that ended up inside a name found after all ("Ivan King") is no keep
            keeps[:] = [kp for kp in keeps if not any(sp.start < kp[1] and kp[0] < sp.end for sp in spans)]
        return spans

    @staticmethod
    def _drop_story_characters(turn: _Turn, memory: SessionMemory) -> None:
        """Nobody is addressed or known in this turn: the tutor is telling a problem, not talking
        to or about the class ("So -- hey, Aries. So Dawing has 97 pencils" stays a person)."""
        toks, decided = turn.toks, turn.decided
        for k in turn.story:
            decided.pop(k, None)
            memory.add_kept(toks[k].text)
            turn.keep(toks[k].start, toks[k].end, "keep-story")
        story = set(turn.story)
        for k in [k for k in decided if k not in turn.confirmed and coordinated_with(toks, turn.text, k, story)]:
            del decided[k]  # "washed by Lucy and Kevin": the partner of a story character is one too

    @staticmethod
    def _join_public_neighbours(turn: _Turn, memory: SessionMemory) -> None:
        """One decision for a whole name: a part next to a kept public figure or character is kept
        with it ("Kellan" next to a kept "Moore"), and so is a bare name coordinated with one
        ("Drake and Kendrick", "Hamilton or Verstappen"), unless someone addressed, introduced or
        already knew it."""
        toks, text, decided, pubskip = turn.toks, turn.text, turn.decided, turn.pubskip
        n = len(toks)
        for k in sorted(decided):
            if k in turn.confirmed or turn.how.get(k) == "memory":
                continue
            for j in (k - 1, k + 1, k - 2, k + 2):
                if (j in pubskip if abs(j - k) == 1 else j in turn.public_people) and 0 <= j < n:
                    lo, hi = (j, k) if j < k else (k, j)
                    gap = text[toks[lo].end : toks[hi].start]
                    joined = gap == " " if hi - lo == 1 else (toks[lo + 1].low in ("and", "or", "&")
                                                              and not any(c in gap for c in ",.;:\n"))
                    if joined and toks[j].cap == toks[k].cap:
                        del decided[k]
                        pubskip.add(k)
                        memory.add_public(toks[k].text)
                        turn.keep(toks[k].start, toks[k].end, "keep-public")
                        break
