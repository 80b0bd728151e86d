"""Keep what is not private (issue #12): ordinary words, languages / places / events / brands,
public figures, fictional characters, example names, pieces of other things — and never lose the
people of the speaker's life named in personal narrative. Plus one decision per two-token name
(issue #17) and the keeps the finder records for the LLM stage (``Cascade.kept``)."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.cascade import Cascade
from plainsight.middleware.detection.memory import SessionMemory
from tests.support import detected_names
from plainsight.middleware.detection.public import classes_of, personal_cue, topic_cues
from plainsight.middleware.evaluation import DialogueResult, Ent, by_source, summarize


@pytest.fixture(scope="module")
def cascade() -> Cascade:
    return Cascade()


names = detected_names


# -- 1. ordinary words and typos -------------------------------------------------------------------
@pytest.mark.parametrize("text", ["Splendid, see you Friday!", "Brilliant", "Howdy", "Yay", "Sooo", "Gooood",
                                  "Grate job", "Reread the question", "Thnks", "Wellplayed", "Wellplayed!"])
def test_ordinary_words_and_typos_are_kept(cascade, text):
    assert names(cascade, text) == []


# -- 2. languages, nationalities, places, events, brands ---------------------------------------------
@pytest.mark.parametrize("text", [
    "she speaks Portuguese at home", "American English is different", "Spanish grammar is hard",
    "I live near the Thames in London", "We climbed Kilimanjaro", "Happy Halloween!", "During Ramadan we fast",
    "Did you watch the Olympics?", "She won a Grammy", "He got the Nobel", "I play Minecraft every day",
    "ESPN won an Emmy for the yellow line", "Georgia Tech beat Cumberland 222-0",
])
def test_languages_places_events_brands_are_kept(cascade, text):
    assert names(cascade, text) == []


# -- 3. public figures -----------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Messi's last season was great", "lionel messi is the best", "Abraham Lincoln freed the slaves",
    "the King gave a speech", "Steve Jobs and Wozniak started Apple", "Taylor Swift released a new album",
    "I watched Titanic with Leonardo DiCaprio",
])
def test_public_figures_are_kept(cascade, text):
    assert names(cascade, text) == []


def test_public_figure_full_name_in_a_conversation_about_sport_is_one_kept_decision(cascade):
    mem = cascade.new_memory()
    assert names(cascade, "I watch the NFL every season, the quarterbacks are amazing.", memory=mem) == []
    assert names(cascade, "Do you like football too? My team lost again.", role="tutor", memory=mem) == []
    assert names(cascade, "Did you know Kellan Moore is the only lefty quarterback in the league?", memory=mem) == []
    # the surname alone later in the session is the same public figure
    assert names(cascade, "I think Moore is underrated.", role="tutor", memory=mem) == []


def test_a_surname_alone_in_sport_talk_is_kept_but_a_narrated_first_name_is_found(cascade):
    mem = cascade.new_memory()
    names(cascade, "I watch the NFL every season, the quarterbacks are amazing.", memory=mem)
    names(cascade, "Do you like football too? My team lost again.", role="tutor", memory=mem)
    assert names(cascade, "I like to watch coaches like Gruden.", memory=mem) == []
    assert names(cascade, "Mateo starts nursery on Monday, so no games for me.", memory=mem) == ["Mateo"]
    assert names(cascade, "Do you like Tom Brady? He won the Super Bowl again.", role="tutor", memory=mem) == []
    assert names(cascade, "Mateo loves him, and Ines likes swimming.", memory=mem) == ["Mateo", "Ines"]


def test_a_relation_word_makes_a_famous_name_a_private_person(cascade):
    assert names(cascade, "my friend Taylor Swift says hi") == ["Taylor Swift"]


# -- 4. fictional characters -----------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Frodo carries the ring", "Hermione is so clever", "I love Shrek", "Sherlock Holmes is a detective",
    "Macbeth and Banquo meet the witches", "the Montagues and the Capulets", "I love Atticus Finch in that book",
])
def test_fictional_characters_are_kept(cascade, text):
    assert names(cascade, text) == []


# -- 5. example names in language teaching ---------------------------------------------------------
def test_example_names_in_quotes_in_a_teachers_turn_are_kept(cascade):
    assert names(cascade, "'Sam and I went home' or 'me and Sam'?", role="tutor") == []
    assert names(cascade, 'Which is right: "Kate and me" or "Kate and I"?', role="teacher") == []


# -- 6. pieces of other things ---------------------------------------------------------------------
def test_pieces_of_other_things(cascade):
    assert names(cascade, "hey im kofi") == ["kofi"]
    assert names(cascade, "my son goes to Parker Elementary School") == []  # a surname inside a school's name
    assert names(cascade, "She works at Kowalski Associates now") == []
    assert names(cascade, "look at https://example.com/people/maria-lopez/page") == []


# -- must not lose: people of the learner's life in personal narrative -----------------------------
@pytest.mark.parametrize("text,expected", [
    ("Mateo starts nursery on Monday", ["Mateo"]),
    ("we asked Priya's teacher", ["Priya"]),
    ("my colleague Olu is off this week", ["Olu"]),
    ("does Ines like swimming?", ["Ines"]),
    ("Great job Maria!", ["Maria"]),
])
def test_narrative_people_are_found(cascade, text, expected):
    assert names(cascade, text) == expected


def test_narrative_people_are_found_in_a_conversation_about_films(cascade):
    mem = cascade.new_memory()
    names(cascade, "We watched a movie with the actors from that series, the film was great.", memory=mem)
    names(cascade, "Which actor did you like in the film?", role="tutor", memory=mem)
    assert names(cascade, "My brother Tomasz liked the actor too", memory=mem) == ["Tomasz"]


# -- issue #17: a two-token name is one decision -----------------------------------------------------
def test_relation_then_full_name_is_one_span(cascade):
    assert names(cascade, "My friend Will Turner says hi") == ["Will Turner"]


def test_relation_then_word_name_is_found(cascade):
    assert names(cascade, "my dad Bill and my sister Hope say hi") == ["Bill", "Hope"]


def test_his_name_is_is_not_a_self_introduction(cascade):
    mem = cascade.new_memory()
    names(cascade, "His name is Jorvik", memory=mem)
    assert mem.person_strength("jorvik") < 2.0


# -- keeps for the LLM stage -----------------------------------------------------------------------
def test_kept_returns_the_turns_keeps_with_their_evidence(cascade):
    mem = cascade.new_memory()
    text = "Sherlock Holmes lives in London and speaks French"
    ctx = TurnContext(role="student", session_id="s")
    assert cascade.detect(text, ctx, mem) == [] or all(s.label != "NAME" for s in cascade.detect(text, ctx, cascade.new_memory()))
    kept = cascade.kept(text, ctx, mem)
    got = {text[s.start : s.end]: s.evidence for s in kept}
    assert got["Sherlock Holmes"] == "keep-fiction"
    assert got["London"] == "keep-place"
    assert got["French"] == "keep-word"
    assert all(s.source == "names-keep" and s.label == "NAME" for s in kept)
    cascade.detect("ok thanks", ctx, mem)  # the next turn: the keeps belong to it only
    assert cascade.kept("ok thanks", ctx, mem) == []


# -- the closed classes and cues -------------------------------------------------------------------
def test_public_tables_and_cues():
    assert "people" in classes_of("abraham lincoln")
    assert "places" in classes_of("london") and "languages" in classes_of("portuguese")
    assert "fiction" in classes_of("atticus finch") and "things" in classes_of("halloween")
    assert topic_cues(["the", "quarterback", "won", "the", "season"]) == 2
    assert personal_cue(["my", "colleague", "olu"], 2, 2) and not personal_cue(["i", "like", "olu"], 2, 2)


# -- eval: false names per 100 turns, per source ---------------------------------------------------
def test_eval_reports_false_names_per_100_turns_and_by_source():
    a = DialogueResult("a", {}, [Ent(0, 0, 4, "NAME")], [Ent(0, 0, 4, "NAME"), Ent(1, 0, 5, "NAME")], turns=4, source="chat")
    b = DialogueResult("b", {}, [], [Ent(0, 0, 5, "NAME")], turns=2, empty_turns=1, source="open")
    s = summarize([a, b])
    assert s["name_fp_per_100_turns"] == pytest.approx(100 * 2 / 5, abs=1e-3)
    src = by_source([a, b])
    assert src["chat"]["name_fp_per_100_turns"] == 25.0 and src["chat"]["recall"] == 1.0
    assert src["open"]["fp"] == 1 and src["open"]["turns"] == 1


# -- end to end: what the tutor reads ----------------------------------------------------------------
def test_pipeline_replaces_a_relation_full_name_whole_and_keeps_a_fictional_one():
    from plainsight.surrogate.pipeline import build_pipeline
    from plainsight.middleware.schemas import InputTurn

    p = build_pipeline()
    r = p.process_sync(InputTurn(session_id="h12", turn_id=0, role="student",
                                 text="My friend Will Turner says hi", sent_at=0.0))
    out = r.deid.text
    assert "Will" not in out and "Turner" not in out  # a whole surrogate full name, not "Will Turcan"
    names_out = [out[e.start:e.end] for e in r.deid.entities if e.label == "NAME"]
    assert len(names_out) == 1 and len(names_out[0].split()) == 2
    r = p.process_sync(InputTurn(session_id="h12", turn_id=1, role="student",
                                 text="my dad Bill and my sister Hope say hi", sent_at=1.0))
    assert "Bill" not in r.deid.text and "Hope" not in r.deid.text
    r = p.process_sync(InputTurn(session_id="h12b", turn_id=0, role="student",
                                 text="I love Atticus Finch in that book", sent_at=0.0))
    assert r.deid.text == "I love Atticus Finch in that book"


# -- second round (H12b): evidence in the name's own sentence ----------------------------------------
def _chat(cascade, *turns: str) -> SessionMemory:
    """A session with some small talk before the turns under test (never about public life)."""
    mem = cascade.new_memory()
    for i, text in enumerate(turns):
        names(cascade, text, role="tutor" if i % 2 else "student", memory=mem)
    return mem


@pytest.mark.parametrize("text", [
    "Their new QB Dario Quintero looks great.",        # a public role right before a full name
    "I read that senator Halvorsen wants a new bridge.",  # ... before a surname
    "I think Marek Dvoracek scored twice in the league last night.",  # a cue word in the same sentence
])
def test_public_role_or_cue_in_the_same_sentence_keeps_a_full_name_or_surname(cascade, text):
    # four turns of small talk first: one turn with cue words is not yet a conversation about public life
    mem = _chat(cascade, "Hi, how are you doing today?", "Good thanks, and you?", "Fine. It is cold here.", "Same here!")
    assert names(cascade, text, memory=mem) == []
    kept = cascade.kept(text, TurnContext(role="student", session_id="s"), mem)
    assert kept and all(s.evidence == "keep-public" for s in kept)


@pytest.mark.parametrize("text", ["Have you ever heard of Tobias Wendler?", "Do you know who Tobias Wendler is?"])
def test_a_question_about_knowing_of_someone_keeps_a_full_name_even_first(cascade, text):
    assert names(cascade, text) == []


@pytest.mark.parametrize("text,expected", [
    ("my coach Dario Quintero says hi", ["Dario Quintero"]),            # a possessive: a person of one's life
    ("Mr. Okafor coached our football team this season.", ["Okafor"]),  # a title: a teacher, not a star
])
def test_sentence_evidence_never_beats_a_possessive_or_a_title(cascade, text, expected):
    mem = _chat(cascade, "Hi, how are you doing today?", "Good thanks, and you?")
    assert names(cascade, text, memory=mem) == expected


def test_a_first_name_alone_with_a_cue_in_the_sentence_is_still_a_person(cascade):
    mem = _chat(cascade, "I watch the NFL every season, the quarterbacks are amazing.", "Do you like football too?")
    assert names(cascade, "Mateo starts nursery on Monday, so no football for me.", memory=mem) == ["Mateo"]
    assert names(cascade, "does Ines like the football season?", memory=mem) == ["Ines"]


def test_a_first_message_alone_is_not_read_as_public_life_talk(cascade):
    # one message about a song may name its private author: privacy first without a conversation
    assert names(cascade, "Jana Novakova wrote the lyrics of our school song.") == ["Jana Novakova"]


def test_prime_is_no_public_life_cue():
    assert topic_cues(["the", "prime", "factorization", "of", "twelve"]) == 0
    assert topic_cues(["the", "prime", "minister", "spoke"]) == 1


def test_a_public_role_before_a_first_name_and_a_lowercase_surname_in_sport_talk(cascade):
    mem = _chat(cascade, "I watch the NFL every season, the quarterbacks are amazing.", "Do you like football too?")
    assert names(cascade, "I don't like the Quarterback Cam's attitude.", memory=mem) == []
    assert names(cascade, "Did you know Aaron hubbard took so many tests in school?", memory=mem) == []


def test_a_cue_anywhere_in_a_chat_turn_and_a_word_surname_or_middle_initial(cascade):
    mem = _chat(cascade, "Hi, how are you doing today?", "Good thanks, and you?")
    assert names(cascade, "Are you a basketball fan? Marco Fortune was amazing last night.", memory=mem) == []
    assert names(cascade, "Are you a basketball fan? I liked Dario T. Brannigan a lot.", memory=mem) == []
    # ... but never in a first message, and a first name alone stays a person
    assert names(cascade, "Are you a basketball fan? Marco Fortune was amazing last night.") == ["Marco Fortune"]
    assert names(cascade, "Are you a basketball fan? Tomasz was amazing at our game last night.", memory=mem) == ["Tomasz"]


@pytest.mark.parametrize("text", [
    "We cheered for the Ohio Buckeyes all night.",   # a team after its place
    "Oh thank goodness, it stopped raining.",        # a lowercase ordinary word, no cue
    "That song brought me such joy yesterday.",
    "My favourite cartoon film was Toy Patrol.",     # a capitalised common word, then a title's word
])
def test_teams_titles_and_lowercase_words_are_kept(cascade, text):
    assert names(cascade, text) == []


@pytest.mark.parametrize("text,expected", [
    ("I Went To The Park With Mateo Yesterday", ["Mateo"]),  # Title Case typing: still a person
    ("hi joy, ready for maths?", ["joy"]),                                  # a greeting decides first
])
def test_word_rules_do_not_hide_addressed_or_title_case_people(cascade, text, expected):
    assert names(cascade, text) == expected


def test_thanks_then_a_lowercase_word_name_is_still_addressed(cascade):
    assert names(cascade, "thanks joy, see you tomorrow", role="tutor") == ["joy"]
