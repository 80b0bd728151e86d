"""The LLM stage inside the Pipeline: policies, fail-closed output, context, order, memory."""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import time

import pytest

from plainsight.middleware.config import Settings, load_settings
from plainsight.middleware.detection.base import Span
from plainsight.middleware.detection.cascade import Cascade
from plainsight.middleware.llm.cli_args import add_llm_arguments, llm_overrides
from plainsight.benchmarks.llm_simulator import closed_port_url
from plainsight.surrogate.pipeline import build_pipeline
from plainsight.middleware.schemas import InputTurn
from tests.fake_openai import fake_llm  # noqa: F401  (fixture)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def cascade():
    return Cascade(use_ner=False)  # with its own candidates hook (the name model's doubts)


def settings(base_url: str, **llm) -> Settings:
    cfg = dict(base_url=base_url, timeout_s=2.0, latency_budget_ms=3000, async_budget_ms=3000, max_retries=1,
               backoff_base_s=0.01, backoff_max_s=0.05, context_turns=3, verifier="off")
    cfg.update(llm)
    return load_settings(llm=cfg, metrics={"enabled": False})


def turn(sid, i, text, role="student"):
    return InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=time.time())


async def test_disabled_stage_is_the_fast_pass(cascade):
    p = build_pipeline(Settings(), detector=cascade)
    assert p.llm is None
    r = await p.process(turn("s", 0, "hi im Jake"))
    assert not r.degraded and r.refined is None and "Jake" not in r.deid.text


async def test_wait_policy_adds_model_spans(fake_llm, cascade):
    fake_llm.gold = {"qwertyna": "NAME"}  # a name only the model knows
    p = build_pipeline(settings(fake_llm.base_url, gate="all"), detector=cascade)
    try:
        r = await p.process(turn("s", 0, "i got 12, ask qwertyna and Jake"))
    finally:
        await p.aclose()
    assert "qwertyna" not in r.deid.text and "qwertyna" not in r.logs.text
    assert not r.degraded and not r.deid.degraded and r.llm.sent
    assert "llm" in r.deid.timings_ms and "fast_pass" in r.deid.timings_ms


async def test_outage_degrades_and_emits_no_raw_pii(cascade):
    p = build_pipeline(settings(closed_port_url(), gate="all"), detector=cascade)
    text = "Jake told Zorblat to email jake.t@mail.com"
    try:
        r = await p.process(turn("s", 0, text))
    finally:
        await p.aclose()
    assert r.degraded and r.deid.degraded and r.logs.degraded
    for out in (r.deid, r.logs):
        for raw in ("Jake", "Zorblat", "jake.t@mail.com"):
            assert raw not in out.text and raw not in out.model_dump_json()
    assert p.llm.stats.degraded["outage"] == 1


async def test_budget_overrun_fails_closed_for_the_turn(fake_llm, cascade):
    fake_llm.latency_s = 1.0
    p = build_pipeline(settings(fake_llm.base_url, latency_budget_ms=150, gate="all"), detector=cascade)
    t0 = time.monotonic()
    try:
        r = await p.process(turn("s", 0, "ask Zorblat please"))
    finally:
        await p.aclose()
    assert time.monotonic() - t0 < 0.8
    assert r.degraded and "Zorblat" not in r.deid.text and r.llm.reason == "timeout"


async def test_context_is_deidentified_and_sliding(fake_llm, cascade):
    fake_llm.gold = {"Jake": "NAME", "Ana": "NAME", "Zed": "NAME"}
    p = build_pipeline(settings(fake_llm.base_url, context_turns=2, gate="all"), detector=cascade)
    texts = ["hi im Jake", "my sister Ana says hi", "Zed is my dog's name", "bye Ana, see you Jake"]
    outs = []
    try:
        for i, t in enumerate(texts):
            outs.append(await p.process(turn("s", i, t)))
    finally:
        await p.aclose()
    last = fake_llm.requests[-1]["messages"][-1]["content"]
    ctx_part = last.split("<current_turn>")[0]
    assert "Ana" not in ctx_part and "Zed" not in ctx_part and "Jake" not in ctx_part
    # the last two turns exactly as the pipeline output them (whatever the output mode), not the first
    assert f"student: {outs[1].logs.text}" in ctx_part and f"student: {outs[2].logs.text}" in ctx_part
    assert outs[0].logs.text not in ctx_part


