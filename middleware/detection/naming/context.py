"""The sentence and the session around a token: pronouns, personal data, quantities wording,
classroom talk, quoted passages, and whether the session is a conversation about public life."""

from __future__ import annotations

import re

from ..memory import SessionMemory

PERSONAL = re.compile(r"\b(?:I|you|we|me|us|my|your|our|I'm|you're|we're|I’m|you’re|we’re)\b", re.IGNORECASE)
PERSONAL_1_2 = re.compile(r"\b(?:I|you|me|my|your|I'm|you're|I’m|you’re)\b", re.IGNORECASE)
#: Words after a name that make it a vocative ("X, can you ...").
ADDRESSING = frozenset("can could would will please you your what how why do did are is have tell come listen look i".split())
#: A sentence about someone's personal data is about a real person, never a word-problem character.
PERSONAL_INFO = re.compile(r"\b(?:address|phone|e-?mail|account|password|birthday|born|lives|lived|married|wife|husband|"
                           r"passport|license|licence|salary|bank)\b", re.IGNORECASE)
THIRD = re.compile(r"\b(?:he|she|his|her|him|hers|himself|herself)\b", re.IGNORECASE)
HOW_MANY = re.compile(r"\bhow (?:many|much|long|far|old|tall)\b", re.IGNORECASE)
#: More maths-question wording (only for the story-character rule, not a model feature).
MATHS_Q = re.compile(r"\b(?:how (?:big|large|wide|heavy|fast|high|deep)|subtract|multiply|divide|total|area|perimeter|volume)\b",
                     re.IGNORECASE)
CLASSROOM = re.compile(
    r"\b(?:you guys|everyone|everybody|boys and girls|raise your hands?|all of you|y'all|you all|(?<!his )(?<!her )(?<!their )class|table \w+|row \w+|"
    r"partners?|groups?|line up|your seats?|eyes on me)\b", re.IGNORECASE)
STORY = re.compile(r"\b(?:question|problem|story)\b", re.IGNORECASE)
FAMILY = frozenset("mom mum mother dad father sister brother aunt uncle cousin grandma grandpa grandmother grandfather friend friends son daughter wife husband teacher tutor neighbor neighbour classmate".split())
PRONOUN_12 = frozenset("i me you we us my your".split())
PREPOSITIONS = frozenset("with to for from at by of on about like than after before behind next between and or".split())
HYPOTHETICAL = re.compile(r"(?:if|suppose|imagine|say|let's say|let’s say|what if)\b", re.IGNORECASE)
SPEECH_NEXT = frozenset("said says saying asked asks thinks thought knows knew told tells explained explains means meant "
                        "wrote did got noticed agrees agreed disagrees answered found figured showed shared".split())
SPEECH_ING_NEXT = frozenset("saying telling asking thinking explaining showing talking sharing doing trying going working".split())
LETS = re.compile(r"\blet(?:'|’)?s\b|\blet us\b", re.IGNORECASE)
#: Roles whose turns the story-character rule leaves to the reviewer: a student talking about
#: "Kevin has 2 dogs" is more often a real person than a problem the student poses.
LEARNER_ROLES = frozenset({"student", "students", "multiple students", "learner", "user", "human", "class"})
#: A sentence break between two tokens (for a token's own sentence counted in tokens).
SENT_BREAK = re.compile(r"[.!?;]\s|\n|[!?]")

_ABBREV_BEFORE = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|vs|etc)|(?<![\w.])[A-Z])$")
_SENT_SPLIT = re.compile(r"[.?!\n]")

#: A sentence is looked for at most this far on each side of a token: real sentences are shorter,
#: and unpunctuated input (hostile or pasted) must not make every token scan the whole text.
_SENTENCE_WINDOW = 400


def sentence(text: str, start: int, end: int) -> str:
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


_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,300})[\"\u201d]|(?:(?<=^)|(?<=[\s(\[:,]))['\u2018]([^'\u2018\u2019\n]{2,300}?)['\u2019](?=[\s.,;:!?)\]]|$)")


