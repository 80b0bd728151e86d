"""``plainsight proxy`` with the real ``openai`` client against a fake upstream that streams in
1–3 character chunks (benchmarks/proxy_upstream.py)."""

from __future__ import annotations

import json
import logging
import threading

import httpx
import pytest
from openai import APIStatusError, OpenAI

from plainsight.benchmarks.proxy_upstream import FakeUpstream
from tests.proxy_support import proxy_settings, redis_server, running, RunningProxy

RAW = ("Maria", "Lopez", "maria.lopez@gmail.com", "(415) 555-0134", "5550134")
H = lambda sid: {"X-Plainsight-Session": sid}  # noqa: E731


def _ask(c: OpenAI, sid: str, messages, stream: bool = False, **kw) -> str:
    if stream:
        out = c.chat.completions.create(model="m", messages=messages, stream=True, extra_headers=H(sid), **kw)
        return "".join(ch.choices[0].delta.content or "" for ch in out if ch.choices)
    r = c.chat.completions.create(model="m", messages=messages, extra_headers=H(sid), **kw)
    return r.choices[0].message.content


def _upstream_text(up: FakeUpstream) -> str:
    return json.dumps(up.requests, ensure_ascii=False) + json.dumps(up.headers)


def test_plain_and_streamed_replies_are_reidentified_and_nothing_raw_goes_upstream(caplog):
    caplog.set_level(logging.DEBUG)
    with running() as (px, up):
        c = px.client()
        msg = [{"role": "system", "content": "You tutor Maria Lopez."},
               {"role": "user", "content": "Hi, I'm Maria Lopez, mail maria.lopez@gmail.com or (415) 555-0134"}]
        plain = _ask(c, "s-plain", msg)
        streamed = _ask(c, "s-plain", msg, stream=True)
        assert plain == streamed == "You said: " + msg[1]["content"]
        sent = up.requests[-1]["messages"]
        assert "Maria" not in sent[0]["content"] and "user" not in up.requests[-1]
        scan = _upstream_text(up)
        for raw in RAW:
            assert raw not in scan, raw
        metrics = httpx.get(px.base_url.replace("/v1", "/metrics")).text
        logs = "\n".join(r.getMessage() for r in caplog.records)
        for raw in RAW:
            assert raw not in metrics and raw not in logs
        assert 'plainsight_proxy_requests_total{outcome="ok",stream="true"} 1.0' in metrics
        assert "session=" in logs and "s-plain" not in logs  # the audit line holds a hashed session


def test_a_conversation_keeps_its_surrogates_across_requests():
    with running() as (px, up):
        c = px.client()
        history = [{"role": "user", "content": "My name is Maria Lopez and my brother is Daniel."}]
        for turn, q in enumerate(["Can Daniel help me?", "Maria needs help with fractions", "thanks!"]):
            reply = _ask(c, "conv-1", history, stream=turn % 2 == 1)
            history += [{"role": "assistant", "content": reply}, {"role": "user", "content": q}]
        _ask(c, "conv-1", history)
        reqs = [r["messages"] for r in up.requests]
        # each request's history is byte-identical to what the previous request sent
        for a, b in zip(reqs, reqs[1:]):
            assert b[: len(a)] == a
        scan = json.dumps(reqs)
        assert "Maria" not in scan and "Daniel" not in scan and "Lopez" not in scan
        # the app's copies of the re-identified replies held real names: they went upstream as surrogates
        assert reqs[-1][1]["content"] == "You said: " + reqs[0][0]["content"]