async def test_per_session_order_100_concurrent_sessions(fake_llm, cascade):
    rnd = random.Random(7)
    fake_llm.latency_fn = lambda text: rnd.uniform(0.0, 0.04)
    fake_llm.gold = {f"Zq{i}": "NAME" for i in range(100)}
    p = build_pipeline(settings(fake_llm.base_url, gate="all", context_turns=1, max_concurrency=64), detector=cascade)
    n_turns = 4
    results: dict[str, list] = {}
    logs_text: dict[tuple[int, int], str] = {}

    async def session(k: int):
        sid = f"sess-{k}"
        outs = []
        for i in range(n_turns):  # a session's turns one after the other, as the worker does
            r = await p.process(turn(sid, i, f"turn {i} of Zq{k} in session {k}"))
            outs.append(r)
            logs_text[(k, i)] = r.logs.text
        results[sid] = outs

    try:
        await asyncio.wait_for(asyncio.gather(*(session(k) for k in range(100))), 60)
    finally:
        await p.aclose()
    assert len(results) == 100
    for k in range(100):
        outs = results[f"sess-{k}"]
        assert [o.deid.turn_id for o in outs] == list(range(n_turns))
        assert all(f"Zq{k}" not in o.deid.text and not o.degraded for o in outs)
    # every request's context is the previous turn of the same session, de-identified
    for body in fake_llm.requests:
        user = body["messages"][-1]["content"]
        cur = re.search(r"turn (\d+) of Zq(\d+)", user.split("<current_turn>")[1])
        i, k = int(cur.group(1)), int(cur.group(2))
        ctx = user.split("<current_turn>")[0]
        if i == 0:
            assert "turn " not in ctx.replace("Current turn", "")
        else:
            assert f"student: {logs_text[(k, i - 1)]}\n" in ctx and f"Zq{k}" not in ctx
    assert len(fake_llm.requests) == 100 * n_turns
    assert fake_llm.max_in_flight <= 64


async def test_async_refine_returns_at_once_and_refines_logs_in_order(fake_llm, cascade):
    fake_llm.gold = {"qwertyna": "NAME"}
    # the first turn's model call is slow, the second's fast: refined logs must still come in order
    fake_llm.latency_fn = lambda text: 0.4 if text.startswith("first") else 0.01
    p = build_pipeline(settings(fake_llm.base_url, policy="async-refine", gate="all"), detector=cascade)
    done_order: list[int] = []
    try:
        t0 = time.monotonic()
        r1 = await p.process(turn("s", 0, "first: i got 12, ask qwertyna"))
        r2 = await p.process(turn("s", 1, "second: qwertyna again"))
        assert time.monotonic() - t0 < 0.3  # the tutor never waits for the model
        assert "qwertyna" in r1.deid.text and not r1.degraded  # fast pass only, by design
        r1.refined.add_done_callback(lambda _: done_order.append(0))
        r2.refined.add_done_callback(lambda _: done_order.append(1))
        l1, l2 = await r1.final_logs(), await r2.final_logs()
        assert done_order == [0, 1]
        assert "qwertyna" not in l1.text and "qwertyna" not in l2.text
        assert not l1.degraded and l1.turn_id == 0 and l2.turn_id == 1
        # the refined spans taught the session memory: the fast pass now finds the name itself
        r3 = await p.process(turn("s", 2, "later qwertyna came back"))
        assert "qwertyna" not in r3.deid.text
    finally:
        await p.aclose()


async def test_async_refine_failure_marks_logs_degraded(cascade):
    p = build_pipeline(settings(closed_port_url(), policy="async-refine", gate="all"), detector=cascade)
    try:
        r = await p.process(turn("s", 0, "Heloise has 3 apples and buys 2 more. How many apples does Heloise have now?", role="tutor"))
        # the fast pass keeps a story character (a doubtful keep for the model) ...
        assert not r.deid.degraded and "Heloise" in r.deid.text
        logs = await r.final_logs()
    finally:
        await p.aclose()
    # ... and when the model is unreachable the refined output masks it conservatively
    assert logs.degraded and "Heloise" not in logs.text


def test_cli_args():
    ap = argparse.ArgumentParser()
    add_llm_arguments(ap)
    assert llm_overrides(ap.parse_args([])) == {}
    o = llm_overrides(ap.parse_args(["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--llm-mode", "json"]))
    assert o == {"llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "enabled": True, "mode": "json"}}
    s = load_settings(**o)
    assert s.llm.is_enabled and s.llm.model_name == "m" and s.llm.mode == "json"
    assert not load_settings(**llm_overrides(ap.parse_args(["--llm-model", "m", "--no-llm"]))).llm.is_enabled