def quoted_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of quoted passages ("...", '...', curly quotes) of a turn."""
    out = []
    for m in _QUOTED.finditer(text):
        g = 1 if m.group(1) is not None else 2
        out.append((m.start(g), m.end(g)))
    return out


#: Words of an exercise instruction before a colon ("Read this sentence:", "For example:",
#: "Repeat after me:", "Fill in the gap:", "Now you:", "Translate:").
_EXERCISE_WORDS = frozenset("""example examples e.g eg sentence sentences read repeat translate complete correct fill rewrite
    change transform make turn now try practise practice next say write listen exercise exercises phrase phrases
    passive active question questions dialogue dialog text passage model pattern""".split())
_EXERCISE_WORD = re.compile(r"[^\W\d_]+(?:\.[^\W\d_]+)*")
_BLANK = re.compile(r"_{2,}")
#: Colons and blanks looked at per turn, and how far around each (a hostile turn of 16,000 colons
#: must not cost more than an ordinary one).
_MAX_MARKS = 32
_LEAD_WINDOW = 160
#: "Sarah: ..." at the start of a line or a sentence: a speaker label of a scripted dialogue.
_SPEAKER_LABEL = re.compile(r"(?:^|(?<=[.!?\n])\s*)([A-Z][^\W\d_]{1,20}):\s")


def script_ranges(text: str, is_name) -> list[tuple[int, int]]:
    """A scripted dialogue in a teacher's turn: at least two different speaker labels that are
    names (``is_name(label)``), "Sarah: Hi, I'm Sarah. Mark: Nice to meet you, Sarah!" — from the
    first label to the end of the turn (or a blank line). "Note: ... Reminder: ..." is no script."""
    labels = [m for m in _SPEAKER_LABEL.finditer(text) if is_name(m.group(1))]
    if len({m.group(1).casefold() for m in labels}) < 2:
        return []
    end = text.find("\n\n", labels[-1].end())
    return [(labels[0].start(1), len(text) if end < 0 else end)]


def example_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of a teacher's exercise material in a turn: what follows an instruction
    ending in a colon, to the end of its line ("Read this sentence: Kate's proposal was rejected."
    — a short instruction, at most eight words, naming an exercise; at least three words after it),
    and a sentence with a blank to fill ("Peter ___ (go) to school."). Quoted passages are
    :func:`quoted_ranges`. Bounded work on any input: at most ``_MAX_MARKS`` colons and blanks are
    looked at, each within a window of its own."""
    out: list[tuple[int, int]] = []
    start = 0
    for _ in range(_MAX_MARKS):
        c = text.find(":", start)
        if c < 0:
            break
        start = c + 1
        lo = max(0, c - _LEAD_WINDOW)
        lead_from = max(text.rfind(x, lo, c) for x in ".!?\n")
        lead = _EXERCISE_WORD.findall(text[max(lo, lead_from + 1) : c].lower())
        if not lead or len(lead) > 8 or not any(w.rstrip(".") in _EXERCISE_WORDS for w in lead):
            continue
        end = text.find("\n", c)
        end = len(text) if end < 0 else end
        if len(_EXERCISE_WORD.findall(text[c + 1 : min(end, c + 1 + _LEAD_WINDOW)])) >= 3:
            out.append((c + 1, end))
    for i, m in enumerate(_BLANK.finditer(text)):
        if i >= _MAX_MARKS:
            break
        if not any(a <= m.start() < b for a, b in out):
            sent = sentence(text, m.start(), m.end())
            a = text.rfind(sent, max(0, m.start() - len(sent)), m.end())
            out.append((a, a + len(sent)))
    return out


def public_talk(memory: SessionMemory) -> bool:
    """Is the session a conversation about public life (sport, films, books, politics)? Cue words
    in at least two turns, or in one turn of a session already two turns long (this one included),
    in at least a quarter of its turns, and not a classroom (whose own pupils are talked about)."""
    return (memory.topic >= 2 or (memory.topic >= 1 and memory.turns >= 1)) \
        and memory.topic * 4 >= memory.turns + 1 and (not memory.classroom or memory.topic * 2 >= memory.turns + 1)
