"""The keep review of people talked about: is a name a character of a word problem or a story
(a third-person actor with a problem verb, quantities, no I/you), a curricular eponym, a place or
a public figure — or a person of the chat? Its signals are also features of the learned reviewer."""

from __future__ import annotations

import re

from ..keep import FAMOUS_FULL, has_quantities, is_curricular_head, is_famous, is_place, narrative_role
from ..memory import SessionMemory
from .context import (
    FAMILY,
    HOW_MANY,
    HYPOTHETICAL,
    LETS,
    MATHS_Q,
    PERSONAL,
    PERSONAL_1_2,
    PERSONAL_INFO,
    SPEECH_ING_NEXT,
    SPEECH_NEXT,
    STORY,
    THIRD,
    sentence,
)
from .tokens import TITLES, Tok

#: Curricular heads that make "<Name>('s) <head>" an eponym even when a model sees a person.
EPONYM_HEADS = frozenset("""law laws theorem theorems sum sums principle constant conjecture equation equations formula
    identity sequence series paradox lemma postulate hypothesis integral transform inequality triangle distribution sieve
    spiral notation algorithm rule rules method's scale cycle effect""".split())
#: Two-word expressions whose first word is a name in some country but never here ("Bless you").
IDIOMS = frozenset({("bless", "you"), ("rock", "paper"), ("thank", "god"), ("dear", "god"), ("oh", "god")})

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
_PUNCT = re.compile(r"[,.;:!?]")


def signals(toks: list[Tok], k: int, text: str, memory: SessionMemory, quantities: bool, gap_next: str) -> dict:
    """Evidence for the keep review (and features for the model): is the candidate a public
    figure, a place, part of a curricular term, a third-person actor of a word problem, ...?"""
    t = toks[k]
    famous_full = k + 1 < len(toks) and f"{t.low} {toks[k + 1].low}" in FAMOUS_FULL
    curricular = False
    head = ""
    for j in range(k + 1, min(len(toks), k + 4)):
        if is_curricular_head(toks[j].text):
            curricular = not _PUNCT.search(text[t.end : toks[j].start])
            head = toks[j].low if curricular else ""
            break
    sent = sentence(text, t.start, t.end)
    prev_words = []
    for j in range(k - 1, max(-1, k - 4), -1):
        if _PUNCT.search(text[toks[j].end : toks[j + 1].start]) and not (toks[j].low in TITLES):
            break
        if toks[j].low in TITLES:
            continue
        prev_words.insert(0, toks[j].low)
        if len(prev_words) == 2:
            break
    nxt: list[str] = []
    j = k + 1
    if j < len(toks) and not _PUNCT.search(gap_next):
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
        "family": bool(prev_words and prev_words[-1] in FAMILY or (len(prev_words) >= 2 and prev_words[-2] in ("my", "your", "our"))),
        "pinfo": bool(PERSONAL_INFO.search(sent)),
        "verb": verb,
        "verb0": narrative_role([], nxt),
        "qty": has_quantities(sent),
        "tqty": quantities,
        "storyw": bool(STORY.search(sent)),
        "p12": bool(PERSONAL_1_2.search(sent)),
        "pers": bool(PERSONAL.search(sent)),
        "third": bool(THIRD.search(sent)),
        "howmany": bool(HOW_MANY.search(sent)),
        "copula": bool(nxt) and nxt[0] in ("is", "was", "are", "were", "and"),
        "speech": bool(nxt) and (nxt[0] in SPEECH_NEXT or (nxt[0] in ("is", "was") and len(nxt) > 1 and nxt[1] in SPEECH_ING_NEXT)),
        "hyp": bool(HYPOTHETICAL.match(sent.lstrip(" \t\"'\u201c([*-"))),
        "head": head,
    }


def keep_decision(toks: list[Tok], k: int, memory: SessionMemory, sig: dict) -> bool:
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


def story_character(toks: list, text: str, k: int, sig: dict, memory: SessionMemory, sent: str) -> bool:
    """Strong evidence that a name the keep review kept is a character of a word problem, strong
    enough that the learned reviewer does not overrule it: one-to-one tutoring (not a classroom,
    where classmates are talked about), no I/you/we/let's in the sentence, the name is the subject
    of a word-problem verb ("Ron has red pens", "Mia and Daquan have a stand", "Tony samples") or
    the agent of a passive ("washed by Lucy"), and the turn poses maths ("$12", "how big", "the
    problem") or speaks of the actor as he/she, or the session already kept this name as a
    character. Direct address ("Bye Sofia") and known people never reach this point, and the
    caller drops the rule for a turn that addresses anyone."""
    n = len(toks)
    passive = (k >= 2 and toks[k - 1].low == "by" and toks[k - 2].low.endswith("ed")
               and text[toks[k - 2].end : toks[k].start].strip() == "by")
    # "We need to subtract the windows washed by Lucy": the agent of a problem verb in a sentence
    # that does maths is a character even when the tutor says "we"
    maths_agent = passive and toks[k - 2].low in _PROBLEM_VERBS and bool(MATHS_Q.search(sent))
    if memory.classroom or memory.addressed() >= 2 or sig["family"] or sig["pinfo"] or sig["speech"]:
        return False
    if (sig["pers"] or LETS.search(sent)) and not maths_agent:
        return False
    j = k + 1
    if j + 1 < n and toks[j].low == "and" and toks[j + 1].cap:
        j += 2
    subject = False
    if j < n and not re.search(r"[,.;:!?\n]", text[toks[j - 1].end : toks[j].start]):
        w1 = toks[j].low
        w2 = toks[j + 1].low if j + 1 < n else ""
        if w1 in _PROBLEM_VERBS:
            subject = not (w1 in ("has", "have", "had") and (w2 in _PARTICIPLE_IRREGULAR or (w2.endswith("ed") and len(w2) > 4)))
        elif w1 in ("is", "was", "are", "were") and _progressive_of_problem_verb(w2):
            subject = True  # "Heloise is painting a brick"
    if not (subject or passive):
        return False
    if sig["kept_mem"]:
        return True
    return bool(sig["qty"] or sig["tqty"] or sig["storyw"] or sig["hyp"] or sig["third"] or sig["howmany"]
                or MATHS_Q.search(sent))


def _progressive_of_problem_verb(w: str) -> bool:
    """"painting", "baking", "running", "washing": the -ing form of a word-problem verb."""
    if not w.endswith("ing") or len(w) < 6:
        return False
    stem = w[:-3]
    # paint-ing -> paints, wash-ing -> washes, bak-ing -> bakes, runn-ing -> runs
    return any(f in _PROBLEM_VERBS for f in (stem + "s", stem + "es", stem + "e" + "s", stem[:-1] + "s"))


def coordinated_with(toks: list, text: str, k: int, kept: set[int]) -> bool:
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


def near_problem(low: str, problem: set[str]) -> bool:
    """A typo of a character of the session's problem text ("Catlin" for "Caitlin")."""
    return len(low) >= 5 and any(len(p) >= 5 and p[0] == low[0] and _one_edit(low, p) for p in problem)
