"""Unit tests of answer parsing and alignment (no server)."""

from __future__ import annotations

import pytest

from plainsight.middleware.llm.align import (
    AnswerError,
    align_marked,
    contains_markers,
    find_all,
    locate_json,
    parse_json_entities,
    parse_verdicts,
)
from plainsight.benchmarks.llm_simulator import DEFAULT_MARKERS as M

ORIG = "hi im Jake, my sister  Ana really said u can help.\nemail me at jake.t@mail.com or call 555-201-7788"


def spans_text(orig, al):
    return [(orig[f.start : f.end], f.label) for f in al.spans]


def test_verbatim_echo():
    ans = "hi im @@@Jake###, my sister  @@@Ana### really said u can help.\nemail me at QQQjake.t@mail.com^^^ or call %%%555-201-7788~~~"
    al = align_marked(ORIG, ans, M)
    assert spans_text(ORIG, al) == [("Jake", "NAME"), ("Ana", "NAME"), ("jake.t@mail.com", "EMAIL"), ("555-201-7788", "PHONE")]
    assert al.coverage == 1.0 and al.unreviewed == [] and al.by_search == 0


def test_altered_echo_aligns_to_original_positions():
    # whitespace collapsed, a word dropped, words added, a preface, curly quote, case change
    ans = "Sure, here it is: Hi I'm @@@Jake###, my sister @@@Ana### said you can help. email me at QQQjake.t@mail.com^^^ or call %%%555-201-7788~~~"
    al = align_marked(ORIG, ans, M, min_coverage=0.7)
    assert spans_text(ORIG, al) == [("Jake", "NAME"), ("Ana", "NAME"), ("jake.t@mail.com", "EMAIL"), ("555-201-7788", "PHONE")]
    assert al.coverage < 1.0
    assert any(ORIG[s:e] == "really" for s, e in al.unreviewed)


def test_entity_placed_by_search_when_its_neighbourhood_was_rewritten():
    orig = "Ask Ana about it"
    ans = "Please ask @@@Ana### about it"  # "Ask" → "Please ask": Ana's own token is still aligned
    al = align_marked(orig, ans, M, min_coverage=0.5)
    assert spans_text(orig, al) == [("Ana", "NAME")]


def test_entity_text_changed_by_model_is_a_failure():
    orig = "my friend Jhon is here"
    with pytest.raises(AnswerError) as e:
        align_marked(orig, "my friend @@@John### is here", M)
    assert e.value.reason == "entity_not_found"


def test_same_name_twice_only_marked_once_positions_exact():
    orig = "Ana met Ana"
    al = align_marked(orig, "Ana met @@@Ana###", M)
    assert [(f.start, f.end) for f in al.spans] == [(8, 11)]


@pytest.mark.parametrize(
    "answer,reason",
    [
        ("hi @@@Jake, bye", "unclosed_marker"),
        ("hi Jake### bye", "stray_marker"),
        ("hi @@@Ja@@@ke### bye", "nested_marker"),
        ("completely unrelated words from somewhere else entirely", "unaligned"),
        ("", "unaligned"),
    ],
)
def test_malformed(answer, reason):
    with pytest.raises(AnswerError) as e:
        align_marked("hi Jake, bye for now my friend", answer, M)
    assert e.value.reason == reason
    assert "Jake" not in str(e.value)  # no text in errors


def test_marker_inside_token_keeps_offsets():
    orig = "Anas book"
    al = align_marked(orig, "@@@Ana###s book", M)
    assert spans_text(orig, al) == [("Ana", "NAME")]


def test_contains_markers():
    assert contains_markers("### Heading", M)
    assert contains_markers("costs $$$", M)
    assert not contains_markers("what??? 5$ only", M)


def test_find_all_whole_words():
    assert find_all("Al likes Algebra, al", "Al") == [(0, 2)]
    assert find_all("AL likes algebra", "al") == [(0, 2)]
    assert find_all("Mary  Ann came", "Mary Ann") == [(0, 9)]


