"""Names in a non-Latin script introduced in a self-introduction (issue #17): "我叫王伟",
"меня зовут Дима" are names, found by the introduction phrase of the language."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection import script_names
from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.cascade import Cascade
from plainsight.middleware.detection.memory import SessionMemory


def names(text: str, memory: SessionMemory | None = None) -> list[str]:
    return [text[s.start : s.end] for s in script_names.find(text, memory)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("我叫王伟", ["王伟"]),
        ("我叫王伟，今年十岁", ["王伟"]),
        ("你好！我的名字是李小明", ["李小明"]),
        ("меня зовут Дима", ["Дима"]),
        ("Привет! Меня зовут Дима Иванов, мне 12 лет", ["Дима Иванов"]),
        ("мене звати Оксана", ["Оксана"]),
        ("私は田中です", ["田中"]),
        ("제 이름은 김민수입니다", ["김민수"]),
        ("اسمي أحمد", ["أحمد"]),
        ("मेरा नाम राहुल है", ["राहुल"]),
        ("שמי דנה", ["דנה"]),
        ("με λένε Νίκος", ["Νίκος"]),
        ("hi my name is 李明, nice to meet you", ["李明"]),
    ],
)
def test_introduced_names_in_other_scripts(text, expected):
    assert names(text) == expected


@pytest.mark.parametrize("text", ["我是学生", "это задача про Пифагора", "3x + 5 = 11", "我叫什么", "hello there"])
def test_no_introduction_no_name(text):
    assert names(text) == []


def test_later_mentions_through_the_cascade():
    c = Cascade()
    for turns in (["我叫王伟", "王伟今天很累"], ["меня зовут Дима", "Дима, смотри сюда"]):
        mem = c.new_memory()
        found = []
        for t in turns:
            found.append([t[s.start : s.end] for s in c.detect(t, TurnContext(role="student"), mem) if s.label == "NAME"])
        assert found[0] == [turns[0][-2:]] if turns[0].startswith("我") else found[0] == ["Дима"]
        assert found[1] and found[1][0] in ("王伟", "Дима")
