"""Unit tests for middleware/metrics.py: closed label sets, zero-at-start-up, HTTP endpoints."""

from __future__ import annotations

import argparse
import socket
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from plainsight.middleware.config import Settings, load_settings
from plainsight.middleware.metrics import (
    DLQ_REASONS,
    LLM_STATUSES,
    OUTCOMES,
    STAGES,
    TOKEN_KINDS,
    Metrics,
)
from plainsight.middleware.commands.metrics_args import add_metrics_arguments, metrics_overrides
from plainsight.middleware.metrics_server import MetricsServer, MetricsServerError, start_metrics
from plainsight.middleware.schemas import DlqReason

EXPECTED = {
    "plainsight_e2e_latency_seconds": "histogram",
    "plainsight_stage_latency_seconds": "histogram",
    "plainsight_turns": "counter",
    "plainsight_entities": "counter",
    "plainsight_llm_requests": "counter",
    "plainsight_llm_tokens": "counter",
    "plainsight_llm_cost_usd": "counter",
    "plainsight_degraded": "counter",
    "plainsight_dlq": "counter",
    "plainsight_consumer_lag": "gauge",
    "plainsight_active_sessions": "gauge",
    "plainsight_ready": "gauge",
    "plainsight_build_info": "gauge",
}


def families(m: Metrics) -> dict:
    body, _ = m.exposition()
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def get(url: str, timeout: float = 5.0) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


@pytest.fixture
def metrics() -> Metrics:
    return Metrics.from_settings(Settings())


def test_every_metric_exists_at_zero_from_start_up(metrics: Metrics) -> None:
    fams = families(metrics)
    for name, kind in EXPECTED.items():
        assert name in fams, name
        assert fams[name].type == kind, name
    s = metrics.sample
    for st in STAGES:
        assert s("plainsight_stage_latency_seconds_count", {"stage": st}) == 0
    for o in OUTCOMES:
        assert s("plainsight_turns_total", {"outcome": o}) == 0
    for r in DLQ_REASONS:
        assert s("plainsight_dlq_total", {"reason": r}) == 0
    for st in LLM_STATUSES:
        assert s("plainsight_llm_requests_total", {"status": st}) == 0
    for k in TOKEN_KINDS:
        assert s("plainsight_llm_tokens_total", {"kind": k}) == 0
    for label in Settings().detection.labels:
        assert s("plainsight_entities_total", {"label": label, "source": "ner"}) == 0
    assert s("plainsight_e2e_latency_seconds_count") == 0
    assert s("plainsight_llm_cost_usd_total") == 0
    assert s("plainsight_degraded_total") == 0
    assert s("plainsight_active_sessions") == 0
    assert s("plainsight_ready") == 0
    # lag pre-created for every input partition plainsight creates
    for p in range(Settings().kafka.partitions):
        assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": str(p)}) == 0
    info = [x for x in fams["plainsight_build_info"].samples]
    assert len(info) == 1 and info[0].value == 1
    assert set(info[0].labels) == {"version", "python", "engine", "revision"}
    assert info[0].labels["engine"] == "cascade"


def test_dlq_reasons_match_the_wire_contract() -> None:
    assert set(DLQ_REASONS) - {"other"} == set(DlqReason.__args__)


def test_recording_methods(metrics: Metrics) -> None:
    s = metrics.sample
    metrics.turn("ok")
    metrics.turn("ok", 2)
    metrics.turn("degraded")
    metrics.dlq("schema")
    metrics.degraded()
    metrics.entity("NAME", "ner")
    metrics.entity("email", "email")  # label case-folded
    metrics.llm_request("ok")
    metrics.llm_tokens("prompt", 120)
    metrics.llm_tokens("completion", 30)
    metrics.llm_cost(0.0125)
    metrics.llm_usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.001)
    metrics.observe_stage("fast_pass", 0.004)
    metrics.observe_stages_ms({"parse": 0.2, "llm": 850.0, "not_a_stage_but_ignored": 1.0})
    with metrics.time_stage("produce"):
        pass
    metrics.observe_e2e(0.012)
    assert metrics.observe_e2e_since(1000.0, now=1000.5) == pytest.approx(0.5)
    metrics.observe_e2e_since(2000.0, now=1999.0)  # clock skew → 0, not negative
    metrics.set_lag("chat.turns", 2, 42)
    metrics.set_active_sessions(7)

    assert s("plainsight_turns_total", {"outcome": "ok"}) == 3
    assert s("plainsight_turns_total", {"outcome": "degraded"}) == 1
    assert s("plainsight_turns_total", {"outcome": "dlq"}) == 0  # dlq() doesn't touch turns_total
    assert s("plainsight_dlq_total", {"reason": "schema"}) == 1
    assert s("plainsight_degraded_total") == 1
    assert s("plainsight_entities_total", {"label": "NAME", "source": "ner"}) == 1
    assert s("plainsight_entities_total", {"label": "EMAIL", "source": "email"}) == 1
    assert s("plainsight_llm_requests_total", {"status": "ok"}) == 1
    assert s("plainsight_llm_tokens_total", {"kind": "prompt"}) == 130
    assert s("plainsight_llm_tokens_total", {"kind": "completion"}) == 35
    assert s("plainsight_llm_cost_usd_total") == pytest.approx(0.0135)
    assert s("plainsight_stage_latency_seconds_count", {"stage": "fast_pass"}) == 1
    assert s("plainsight_stage_latency_seconds_sum", {"stage": "llm"}) == pytest.approx(0.85)
    assert s("plainsight_stage_latency_seconds_count", {"stage": "produce"}) == 1
    assert s("plainsight_e2e_latency_seconds_count") == 3
    assert s("plainsight_e2e_latency_seconds_bucket", {"le": "0.0"}) is None  # no 0 bucket
    assert s("plainsight_e2e_latency_seconds_bucket", {"le": "0.001"}) == 1  # the skewed one
    assert s("plainsight_e2e_latency_seconds_sum") == pytest.approx(0.512)
    assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "2"}) == 42
    assert s("plainsight_active_sessions") == 7


