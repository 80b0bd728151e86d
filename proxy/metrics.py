"""Prometheus metrics of the proxy (``GET /metrics``). Closed label sets, no session ids, no text:

* ``plainsight_proxy_requests_total{outcome, stream}`` — outcome in :data:`OUTCOMES`;
* ``plainsight_proxy_refused_total{reason, client}`` — reason in :data:`REASONS`, client a name from
  the clients file (operator-chosen), ``local`` or ``unknown``;
* ``plainsight_proxy_added_seconds{stream}`` — from the request's arrival to the upstream call;
* ``plainsight_proxy_ttft_overhead_seconds`` — streams: added latency plus the delay between the
  upstream's first content delta and the client's;
* ``plainsight_proxy_after_seconds{stream}`` — plain replies: re-identification after the upstream answered;
* ``plainsight_proxy_held_chars`` — per stream, the most characters held back at once;
* ``plainsight_proxy_upstream_seconds{stream}`` — the upstream's own time.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

OUTCOMES = ("ok", "upstream_error", "refused", "failed_closed", "cancelled", "upstream_unreachable")
REASONS = ("unauthorized", "invalid_json", "invalid_request", "body_too_large", "max_messages",
           "max_message_chars", "max_tool_arg_depth", "unsupported_content", "session_required",
           "rate_limited", "concurrency", "stream_duration", "not_found")
_FAST = (0.0002, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)


class ProxyMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.requests = Counter("plainsight_proxy_requests", "Proxy requests by outcome", ["outcome", "stream"], registry=r)
        self.refused = Counter("plainsight_proxy_refused", "Refused requests by reason and client", ["reason", "client"],
                               registry=r)
        self.added = Histogram("plainsight_proxy_added_seconds", "Time added before the upstream call", ["stream"],
                               buckets=_FAST, registry=r)
        self.ttft = Histogram("plainsight_proxy_ttft_overhead_seconds", "Streams: time-to-first-token overhead",
                              buckets=_FAST, registry=r)
        self.after = Histogram("plainsight_proxy_after_seconds", "Time after the upstream answered", ["stream"],
                               buckets=_FAST, registry=r)
        self.upstream = Histogram("plainsight_proxy_upstream_seconds", "Upstream time", ["stream"], registry=r)
        self.held = Histogram("plainsight_proxy_held_chars", "Per stream: most characters held back at once",
                              buckets=(0, 1, 2, 4, 8, 16, 32, 64, 128), registry=r)
        for o in OUTCOMES:
            for s in ("true", "false"):
                self.requests.labels(o, s)
        for s in ("true", "false"):
            self.added.labels(s)
            self.after.labels(s)
            self.upstream.labels(s)
        for reason in REASONS:
            self.refused.labels(reason, "unknown")

    def outcome(self, outcome: str, stream: bool) -> None:
        self.requests.labels(outcome if outcome in OUTCOMES else "failed_closed", "true" if stream else "false").inc()

    def refuse(self, reason: str, client: str) -> None:
        self.refused.labels(reason if reason in REASONS else "invalid_request", client).inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
