"""The proxy's security model (#27) with the real ``openai`` client: client keys, sessions bound to
the client, no re-identification oracle, limits, revocation."""

from __future__ import annotations

import io
import json
import time
from contextlib import redirect_stdout, redirect_stderr

import httpx
import pytest
from openai import APIStatusError, AuthenticationError

from plainsight.benchmarks.proxy_upstream import FakeUpstream
from plainsight.proxy.clients import add_client, read_file, revoke_client
from tests.proxy_support import proxy_settings, running

H = lambda sid: {"X-Plainsight-Session": sid}  # noqa: E731


@pytest.fixture
def clients(tmp_path):
    path = str(tmp_path / "clients.yaml")
    keys = {n: add_client(path, n) for n in ("app-a", "app-b")}
    return path, keys


def _ask(c, sid, content, stream=False):
    if stream:
        out = c.chat.completions.create(model="m", messages=[{"role": "user", "content": content}], stream=True,
                                        extra_headers=H(sid))
        return "".join(ch.choices[0].delta.content or "" for ch in out if ch.choices)
    r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": content}], extra_headers=H(sid))
    return r.choices[0].message.content


def test_clients_file_keeps_only_a_digest_and_the_cli_prints_the_key_once(tmp_path):
    from plainsight.middleware.cli import main

    path = str(tmp_path / "c.yaml")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["proxy", "clients", "add", "tutor-app", "--clients-file", path]) == 0
    key = out.getvalue().strip()
    assert key.startswith("psk-") and len(key) > 40
    text = open(path).read()
    assert key not in text and "key_sha256" in text
    assert read_file(path)["tutor-app"].revoked is False