def test_unknown_label_values_map_to_other_and_never_leak(metrics: Metrics) -> None:
    pii = "alice.smith@example.com"
    session = "session-4f1c2a"
    metrics.turn(pii)
    metrics.dlq(pii)
    metrics.entity(pii, session)
    metrics.entity("NAME", pii)
    metrics.llm_request(pii)
    metrics.observe_stage(session, 0.1)
    metrics.llm_tokens(pii, 5)  # unknown token kind: dropped
    metrics.set_lag(session, 1, 3)
    metrics.set_lag("chat.turns", 10**9, 3)
    metrics.set_lag("chat.turns", "7", 3)  # type: ignore[arg-type]
    body = metrics.exposition()[0].decode()
    assert pii not in body and session not in body and "alice" not in body
    s = metrics.sample
    assert s("plainsight_turns_total", {"outcome": "other"}) == 1
    assert s("plainsight_dlq_total", {"reason": "other"}) == 1
    assert s("plainsight_entities_total", {"label": "other", "source": "other"}) == 1
    assert s("plainsight_entities_total", {"label": "NAME", "source": "other"}) == 1
    assert s("plainsight_llm_requests_total", {"status": "other"}) == 1
    assert s("plainsight_stage_latency_seconds_count", {"stage": "other"}) == 1
    assert s("plainsight_consumer_lag", {"topic": "other", "partition": "1"}) == 3
    assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "other"}) == 3


def test_bad_amounts_never_raise(metrics: Metrics) -> None:
    metrics.turn("ok", -1)
    metrics.llm_cost("nan-ish")  # type: ignore[arg-type]
    metrics.llm_cost(-3)
    metrics.llm_tokens("prompt", -4)
    metrics.observe_e2e("x")  # type: ignore[arg-type]
    metrics.observe_stage("parse", None)  # type: ignore[arg-type]
    metrics.set_active_sessions("many")  # type: ignore[arg-type]
    metrics.set_lag("chat.turns", 0, "x")  # type: ignore[arg-type]
    assert metrics.sample("plainsight_turns_total", {"outcome": "ok"}) == 0
    assert metrics.sample("plainsight_llm_cost_usd_total") == 0


