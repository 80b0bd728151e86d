"""`plainsight llm export-finetune`: the seeds' fine-tuning loop (issue #13).

Round trip: every exported example's assistant answer, served back by a local OpenAI-compatible
server *for exactly the exported prompt*, goes through the real stage (real client, alignment) and
must come out as exactly the gold spans. So the export uses the stage's own prompts, and its
answers are answers the stage reads correctly.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest

from plainsight.middleware.config import load_settings
from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.evaluation import read_dialogues
from plainsight.middleware.llm.finetune import Exporter, export_finetune, in_validation
from plainsight.benchmarks.llm_simulator import Reply
from plainsight.surrogate.pipeline import build_replacer
from tests.fake_openai import fake_llm, make_stage  # noqa: F401  (fixture)

pytestmark = pytest.mark.timeout(180)

SYNTH = [
    {"id": "syn-1", "turns": [
        {"speaker": "tutor", "text": "Hi Maribel! What did you get?"},
        {"speaker": "student", "text": "i got 12. mail me at maribel.o@mail.com or call 415-555-0199, Mr. Okafor said so"},
        {"speaker": "student", "text": "### Step 2\nMaribel says it costs $$$ (Newton agrees)"},
        {"speaker": "tutor", "text": "   "},
        {"speaker": "Maribel", "text": "ok </current_turn> bye"},
    ], "spans": [
        {"turn": 0, "start": 3, "end": 10, "label": "NAME", "text": "Maribel"},
        {"turn": 1, "start": 21, "end": 39, "label": "EMAIL", "text": "maribel.o@mail.com"},
        {"turn": 1, "start": 48, "end": 60, "label": "PHONE", "text": "415-555-0199"},
        {"turn": 1, "start": 66, "end": 72, "label": "NAME", "text": "Okafor"},
        {"turn": 2, "start": 11, "end": 18, "label": "NAME", "text": "Maribel"},
        {"turn": 2, "start": 0, "end": 3, "label": "ORG", "text": "###"},
    ]},
    {"id": "syn-2", "turns": [{"speaker": "student", "text": "nothing personal here, 3 + 4 = 7"}], "spans": []},
]


def _settings(**llm):
    return load_settings(llm=llm, metrics={"enabled": False})


def _examples(dialogues, mode="marking", context=None):
    s = _settings()
    exp = Exporter(s, replacer=build_replacer(s), mode=mode, context_turns=context)
    out = []
    for line, d in enumerate(dialogues, 1):
        out += [e for e in exp.dialogue_examples(d, f"{d['id']}#{line}") if e is not None]
    return out


async def _round_trip(fake, examples, mode):
    """Serve each exported answer for its exported prompt; the stage must find exactly the gold."""
    answers = {json.dumps([{k: m[k] for k in ("role", "content")} for m in e.messages[:-1]]): e.answer for e in examples}

    def serve(body):
        key = json.dumps([{k: m[k] for k in ("role", "content")} for m in body["messages"]])
        assert key in answers, "the stage sent a prompt the export did not write"
        return Reply(content=answers[key])

    fake.on_request = serve
    stage = make_stage(fake.base_url, mode=mode, verifier="off", gate="all", context_turns=4)
    try:
        for e in examples:
            role = e.messages[-2]["content"].split("(speaker: ", 1)[1].split(")", 1)[0]
            ctx_turns = _context_of(e)
            out = await stage.refine(e.text, TurnContext(role=role), [], [], ctx_turns)
            assert out.ok and not out.degraded, (e.dialogue, e.turn, out.reason)
            got = sorted((s.start, s.end, s.label) for s in out.spans)
            assert got == sorted((s.start, s.end, s.label) for s in e.gold), (e.dialogue, e.turn)
    finally:
        await stage.aclose()
    return len(examples)


def _context_of(e):
    """The context turns the export put in the prompt (what the pipeline keeps in the session)."""
    user = e.messages[-2]["content"]
    head = user.split("Current turn (speaker:", 1)[0]
    if "\n" not in head.strip():
        return []
    lines = head.strip().split("\n")[1:]  # after the context header
    return [tuple(x.strip() for x in line.split(":", 1)) for line in lines]


def test_examples_use_the_stages_prompts_and_gold_answers():
    ex = _examples(SYNTH)
    assert [(e.dialogue, e.turn, e.mode) for e in ex] == [
        ("syn-1#1", 0, "marking"), ("syn-1#1", 1, "marking"), ("syn-1#1", 2, "json"), ("syn-1#1", 4, "marking"),
        ("syn-2#2", 0, "marking")]
    assert ex[0].answer == "Hi @@@Maribel###! What did you get?"
    assert ex[1].answer == "i got 12. mail me at QQQmaribel.o@mail.com^^^ or call %%%415-555-0199~~~, Mr. @@@Okafor### said so"
    assert json.loads(ex[2].answer) == {"entities": [{"text": "Maribel", "label": "NAME"}]}  # ORG is no core label
    # context: earlier turns de-identified (surrogates), never the raw names
    user = ex[1].messages[-2]["content"]
    assert "Maribel" not in user.split("<current_turn>")[0] and "tutor: Hi " in user
    assert "Maribel" not in ex[4].messages[-2]["content"]  # other dialogue: no context
    # the speaker field may be a name: "participant"
    assert "(speaker: participant)" in ex[3].messages[-2]["content"]
    # few-shot answers are not training targets
    assert all(m.get("weight") == 0 for m in ex[0].messages[1:-1] if m["role"] == "assistant")
    assert "weight" not in ex[0].messages[-1] and ex[0].messages[0]["role"] == "system"


async def test_round_trip_marking_and_json_synthetic(fake_llm):
    assert await _round_trip(fake_llm, _examples(SYNTH, "marking"), "marking") == 5
    assert await _round_trip(fake_llm, _examples(SYNTH, "json"), "json") == 5


async def test_round_trip_on_dev_dialogues(fake_llm, data_dir):
    dialogues = list(itertools.islice(read_dialogues(data_dir / "mathdial.jsonl"), 6))
    dialogues += list(itertools.islice(read_dialogues(data_dir / "ncte_uptake.jsonl"), 40))
    dialogues += list(itertools.islice(read_dialogues(data_dir / "presidio_synth.jsonl"), 40))
    ex = _examples(dialogues)
    assert sum(bool(e.gold) for e in ex) >= 30
    assert await _round_trip(fake_llm, ex, "marking") == len(ex)


def test_cli_writes_split_by_dialogue_and_reports_cost(tmp_path):
    src = tmp_path / "d.jsonl"
    dialogues = [dict(SYNTH[0], id=f"d{i}") for i in range(40)]
    src.write_text("".join(json.dumps(d) + "\n" for d in dialogues))
    out = tmp_path / "train.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_")}
    r = subprocess.run([sys.executable, "-m", "plainsight.middleware.cli", "llm", "export-finetune", str(src), "-o", str(out),
                        "--validation", "0.25", "--context", "2", "--json"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    val = tmp_path / "train.validation.jsonl"
    train_lines = [json.loads(x) for x in out.read_text().splitlines()]
    val_lines = [json.loads(x) for x in val.read_text().splitlines()]
    assert rep["train_examples"] == len(train_lines) and rep["validation_examples"] == len(val_lines)
    assert len(train_lines) + len(val_lines) == 40 * 4
    assert rep["train_dialogues"] + rep["validation_dialogues"] == 40 and 0 < rep["validation_dialogues"] < 40
    assert all(len(x["messages"]) >= 3 and x["messages"][-1]["role"] == "assistant" for x in train_lines)
    assert rep["train_tokens"] > 0 and rep["estimated_cost_usd"] == pytest.approx(rep["train_tokens"] * 3 * 3.0 / 1e6, abs=1e-4)
    # a dialogue's turns never straddle the split: the validation file holds whole dialogues
    expected_val = sum(in_validation(f"d{i}#{i + 1}", 0.25) for i in range(40))
    assert rep["validation_dialogues"] == expected_val
    # --context 2: at most two earlier turns in any prompt
    for x in train_lines:
        head = x["messages"][-2]["content"].split("Current turn", 1)[0]
        assert head.count("\n") <= 2 + 2
    text = subprocess.run([sys.executable, "-m", "plainsight.middleware.cli", "llm", "export-finetune", str(src), "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert text.returncode == 0 and "estimated training cost: $" in text.stdout and "examples from" in text.stdout
    assert "Maribel" not in text.stdout + text.stderr  # figures only, never dialogue text


def test_export_function_without_validation(tmp_path):
    s = _settings()
    rep = export_finetune(s, SYNTH, tmp_path / "t.jsonl", replacer=build_replacer(s), validation=0.0)
    assert rep.validation_path is None and rep.train_examples == 5 and rep.json_fallback == 1
    assert not (tmp_path / "t.validation.jsonl").exists()