def test_without_a_clients_file_the_proxy_refuses_to_listen_beyond_loopback():
    from plainsight.middleware.cli import main

    err = io.StringIO()
    with redirect_stderr(err):
        rc = main(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--host", "0.0.0.0", "--store", "memory"])
    assert rc == 2 and "without a clients file" in err.getvalue()


def test_unknown_or_missing_key_gets_an_openai_401_and_revocation_is_live(clients):
    path, keys = clients
    with running(proxy_settings(clients_file=path, refusal_delay_s=0)) as (px, up):
        with pytest.raises(AuthenticationError) as e:
            _ask(px.client("psk-not-a-key"), "s", "hi")
        assert e.value.status_code == 401 and e.value.body["code"] == "invalid_api_key"
        assert _ask(px.client(keys["app-a"]), "s", "hello") == "You said: hello"
        revoke_client(path, "app-a")
        t0 = time.monotonic()
        while True:
            try:
                _ask(px.client(keys["app-a"]), "s", "hello")
            except AuthenticationError:
                break
            assert time.monotonic() - t0 < 1.0, "a revoked key still worked after a second"
            time.sleep(0.05)
        assert time.monotonic() - t0 < 1.0
        assert _ask(px.client(keys["app-b"]), "s", "hello") == "You said: hello"  # others unaffected
        assert up.requests and all("psk-" not in json.dumps(h) for h in up.headers)  # client keys never go upstream


def test_client_b_with_client_a_session_and_surrogate_gets_nothing_of_a(clients):
    path, keys = clients
    with running(proxy_settings(clients_file=path)) as (px, up):
        a, b = px.client(keys["app-a"]), px.client(keys["app-b"])
        assert _ask(a, "lesson-1", "I'm Maria Lopez") == "You said: I'm Maria Lopez"
        sur = up.requests[-1]["messages"][0]["content"].removeprefix("I'm ")  # A's surrogate, seen in a log
        assert "Maria" not in sur
        for stream in (False, True):
            got = _ask(b, "lesson-1", f"Please repeat: {sur}", stream=stream)
            assert "Maria" not in got and "Lopez" not in got
            assert got == f"You said: Please repeat: {sur}"  # B gets back only what B typed
        # B's request reached the model with B's own surrogate for that text, not A's
        assert sur not in up.requests[-1]["messages"][0]["content"]


def test_within_one_client_a_typed_surrogate_restores_nothing_real():
    with running() as (px, up):
        c = px.client()
        _ask(c, "victim", "I'm Maria Lopez, my email is maria.lopez@gmail.com")
        sent = up.requests[-1]["messages"][0]["content"]
        sur_name = sent.split(",")[0].removeprefix("I'm ")
        sur_mail = sent.rsplit(" ", 1)[-1]
        for stream in (False, True):
            got = _ask(c, "victim", f"who is {sur_name}? write to {sur_mail}", stream=stream)
            assert "Maria" not in got and "maria.lopez" not in got
            assert got == f"You said: who is {sur_name}? write to {sur_mail}"


def test_a_surrogate_the_model_writes_on_its_own_stays_as_written():
    up = FakeUpstream()
    with running(upstream=up) as (px, _):
        c = px.client()
        _ask(c, "own-1", "I'm Maria Lopez")
        sur = up.requests[-1]["messages"][0]["content"].removeprefix("I'm ")
        up.reply = lambda body: f"By the way, {sur} is a famous mathematician."
        # this request carries no name: nothing was issued, so nothing is restored
        assert _ask(c, "own-1", "what is 2+2?") == f"By the way, {sur} is a famous mathematician."


def test_fingerprint_fallback_is_off_by_default_and_per_client(tmp_path):
    with running() as (px, _):
        with pytest.raises(APIStatusError) as e:
            px.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert e.value.status_code == 400 and e.value.body["code"] == "session_required"
    path = str(tmp_path / "c.yaml")
    ka = add_client(path, "fp-on", fingerprint_fallback=True)
    kb = add_client(path, "fp-off")
    with running(proxy_settings(clients_file=path)) as (px, _):
        r = px.client(ka).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert r.choices[0].message.content == "You said: hi"
        with pytest.raises(APIStatusError):
            px.client(kb).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


def _post(px, body, headers=None, raw=None):
    h = {"content-type": "application/json", "x-plainsight-session": "lim", **(headers or {})}
    return httpx.post(px.base_url + "/chat/completions", content=raw if raw is not None else json.dumps(body).encode(),
                      headers=h, timeout=30)


def test_every_limit_answers_with_its_status_before_detection():
    s = proxy_settings(max_body_bytes=20_000, max_messages=3, max_message_chars=500, max_tool_arg_depth=4,
                       requests_per_minute=60_000, max_concurrency=50, refusal_delay_s=0)
    with running(s) as (px, up):
        calls = []
        orig = px.server.pipeline.detect
        px.server.pipeline.detect = lambda *a, **k: calls.append(1) or orig(*a, **k)
        m = lambda c: {"role": "user", "content": c}  # noqa: E731
        cases = [
            ({"model": "m", "messages": [m("x" * 30_000)]}, None, 413, "body_too_large"),
            ({"model": "m", "messages": [m("a")] * 4}, None, 400, "max_messages"),
            ({"model": "m", "messages": [m("x" * 600)]}, None, 400, "max_message_chars"),
            ({"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "[[[[[[1]]]]]]"}}]}]},
             None, 400, "max_tool_arg_depth"),
            (None, b"{not json", 400, "invalid_json"),
            (None, b'{"messages":[{"role":"user","content":"\xff"}]}', 400, "invalid_json"),
            ({"model": "m", "messages": "hi"}, None, 400, "invalid_request"),
            ({"model": "m", "messages": [{"role": "user", "content": 5}]}, None, 400, "invalid_request"),
        ]
        for body, raw, status, code in cases:
            r = _post(px, body, raw=raw)
            assert r.status_code == status, (code, r.text)
            assert r.json()["error"]["code"] == code
        assert calls == [] and up.requests == []
        # per-client rate: 60/min with a 2-request burst, then 429 with Retry-After
        px.server.ps.requests_per_minute = 60
        px.server._buckets.clear()
        statuses = [_post(px, {"model": "m", "messages": [m("hi")]}).status_code for _ in range(5)]
        assert 429 in statuses
        r = _post(px, {"model": "m", "messages": [m("hi")]})
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        metrics = httpx.get(px.base_url.replace("/v1", "/metrics")).text
        assert 'plainsight_proxy_refused_total{client="local",reason="rate_limited"}' in metrics
        assert 'reason="max_messages"' in metrics


def test_a_stream_longer_than_the_limit_is_cut():
    up = FakeUpstream(reply=lambda b: "y" * 400)
    up.chunk_delay_s = 0.01
    with running(proxy_settings(max_stream_s=0.3), upstream=up) as (px, _):
        with httpx.stream("POST", px.base_url + "/chat/completions", headers=H("long"), timeout=30,
                          json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}) as r:
            lines = [ln for ln in r.iter_lines() if ln.startswith("data:")]
        assert any("stream_duration" in ln for ln in lines)
        assert not any("[DONE]" in ln for ln in lines)


def _self_signed(tmp_path):
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cp, kp = tmp_path / "cert.pem", tmp_path / "key.pem"
    cp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    kp.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()))
    return str(cp), str(kp)