def test_tool_call_round_trip():
    up = FakeUpstream(reply=lambda b: json.dumps({"student": "Maria Lopez".join(["", ""]) or
                                                  b["messages"][-1]["content"].split("for ")[-1], "n": 3}))
    with running(upstream=up) as (px, _):
        c = px.client()
        up.tool_call = True
        messages = [
            {"role": "user", "content": "Look up the grades for Maria Lopez"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c0", "type": "function", "function": {
                "name": "lookup", "arguments": json.dumps({"student": "Maria Lopez", "deep": {"k": ["Maria"]}})}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "Maria Lopez: A-"},
            {"role": "user", "content": "And the grades for Maria Lopez"},
        ]
        for stream in (False, True):
            r = c.chat.completions.create(model="m", messages=messages, extra_headers=H("tools-1"), stream=stream)
            if stream:
                args = "".join(tc.function.arguments or "" for ch in r if ch.choices
                               for tc in (ch.choices[0].delta.tool_calls or []))
            else:
                args = r.choices[0].message.tool_calls[0].function.arguments
            assert json.loads(args)["student"] == "Maria Lopez"
        sent = up.requests[-1]["messages"]
        sent_args = json.loads(sent[1]["tool_calls"][0]["function"]["arguments"])  # still valid JSON
        assert "Maria" not in json.dumps(sent_args) and "Maria" not in sent[2]["content"]
        assert sent_args["deep"]["k"][0] == sent_args["student"].split()[0]


def test_two_concurrent_sessions_never_exchange_values():
    with running() as (px, up):
        c = px.client()
        people = {"sa": "Maria Lopez", "sb": "Sophie Martin"}
        errors: list[str] = []

        def talk(sid: str) -> None:
            me, other = people[sid], people["sb" if sid == "sa" else "sa"]
            for i in range(6):
                got = _ask(c, sid, [{"role": "user", "content": f"I'm {me}, question {i}"}], stream=i % 2 == 0)
                if other.split()[0] in got or me not in got:
                    errors.append(f"{sid}: {got!r}")

        ts = [threading.Thread(target=talk, args=(s,)) for s in people]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert not errors


def test_the_facade_the_proxy_and_the_pipeline_agree():
    from plainsight import Plainsight
    from plainsight.surrogate.pipeline import build_pipeline
    from plainsight.middleware.schemas import InputTurn

    s = proxy_settings()
    turns = ["Hi, I'm Maria Lopez from grade 7", "my email is maria.lopez@gmail.com", "Daniel is my brother"]
    api = Plainsight(s).session("same-1")
    via_api = [api.deidentify("user", t) for t in turns]
    p = build_pipeline(s)
    via_pipeline = [p.process_sync(InputTurn(session_id="same-1", turn_id=i, role="user", text=t, sent_at=0.0)).deid.text
                    for i, t in enumerate(turns)]
    with running(s) as (px, up):
        c = px.client()
        for i in range(len(turns)):
            _ask(c, "same-1", [{"role": "user", "content": t} for t in turns[: i + 1]])
        via_proxy = [m["content"] for m in up.requests[-1]["messages"]]
    assert via_api == via_pipeline == via_proxy
    assert "Maria" not in " ".join(via_api)
    assert api.reidentify(via_api[0]) == turns[0]


