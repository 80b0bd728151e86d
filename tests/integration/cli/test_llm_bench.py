"""The benchmark functions stay runnable (tiny sizes; the simulated model in a subprocess)."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.cascade import Cascade
from plainsight.benchmarks import llm as bench

pytestmark = pytest.mark.timeout(120)

DIALOGUES = [
    {"id": "d1", "source": "synthetic", "turns": [{"speaker": "teacher", "text": "Hi Lucica, what did you get?"},
                                                   {"speaker": "student", "text": "i got 12, ask qwertyna!"}],
     "spans": [{"turn": 0, "start": 3, "end": 9, "label": "NAME", "text": "Lucica"},
               {"turn": 1, "start": 14, "end": 22, "label": "NAME", "text": "qwertyna"}]},
    {"id": "d2", "source": "synthetic", "turns": [{"speaker": "tutor", "text": "In this question, Heloise is painting a rectangular brick."},
                                                   {"speaker": "student", "text": "4 m"}], "spans": []},
]


@pytest.fixture(scope="module")
def det():
    return Cascade(use_ner=False)


async def test_throughput_both_policies_and_tokens(det):
    with bench.simulator_process(0.05, bench.gold_map(DIALOGUES)) as url:
        for policy in ("wait", "async-refine"):
            r = await bench.throughput(url, DIALOGUES, det, policy=policy, sessions=6, turns_per_session=3)
            assert r["turns"] == 18 and r["degraded"] == 0 and r["requests"] == 18 and r["turns_per_s"] > 0
            assert r["p99_ms"] >= r["p50_ms"]
            if policy == "async-refine":
                assert r["refined_degraded"] == 0 and r["refined_p99_ms"] >= 40
        tok = await bench.tokens_per_turn(url, DIALOGUES, det, max_turns=4)
    assert tok["marking"]["turns"] == tok["json"]["turns"] == 4
    # (on such short turns the JSON envelope costs about as much as the echo; see the bench figures)
    assert tok["json"]["prompt_per_turn"] < tok["marking"]["prompt_per_turn"]
    assert tok["marking"]["degraded"] == tok["json"]["degraded"] == 0


def test_gate_share(det):
    g = bench.gate_share(DIALOGUES, det)
    assert g["all"]["turns"] == 4 and 0 < g["all"]["sent"] < 4 and g["all"]["missed"] == 0