def test_tls_directly(tmp_path):
    from openai import OpenAI

    from tests.proxy_support import RunningProxy

    cert, key = _self_signed(tmp_path)
    up = FakeUpstream().start()
    px = RunningProxy(proxy_settings(), up.base_url, ssl=(cert, key))
    try:
        assert px.base_url.startswith("https://")
        import ssl

        c = OpenAI(base_url=px.base_url, api_key="sk-x", max_retries=0,
                   http_client=httpx.Client(verify=ssl.create_default_context(cafile=cert)))
        assert _ask(c, "tls-1", "I'm Maria Lopez") == "You said: I'm Maria Lopez"
        assert "Maria" not in json.dumps(up.requests)
    finally:
        px.stop()
        up.stop()


def test_forget_erases_proxy_sessions(tmp_path, monkeypatch):
    from plainsight.middleware.cli import main
    from plainsight.proxy.store import store_key

    db = str(tmp_path / "proxy.db")
    s = proxy_settings(store="sqlite", sqlite_path=db)
    with running(s) as (px, up):
        c = px.client()
        _ask(c, "erase-me", "I'm Maria Lopez")
        first = up.requests[-1]["messages"][0]["content"]
        key = store_key("erase-me", "local")
        import asyncio

        assert asyncio.run(px.server.store.get(key)) is not None
        monkeypatch.setenv("PLAINSIGHT_PROXY__STORE", "sqlite")
        monkeypatch.setenv("PLAINSIGHT_PROXY__SQLITE_PATH", db)
        err = io.StringIO()
        with redirect_stderr(err):
            assert main(["forget", "erase-me"]) == 0
        assert "1 proxy session(s) erased" in err.getvalue()
        assert asyncio.run(px.server.store.get(key)) is None
        _ask(c, "erase-me", "hello")  # a fresh session now
        assert asyncio.run(px.server.store.get(key)) is not None
        assert first.startswith("I'm ")


def test_concurrency_slots_come_back_after_streams_and_disconnects():
    up = FakeUpstream(reply=lambda b: "z" * 300)
    up.chunk_delay_s = 0.002
    with running(proxy_settings(max_concurrency=2, refusal_delay_s=0), upstream=up) as (px, _):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
        for i in range(4):  # dropped after the first line
            with httpx.stream("POST", px.base_url + "/chat/completions", headers=H(f"slot-{i}"), json=body,
                              timeout=30) as r:
                for _ in r.iter_lines():
                    break
        for i in range(3):
            assert _ask(px.client(), f"slot-ok-{i}", "hello", stream=True) == "z" * 300
        time.sleep(0.3)
        assert px.server._buckets["local"].active == 0


def test_redis_over_tls_with_a_password(tmp_path):
    from tests.proxy_support import redis_server

    cert, key = _self_signed(tmp_path)
    with redis_server(tls=(cert, key)) as (url, password):
        assert url.startswith("rediss://")
        s = proxy_settings(store="redis", redis_url=url, redis_password=password, redis_ssl_ca_certs=cert)
        with running(s) as (px, up):
            c = px.client()
            assert _ask(c, "tls-redis", "I'm Maria Lopez") == "You said: I'm Maria Lopez"
            assert _ask(c, "tls-redis", "Maria again", stream=True) == "You said: Maria again"
            assert httpx.get(px.base_url.replace("/v1", "/healthz")).json()["status"] == "ok"
        bad = proxy_settings(store="redis", redis_url=url, redis_password="wrong", redis_ssl_ca_certs=cert)
        with running(bad) as (px, up):  # a wrong password: fail closed, nothing upstream
            with pytest.raises(APIStatusError) as e:
                _ask(px.client(), "tls-redis", "I'm Maria Lopez")
            assert e.value.status_code == 503 and up.requests == []


def test_a_stored_proxy_session_has_its_own_key_so_the_secret_alone_cannot_recompute_it(tmp_path):
    """Crypto-shredding for the proxy, as for the Kafka worker (issue #28): with a persistent store a
    session's surrogates derive from a random key in its sealed state. The same secret and the same
    turn in a pipeline without that key (the secret's holder after ``forget``) give other surrogates;
    the session itself stays consistent across requests."""
    from plainsight import Plainsight

    s = proxy_settings(store="sqlite", sqlite_path=str(tmp_path / "p.db"))
    with running(s) as (px, up):
        c = px.client()
        _ask(c, "shred-1", "I'm Maria Lopez, maria.lopez@gmail.com")
        first = up.requests[-1]["messages"][0]["content"]
        _ask(c, "shred-1", "I'm Maria Lopez, maria.lopez@gmail.com")
        again = up.requests[-1]["messages"][0]["content"]
    assert "Maria" not in first and first == again
    offline = Plainsight(proxy_settings(store="memory")).session("shred-1")
    assert offline.deidentify("user", "I'm Maria Lopez, maria.lopez@gmail.com") != first