def test_json_parse_and_locate():
    ents = parse_json_entities('{"entities": [{"text": "ana", "label": "NAME"}, {"text": "x@y.org", "label": "EMAIL"}, {"text": "Paris", "label": "LOCATION"}]}', {"NAME", "EMAIL"})
    assert ents == [("ana", "NAME"), ("x@y.org", "EMAIL")]
    text = "Ana wrote to x@y.org, thanks Ana"
    found = locate_json(text, ents)
    assert [(text[f.start : f.end], f.label) for f in found] == [("Ana", "NAME"), ("x@y.org", "EMAIL"), ("Ana", "NAME")]


def test_json_entity_only_in_context_is_ignored_but_unknown_fails():
    assert locate_json("hello there", [("Lena", "NAME")], context="teacher: Hi Lena") == []
    with pytest.raises(AnswerError):
        locate_json("hello there", [("Lena", "NAME")])
    assert locate_json("hi [NAME_1]", [("[NAME_1]", "NAME")]) == []


@pytest.mark.parametrize("answer", ["not json", '{"people": 3}', '{"entities": [{"text": 1}]}', '[{"text": "a"}]'])
def test_json_malformed(answer):
    with pytest.raises(AnswerError):
        parse_json_entities(answer, {"NAME"})


def test_verdicts():
    assert parse_verdicts("1: T\n2: F\n3: true\n", 3) == {1: True, 2: False, 3: True}
    assert parse_verdicts("[1] = F", 2) == {1: False}
    assert parse_verdicts("F", 1) == {1: False}
    assert parse_verdicts("7: T", 2) == {}


# ---------------------------------------------------------------- prompts and settings


def test_prompts_override_and_label_subset(tmp_path):
    from plainsight.middleware.llm.prompts import Prompts

    (tmp_path / "prompts.yaml").write_text("marking:\n  system: 'Mark {markers} only.'\n", encoding="utf-8")
    p = Prompts.load(str(tmp_path), labels=["NAME", "EMAIL"])
    msgs = p.marking("hi Ana", "Ana Lopez", [("tutor", "hello [NAME_1]")])
    assert msgs[0]["content"].startswith("Mark - @@@") and "[[[" not in msgs[0]["content"]
    # few-shot answers keep only the markers of configured labels
    assert all("[[[" not in m["content"] and "&&&" not in m["content"] for m in msgs if m["role"] == "assistant")
    assert "speaker: participant" in msgs[-1]["content"]  # an unknown role may be a name: never sent
    assert "tutor: hello [NAME_1]" in msgs[-1]["content"]
    assert p.json_schema()["json_schema"]["schema"]["properties"]["entities"]["items"]["properties"]["label"]["enum"] == ["NAME", "EMAIL"]


def test_settings_enablement_and_key(monkeypatch):
    from plainsight.middleware.config import ConfigError, LLMSettings, Settings
    from plainsight.middleware.llm import LLMStage

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert not Settings().llm.is_enabled
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert not Settings().llm.is_enabled  # a key alone never turns the stage on
    monkeypatch.setenv("PLAINSIGHT_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    assert Settings().llm.is_enabled
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("PLAINSIGHT_LLM__BASE_URL")
    with pytest.raises(ConfigError):
        LLMStage.from_settings(LLMSettings(model="gpt-4o-mini"))  # OpenAI API without a key
    assert "sk-" not in repr(LLMSettings(api_key="sk-secret"))


def test_http_libraries_never_log_prompts_at_debug():
    import logging

    from plainsight.middleware.config import LLMSettings
    from plainsight.middleware.llm import LLMStage

    logging.getLogger("openai").setLevel(logging.DEBUG)
    LLMStage(LLMSettings(base_url="http://127.0.0.1:9/v1"))
    assert logging.getLogger("openai").level == logging.WARNING
    assert logging.getLogger("httpx2").level >= logging.WARNING
