"""`plainsight eval --llm-base-url`: the eval runs the LLM stage the worker runs and reports its cost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.fake_openai import fake_llm  # noqa: F401  (fixture)


def test_eval_with_llm_reports_tokens_and_cost(tmp_path, fake_llm):  # noqa: F811
    fake_llm.gold = {"Quillon": "NAME", "quillon": "NAME"}
    d = {"id": "d1", "source": "t", "meta": {}, "turns": [
        {"speaker": "tutor", "text": "hello quillon, ready?"},
        {"speaker": "student", "text": "yes! my name is Quillon"}],
        "spans": [{"turn": 0, "start": 6, "end": 13, "label": "NAME", "text": "quillon"},
                  {"turn": 1, "start": 16, "end": 23, "label": "NAME", "text": "Quillon"}]}
    f = tmp_path / "d.jsonl"
    f.write_text(json.dumps(d) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_")}
    env["OPENAI_API_KEY"] = "sk-test"
    r = subprocess.run([sys.executable, "-m", "plainsight.middleware.cli", "eval", str(f), "--json", "--llm-base-url",
                        fake_llm.base_url, "--llm-gate", "all"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    llm = out["llm"]
    assert llm["turns"] == 2 and llm["turns_sent"] == 2 and llm["share_sent"] == 1.0
    assert llm["prompt_tokens"] > 0 and llm["cost_usd"] > 0 and llm["cost_per_1m_input_tokens_usd"] > 0
    assert out["per_label"]["NAME"]["recall"] == 1.0
    chat = len("hello quillon, ready?") + len("yes! my name is Quillon")
    assert llm["chat_tokens"] == chat // 4 and llm["seed_cost_per_1m_chat_tokens_usd"] == 0.92
    assert llm["cost_per_1m_chat_tokens_usd"] == pytest.approx(llm["cost_usd"] / (chat / 4) * 1e6, rel=0.02)
    r = subprocess.run([sys.executable, "-m", "plainsight.middleware.cli", "eval", str(f), "--llm-base-url", fake_llm.base_url,
                        "--llm-gate", "all"], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and "per 1M chat tokens" in r.stdout and "$0.92" in r.stdout