def test_reset_lag_for_revoked_partitions(metrics: Metrics) -> None:
    metrics.set_lag("chat.turns", 0, 5)
    metrics.set_lag("chat.turns", 1, 6)
    metrics.set_lag("tutor.replies", 1, 7)
    metrics.reset_lag("chat.turns", [1])
    s = metrics.sample
    assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "0"}) == 5
    assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "1"}) == 0
    metrics.reset_lag()
    assert s("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "0"}) == 0
    assert s("plainsight_consumer_lag", {"topic": "tutor.replies", "partition": "1"}) == 0


def test_registries_are_independent() -> None:
    a, b = Metrics(), Metrics()
    a.turn("ok")
    assert a.sample("plainsight_turns_total", {"outcome": "ok"}) == 1
    assert b.sample("plainsight_turns_total", {"outcome": "ok"}) == 0


def test_http_endpoints(metrics: Metrics) -> None:
    with MetricsServer(metrics, "127.0.0.1", 0) as server:
        assert server.port > 0
        code, ctype, body = get(server.url + "/metrics")
        assert code == 200 and ctype.startswith("text/plain")
        assert "plainsight_turns_total" in body
        assert get(server.url + "/healthz")[0] == 200
        assert get(server.url + "/readyz")[0] == 503
        metrics.set_ready(True)
        assert get(server.url + "/readyz")[0] == 200
        assert metrics.sample("plainsight_ready") == 1
        metrics.set_ready(False)
        assert get(server.url + "/readyz")[0] == 503
        assert get(server.url + "/nope")[0] == 404
        # OpenMetrics negotiation (what Prometheus asks for)
        req = urllib.request.Request(
            server.url + "/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"}
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.headers["Content-Type"].startswith("application/openmetrics-text")
            assert r.read().decode().rstrip().endswith("# EOF")
    # stopped: nothing listens any more
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.settimeout(5)
        sock.connect(("127.0.0.1", server.port))


def test_port_in_use_is_a_clear_error(metrics: Metrics) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        with pytest.raises(MetricsServerError, match=f"127.0.0.1:{port}"):
            MetricsServer(metrics, "127.0.0.1", port).start()


def test_cli_helpers_and_settings() -> None:
    p = argparse.ArgumentParser()
    add_metrics_arguments(p)
    unset = metrics_overrides(p.parse_args([]))
    assert load_settings(**unset).metrics.port == 9464
    s = load_settings(**metrics_overrides(p.parse_args(["--metrics-port", "0", "--metrics-host", "127.0.0.1"])))
    assert (s.metrics.port, s.metrics.host, s.metrics.enabled) == (0, "127.0.0.1", True)
    assert load_settings(**metrics_overrides(p.parse_args(["--no-metrics"]))).metrics.enabled is False
    with pytest.raises(SystemExit):
        metrics_overrides(p.parse_args(["--metrics-port", "70000"]))

    m, server = start_metrics(s)
    try:
        assert server is not None and server.port > 0
        assert get(server.url + "/healthz")[0] == 200
    finally:
        server.stop()
    m2, none = start_metrics(load_settings(metrics={"enabled": False}))
    assert none is None and m2.sample("plainsight_ready") == 0


def test_env_overrides_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAINSIGHT_METRICS__PORT", "9999")
    p = argparse.ArgumentParser()
    add_metrics_arguments(p)
    assert load_settings(**metrics_overrides(p.parse_args([]))).metrics.port == 9999
    assert load_settings(**metrics_overrides(p.parse_args(["--metrics-port", "1234"]))).metrics.port == 1234


def test_topics_learned_from_assignment_up_to_a_cap() -> None:
    from plainsight.middleware.metrics import MAX_TOPICS

    m = Metrics()  # no topics configured (e.g. a caller that didn't use from_settings)
    m.set_lag("chat.turns", 0, 3)
    assert m.sample("plainsight_consumer_lag", {"topic": "chat.turns", "partition": "0"}) == 3
    m.set_lag("not a topic name!", 0, 1)  # not a valid Kafka topic name
    assert m.sample("plainsight_consumer_lag", {"topic": "other", "partition": "0"}) == 1
    for i in range(MAX_TOPICS + 5):
        m.set_lag(f"t{i}", 0, 1)
    topics = {s.labels["topic"] for f in families(m).values() if f.name == "plainsight_consumer_lag" for s in f.samples}
    assert len(topics - {"other"}) == MAX_TOPICS


def test_llm_status_aliases(metrics: Metrics) -> None:
    for st in ("http_5xx", "http_400", "outage", "unaligned", "rate_limit", "TIMEOUT"):
        metrics.llm_request(st)
    s = metrics.sample
    assert s("plainsight_llm_requests_total", {"status": "error"}) == 3
    assert s("plainsight_llm_requests_total", {"status": "invalid_response"}) == 1
    assert s("plainsight_llm_requests_total", {"status": "rate_limited"}) == 1
    assert s("plainsight_llm_requests_total", {"status": "timeout"}) == 1


def test_sync_llm_stats_exports_deltas(metrics: Metrics) -> None:
    from collections import Counter

    class Stats:  # the shape of middleware.llm.stats.LLMStats
        def __init__(self) -> None:
            self.requests = Counter()
            self.request_errors = Counter()
            self.prompt_tokens = Counter()
            self.completion_tokens = Counter()

        def cost_usd(self) -> float:
            return sum(self.prompt_tokens.values()) / 1e6 * 0.15 + sum(self.completion_tokens.values()) / 1e6 * 0.6

    st = Stats()
    st.requests.update({"marking": 10, "verifier": 2})
    st.request_errors.update({"timeout": 1, "http_5xx": 2})
    st.prompt_tokens.update({"marking": 1000})
    st.completion_tokens.update({"marking": 100})
    metrics.sync_llm_stats(st)
    metrics.sync_llm_stats(st)  # idempotent without growth
    s = metrics.sample
    assert s("plainsight_llm_requests_total", {"status": "ok"}) == 9
    assert s("plainsight_llm_requests_total", {"status": "timeout"}) == 1
    assert s("plainsight_llm_requests_total", {"status": "error"}) == 2
    assert s("plainsight_llm_tokens_total", {"kind": "prompt"}) == 1000
    assert s("plainsight_llm_cost_usd_total") == pytest.approx(st.cost_usd())
    st.requests["marking"] += 5
    st.prompt_tokens["marking"] += 500
    metrics.sync_llm_stats(st)
    assert s("plainsight_llm_requests_total", {"status": "ok"}) == 14
    assert s("plainsight_llm_tokens_total", {"kind": "prompt"}) == 1500
    assert s("plainsight_llm_cost_usd_total") == pytest.approx(st.cost_usd())