async def test_kafka_worker_agrees_with_the_facade(make_settings):
    """With ``surrogate.session_keys: off`` the three paths agree byte for byte. (With per-session
    keys, the default where state persists, a session's surrogates derive from a random key in its
    own sealed state: the same id through another path is another, unlinkable session.)"""
    from plainsight import Plainsight
    from plainsight.consumers.worker import Worker
    from tests.support import produce, read_topic, start_worker, stop_worker, turn_bytes

    s = make_settings(surrogate={"session_keys": "off"})
    turns = ["Hi, I'm Maria Lopez from grade 7", "my email is maria.lopez@gmail.com", "Daniel is my brother"]
    w = Worker(s, s.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        await produce(s, [("k-1", turn_bytes("k-1", i, t, role="user")) for i, t in enumerate(turns)])
        outs = await read_topic(s, s.topics.output, len(turns))
    finally:
        await stop_worker(w, task)
    by_turn = {json.loads(m.value)["turn_id"]: json.loads(m.value)["text"] for m in outs}
    api = Plainsight(s).session("k-1")
    assert [by_turn[i] for i in range(len(turns))] == [api.deidentify("user", t) for t in turns]


def test_redis_backed_pair_serves_one_conversation_alternately():
    with redis_server() as (url, password):
        s = proxy_settings(store="redis", redis_url=url, redis_password=password)
        up = FakeUpstream().start()
        a, b = RunningProxy(s, up.base_url), RunningProxy(s, up.base_url)
        try:
            history = [{"role": "user", "content": "I'm Maria Lopez, my tutor is Mr. Chen"}]
            for i in range(4):
                px = (a, b)[i % 2]
                reply = _ask(px.client(), "redis-conv", history, stream=i % 2 == 1)
                assert reply == "You said: " + history[-1]["content"]
                history += [{"role": "assistant", "content": reply}, {"role": "user", "content": f"Maria again {i}"}]
            reqs = [r["messages"] for r in up.requests]
            for x, y in zip(reqs, reqs[1:]):
                assert y[: len(x)] == x  # identical surrogates whichever instance served
            assert "Maria" not in json.dumps(reqs)
        finally:
            a.stop()
            b.stop()
            up.stop()


def test_fail_closed_paths(caplog):
    caplog.set_level(logging.DEBUG)
    with running() as (px, up):
        c = px.client()
        msg = [{"role": "user", "content": "I'm Maria Lopez"}]

        def boom(*a, **k):
            raise RuntimeError("detector broke on Maria Lopez")

        pipe = px.server.pipeline
        orig = pipe.detect
        pipe.detect = boom
        try:
            with pytest.raises(APIStatusError) as e:
                _ask(c, "fc-1", msg)
            assert e.value.status_code == 500 and "nothing was sent upstream" in str(e.value)
        finally:
            pipe.detect = orig
        assert up.requests == []

        store = px.server.store
        orig_get = store.get

        async def down(key):
            raise ConnectionError("store down")

        store.get = down
        try:
            with pytest.raises(APIStatusError) as e:
                _ask(c, "fc-2", msg, stream=True)
            assert e.value.status_code == 503
        finally:
            store.get = orig_get
        assert up.requests == []

        up.status = 429  # upstream errors pass through with their status
        with pytest.raises(APIStatusError) as e:
            _ask(c, "fc-3", msg)
        assert e.value.status_code == 429
        up.status = 0
        with pytest.raises(APIStatusError) as e:  # no session
            c.chat.completions.create(model="m", messages=msg)
        assert e.value.status_code == 400 and e.value.body["code"] == "session_required"
        r = httpx.get(px.base_url + "/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        with pytest.raises(APIStatusError) as e:  # images are refused unless allowed
            _ask(c, "fc-4", [{"role": "user", "content": [{"type": "text", "text": "see"},
                                                          {"type": "image_url", "image_url": {"url": "x"}}]}])
        assert e.value.status_code == 400
        logs = "\n".join(r.getMessage() for r in caplog.records)
        assert "Maria" not in logs


def test_upstream_unreachable_and_models_passthrough():
    from tests.support import free_port

    with running() as (px, up):
        assert [m.id for m in px.client().models.list().data] == ["fake-model"]
    s = proxy_settings()
    px = RunningProxy(s, f"http://127.0.0.1:{free_port()}/v1")
    try:
        with pytest.raises(APIStatusError) as e:
            _ask(px.client(), "u-1", [{"role": "user", "content": "hi"}])
        assert e.value.status_code == 502
    finally:
        px.stop()


def test_client_disconnect_cancels_the_upstream_stream():
    import time

    up = FakeUpstream(reply=lambda b: "x" * 4000)
    up.chunk_delay_s = 0.005
    with running(upstream=up) as (px, _):
        with httpx.stream("POST", px.base_url + "/chat/completions", headers=H("dc-1"),
                          json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}) as r:
            for _line in r.iter_lines():
                break
        deadline = time.monotonic() + 5
        while up.cancelled == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert up.cancelled == 1
