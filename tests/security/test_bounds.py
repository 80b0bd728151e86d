"""Security regression tests (#28) without a broker: bounded work, keyed digests, the metrics
server's exposure, the embedded broker's environment, private prediction files."""

from __future__ import annotations

import os
import socket
import time

import pytest

from plainsight.middleware.detection.base import Span
from plainsight.surrogate import SurrogateReplacer, reidentify

SECRET = "security-tests-secret"


def _session_with_emails(n: int, max_entries: int | None = None):
    r = SurrogateReplacer(SECRET, max_entries=max_entries)
    st = r.new_state("heavy")
    emails = [f"student{i}.name{i}@school{i % 7}.org" for i in range(n)]
    text = " ".join(emails)
    spans, pos = [], 0
    for e in emails:
        spans.append(Span(pos, pos + len(e), "EMAIL", "test"))
        pos += len(e) + 1
    out, _ = r.replace(text, spans, st, "surrogate")
    return r, st, out


def test_reidentification_is_linear_in_the_reply():
    """3,500 mapped e-mails and a 55 KB reply took over 300 s with one regex alternation."""
    _r, st, out = _session_with_emails(3500)
    reply = (out + " ") * (55_000 // (len(out) + 1) + 1)
    reply = reply[:55_000]
    t0 = time.perf_counter()
    back, ents = reidentify(reply, st)
    elapsed = time.perf_counter() - t0
    assert ents and "student1.name1@school1.org" in back
    assert elapsed < 5.0, f"re-identification of a 55 KB reply took {elapsed:.1f}s"


def test_mapping_entries_are_capped_past_it_values_are_tagged_not_stored():
    r, st, out = _session_with_emails(300, max_entries=100)
    assert st.entries == 100  # e-mails and their domains
    assert out.count("[EMAIL]") == r.capped >= 200
    assert "student250" not in out and "student250" not in st.to_bytes().decode()


def test_overlap_checks_are_near_linear():
    from plainsight.middleware.detection.recognizers.address import AddressRecognizer
    from plainsight.middleware.detection.value_memory import _find

    text = "\n".join(f"I live at {100 + i} Oak Street." for i in range(2000))  # ~ 60 KB
    t0 = time.perf_counter()
    spans = AddressRecognizer().analyze(text)
    assert len(spans) >= 1900
    items = [("USERNAME", f"user{i}") for i in range(2000)]
    utext = " ".join(f"user{i}" for i in range(2000))
    _find(utext, [], items)
    assert time.perf_counter() - t0 < 10.0


def test_session_ref_and_dead_letter_digests_are_keyed():
    import hashlib

    from plainsight.middleware import logs

    sid = "student-0042"
    plain = hashlib.sha256(sid.encode()).hexdigest()
    try:
        logs.set_digest_key(b"k" * 32)
        assert logs.session_ref(sid) != plain[:12]
        assert logs.keyed_digest(b"payload") != hashlib.sha256(b"payload").hexdigest()
    finally:
        logs.set_digest_key(None)


def test_reply_tokens_bind_the_session():
    from plainsight.middleware import reply_token

    key = reply_token.derive_key(b"s" * 32, b"reply-token")
    tok = reply_token.make(key, "s1", b'{"text":"x"}')
    assert reply_token.verify(key, "s1", tok)
    assert not reply_token.verify(key, "s2", tok)
    assert not reply_token.verify(reply_token.derive_key(b"t" * 32, b"reply-token"), "s1", tok)
    assert not reply_token.verify(key, "s1", tok[:-2] + "00")
    assert not reply_token.verify(key, "s1", None) and not reply_token.verify(key, "s1", "rt1.zz.zz")


def test_session_keys_make_surrogates_independent_of_the_secret():
    a = SurrogateReplacer(SECRET, session_keys=True)
    st1, st2 = a.new_state("same-id"), a.new_state("same-id")
    assert st1.key and st2.key and st1.key != st2.key
    assert a.surrogate_for("Maria", "NAME", st1) != a.surrogate_for("Maria", "NAME", st2) or \
        a.surrogate_for("415-555-0134", "PHONE", st1) != a.surrogate_for("415-555-0134", "PHONE", st2)
    # the key travels with the (sealed) state, so a restored session goes on the same way
    from plainsight.surrogate.state import SessionMapping

    back = SessionMapping.from_bytes(st1.to_bytes())
    assert back.key == st1.key
    assert a.surrogate_for("Tom", "NAME", back) == a.surrogate_for("Tom", "NAME", st1)


def test_metrics_server_binds_loopback_and_limits_connections():
    from plainsight.middleware.config import Settings
    from plainsight.middleware.metrics import Metrics
    from plainsight.middleware.metrics_server import MetricsServer

    assert Settings().metrics.host == "127.0.0.1"
    srv = MetricsServer(Metrics(), port=0, max_connections=2).start()
    held = []
    try:
        for _ in range(2):  # two idle clients hold both slots
            c = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
            held.append(c)
        time.sleep(0.2)
        extra = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
        extra.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        extra.settimeout(2)
        assert extra.recv(100) == b"", "over the limit: closed without an answer"
        extra.close()
    finally:
        for c in held:
            c.close()
        srv.stop()


def test_embedded_broker_gets_no_secrets_from_the_environment(monkeypatch):
    from plainsight.consumers.broker import EmbeddedBroker

    monkeypatch.setenv("PLAINSIGHT_SURROGATE__SECRET", "do-not-leak-me")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    b = EmbeddedBroker()
    b.start_sync()
    try:
        env = open(f"/proc/{b._proc.pid}/environ", "rb").read()
    finally:
        b.stop_sync()
    assert b"do-not-leak" not in env and b"PATH=" in env


def test_eval_predictions_file_is_private(tmp_path):
    from plainsight.middleware.commands.eval import _private_open

    p = tmp_path / "pred.jsonl"
    p.write_text("old")
    os.chmod(p, 0o644)
    with _private_open(str(p)) as f:
        f.write("x")
    assert (os.stat(p).st_mode & 0o777) == 0o600
    assert p.read_text() == "x"


@pytest.mark.parametrize("variant", ["4 1 5 5 5 5 0 1 3 4", "4-1-5-5-5-5-0-1-3-4"])
def test_spaced_digits_are_not_restored(variant):
    r = SurrogateReplacer(SECRET)
    st = r.new_state("s")
    text = "call 415-555-0134"
    out, _ = r.replace(text, [Span(5, 17, "PHONE", "test")], st, "surrogate")
    sur = out[5:]
    digits = "".join(c for c in sur if c.isdigit())
    spaced = (" " if " " in variant else "-").join(digits)
    back, _ = reidentify(f"as written {sur}; spaced {spaced}", st)
    assert "as written 415-555-0134" in back and f"spaced {spaced}" in back
