"""Session memory: a person confirmed once is found later in any case, with possessives, by first
or last name alone; story characters are remembered as kept."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.detection.names import NameFinder


@pytest.fixture(scope="module")
def finder() -> NameFinder:
    return NameFinder()


def run(finder, mem, text, role="teacher"):
    return [text[s.start : s.end] for s in finder.find(text, TurnContext(role=role), mem)]


def test_memory_any_case_and_possessive(finder):
    mem = SessionMemory()
    assert run(finder, mem, "Hi Teupola, can you start?") == ["Teupola"]
    text = "teupola said 16 stays the same. TEUPOLA is right, and Teupola's array too."
    spans = finder.find(text, TurnContext(role="teacher"), mem)
    assert [text[s.start : s.end] for s in spans] == ["teupola", "TEUPOLA", "Teupola"]
    poss = spans[-1]
    assert text[poss.end :].startswith("'s")


def test_memory_first_or_last_name_alone(finder):
    mem = SessionMemory()
    assert run(finder, mem, "My name is Aantje Mourik", role="student") == ["Aantje Mourik"]
    assert run(finder, mem, "Thanks, aantje. Mourik is a nice surname.") == ["aantje", "Mourik"]


def test_memory_is_per_session(finder):
    a, b = SessionMemory(), SessionMemory()
    run(finder, a, "Hi Wilbens!")
    assert a.is_person("wilbens") and not b.is_person("wilbens")


def test_wordish_memory_needs_capital(finder):
    mem = SessionMemory()
    assert run(finder, mem, "Good job, Will.") == ["Will"]
    # "will" the verb is not the person; "Will" capitalised later is
    assert run(finder, mem, "I will check it, and Will can explain.") == ["Will"]


def test_memory_bookkeeping():
    mem = SessionMemory()
    mem.add_person("Maria de la Cruz", 1.0)
    assert mem.is_person("maria") and mem.is_person("cruz") and not mem.is_person("de")
    mem.add_kept("Carmen")
    assert mem.is_kept("CARMEN")
    mem.add_person("Carmen", 1.0)  # confirmed people are no longer kept
    assert not mem.is_kept("carmen")
    assert mem.addressed() == 3


def test_memory_is_plain_and_serialisable():
    import dataclasses
    import json

    mem = SessionMemory()
    mem.add_person("Maria Lopez", 1.0)
    mem.doubts = [[3, 9]]
    mem.doubts_turn = 4
    fields = {f.name: getattr(mem, f.name) for f in dataclasses.fields(mem)}
    plain = {k: sorted(v) if isinstance(v, set) else v for k, v in fields.items()}
    back = json.loads(json.dumps(plain))
    assert back["people"] == {"maria": 1.0, "lopez": 1.0} and back["doubts"] == [[3, 9]]
    assert all(f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING for f in dataclasses.fields(mem))


def test_problem_digests_are_the_same_in_every_process():
    """The parsed-problem digests live in the sealed state: they must not depend on the process's
    hash seed, or a replay in another worker process would store different bytes."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "from middleware.detection.cascade import Cascade\n"
        "from middleware.detection.base import TurnContext\n"
        "c = Cascade(); m = c.new_memory()\n"
        "c.detect('ok', TurnContext(role='student', session_id='s', turn_index=0,"
        " metadata={'question': 'Julia bought 3 packs of pencils.'}), m)\n"
        "import json; print(json.dumps(sorted(m.problems_seen)))\n"
    )
    seen = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        seen.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert seen[0] == seen[1] and seen[0]
