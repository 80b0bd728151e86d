"""Prometheus metrics for plainsight. The HTTP server that exposes them is
``middleware/metrics_server.py``; the ``serve`` flags are in ``middleware/commands/metrics_args.py``.

Usage (the Kafka worker)::

    from plainsight.middleware.metrics import Metrics
    from plainsight.middleware.metrics_server import MetricsServer

    metrics = Metrics.from_settings(settings)        # own CollectorRegistry, everything at zero
    server = MetricsServer(metrics, settings.metrics.host, settings.metrics.port).start()
    ...
    metrics.set_ready(True)                           # /readyz → 200 from now on
    with metrics.time_stage("parse"):
        turn = parse(record)
    metrics.observe_stage("fast_pass", 0.004)
    metrics.entity("NAME", "ner")
    metrics.turn("ok")
    metrics.observe_e2e_since(turn.sent_at)           # once the outputs are acknowledged
    ...
    server.stop()

Rules this module enforces:

* **No PII, no session ids in labels.** Every label value comes from a closed set; anything
  else is recorded under ``"other"`` (and never echoed in logs or errors).
* **Everything exists from start-up.** All metrics and every known label combination are
  created at zero in ``__init__``, so dashboards and alerts see series before the first event.
* Each recording method touches exactly one metric. In particular ``turn("dlq")`` and
  ``dlq(reason)`` are separate calls, as are ``turn("degraded")`` and ``degraded()``.

Metric names (see ``monitoring/README.md`` for what the dashboard and alerts do with them):

=======================================  =========  =============================================
``plainsight_e2e_latency_seconds``       histogram  input ``sent_at`` → outputs acknowledged
``plainsight_stage_latency_seconds``     histogram  ``stage`` ∈ STAGES
``plainsight_turns_total``               counter    ``outcome`` ∈ OUTCOMES
``plainsight_entities_total``            counter    ``label`` ∈ entity labels, ``source`` ∈ sources
``plainsight_llm_requests_total``        counter    ``status`` ∈ LLM_STATUSES
``plainsight_llm_tokens_total``          counter    ``kind`` ∈ TOKEN_KINDS
``plainsight_llm_cost_usd_total``        counter    USD spent on LLM calls (estimated)
``plainsight_degraded_total``            counter    outputs emitted in degraded mode
``plainsight_dlq_total``                 counter    ``reason`` ∈ DLQ_REASONS
``plainsight_state_events_total``        counter    ``event`` ∈ STATE_EVENTS (caps, erasures, skipped keys)
``plainsight_consumer_lag``              gauge      ``topic`` ∈ configured topics, ``partition``
``plainsight_active_sessions``           gauge      sessions held in memory
``plainsight_ready``                     gauge      1 when the worker is ready (as /readyz)
``plainsight_insecure_dev_keys``         gauge      1 while running with the public dev secret/key
``plainsight_build_info``                gauge      always 1; ``version``, ``python``, ``engine``, ``revision``
=======================================  =========  =============================================

Plus the standard ``process_*``, ``python_info`` and ``python_gc_*`` collectors.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import threading
import time
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from .schemas import DlqReason

if TYPE_CHECKING:  # pragma: no cover
    from .config import Settings

log = logging.getLogger(__name__)

NAMESPACE = "plainsight"
OTHER = "other"

# --------------------------------------------------------------------------- closed label sets

#: Pipeline stages timed by ``plainsight_stage_latency_seconds``.
STAGES: tuple[str, ...] = ("parse", "fast_pass", "llm", "verifier", "surrogate", "produce", OTHER)

#: Outcomes of one consumed record (``plainsight_turns_total``).
#: ok = processed normally; degraded = emitted with ``degraded=true`` (e.g. LLM unavailable);
#: dlq = dead-lettered; reply = a tutor reply re-identified; duplicate = skipped as already seen.
OUTCOMES: tuple[str, ...] = ("ok", "degraded", "dlq", "reply", "duplicate", OTHER)

#: The dead-letter reasons of the message contract (``middleware.schemas.DlqReason``).
DLQ_REASONS: tuple[str, ...] = (*typing.get_args(DlqReason), OTHER)
#: ``capped_value``: a value left unmapped past ``session.max_entries``; ``bad_state_key``: a state
#: record skipped (key not UTF-8); ``forgotten``: a forget record handled; ``deadline``: a turn
#: past ``reverse.turn_deadline_s``; ``rollback_refused``: an older sealed state refused
STATE_EVENTS: tuple[str, ...] = ("capped_value", "bad_state_key", "forgotten", "deadline", "rollback_refused", OTHER)

#: LLM request results (``plainsight_llm_requests_total``).
LLM_STATUSES: tuple[str, ...] = (
    "ok",
    "error",  # transport / server error
    "timeout",
    "rate_limited",
    "invalid_response",  # answered, but not parseable / schema-invalid
    "circuit_open",  # not sent: circuit breaker open
    "budget_exceeded",  # not sent: cost/token budget exhausted
    OTHER,
)

TOKEN_KINDS: tuple[str, ...] = ("prompt", "completion")

#: Entity labels: the core PII labels plus the indirect identifiers (off by default).
ENTITY_LABELS: tuple[str, ...] = (
    "NAME",
    "EMAIL",
    "PHONE",
    "URL",
    "USERNAME",
    "ID_NUM",
    "ADDRESS",
    "ORG",
    "LOCATION",
    "DATE",
    OTHER,
)

#: Entity sources = recognizer names (``Span.source``). Unknown names count as "other";
#: pass ``entity_sources=`` to ``Metrics`` to extend the set.
ENTITY_SOURCES: tuple[str, ...] = (
    "email",
    "email_obfuscated",
    "phone",
    "phone_spelled",
    "url",
    "username",
    "id_num",
    "address",
    "pattern",
    "names",
    "lexicon",
    "ner",
    "gazetteer",
    "context",
    "memory",
    "role",
    "llm",
    "verifier",
    "presidio",
    OTHER,
)

#: Max partition number accepted as a label value (anything else → "other").
MAX_PARTITION_LABEL = 4096
#: Topic names come from the consumer's assignment (configuration, never message content).
#: With ``topics=`` given (``Metrics.from_settings``) the set is closed; a bare ``Metrics()``
#: learns up to this many valid topic names, after which unknown topics count as "other".
MAX_TOPICS = 16
_TOPIC_RE = re.compile(r"^[A-Za-z0-9._-]{1,249}$")

#: Common spellings of LLM failures mapped onto LLM_STATUSES (anything "http_*" → "error").
_LLM_STATUS_ALIASES = {
    "success": "ok",
    "outage": "error",
    "connection_error": "error",
    "server_error": "error",
    "rate_limit": "rate_limited",
    "429": "rate_limited",
    "http_429": "rate_limited",
    "unaligned": "invalid_response",
    "invalid": "invalid_response",
    "bad_json": "invalid_response",
    "circuit": "circuit_open",
    "budget": "budget_exceeded",
}

#: End-to-end latency buckets: 1 ms … 30 s, with edges at the SLO thresholds (30 ms, 1 s).
E2E_BUCKETS: tuple[float, ...] = (
    0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075,
    0.1, 0.15, 0.25, 0.5, 0.75, 1.0, 1.5, 2.5, 5.0, 10.0, 20.0, 30.0,
)  # fmt: skip

#: Per-stage buckets: 50 µs … 30 s (fast stages are sub-millisecond, the LLM takes seconds).
STAGE_BUCKETS: tuple[float, ...] = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02,
    0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip

_SAFE_VALUE = re.compile(r"[^0-9A-Za-z._+\-]")


def _safe_info(value: Any, limit: int = 64) -> str:
    """Build-info label values: printable identifier characters only, bounded length."""
    s = _SAFE_VALUE.sub("_", str(value))[:limit]
    return s or "unknown"


def _closed(value: Any, allowed: frozenset[str], *, casefold: bool = False) -> str:
    if not isinstance(value, str):
        return OTHER
    v = value.strip()
    if casefold:
        v = v.upper()
    return v if v in allowed else OTHER


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("plainsight")
    except Exception:  # pragma: no cover - not installed
        from . import __version__

        return __version__


# --------------------------------------------------------------------------- metrics


class Metrics:
    """All plainsight metrics, registered in their own :class:`CollectorRegistry`.

    Thread-safe (prometheus-client metrics are). Label values outside the closed sets are
    recorded as ``"other"``; negative amounts are ignored; nothing here raises on bad input,
    so instrumentation can never take the worker down.
    """

    #: (a :class:`NoMetrics` says False: callers may skip work that only feeds metrics)
    enabled = True

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        topics: Iterable[str] = (),
        partitions: int = 0,
        entity_labels: Iterable[str] = (),
        entity_sources: Iterable[str] = (),
        engine: str = "cascade",
        version: str | None = None,
        revision: str | None = None,
        process_collectors: bool = True,
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        ns = NAMESPACE

        self._labels = frozenset(ENTITY_LABELS) | frozenset(_safe_info(x, 32) for x in entity_labels)
        self._sources = frozenset(ENTITY_SOURCES) | frozenset(_safe_info(x, 32) for x in entity_sources)
        self._topics = {t for t in topics if isinstance(t, str) and _TOPIC_RE.match(t)}
        # with configured topics the set is closed; without (bare ``Metrics()``), learn a few
        self._learn_topics = not self._topics
        self._stages = frozenset(STAGES)
        self._outcomes = frozenset(OUTCOMES)
        self._dlq_reasons = frozenset(DLQ_REASONS)
        self._llm_statuses = frozenset(LLM_STATUSES)
        self._token_kinds = frozenset(TOKEN_KINDS)
        self._ready_flag = False
        self._lock = threading.RLock()
        self._llm_seen: dict[str, float] = {}

        self.e2e_latency = Histogram(
            "e2e_latency_seconds",
            "Seconds from an input turn's sent_at to its outputs being acknowledged by Kafka.",
            namespace=ns,
            buckets=E2E_BUCKETS,
            registry=r,
        )
        self.stage_latency = Histogram(
            "stage_latency_seconds",
            "Seconds spent in one pipeline stage for one turn.",
            ["stage"],
            namespace=ns,
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.turns = Counter(
            "turns", "Consumed records by outcome.", ["outcome"], namespace=ns, registry=r
        )
        self.entities = Counter(
            "entities",
            "Entities replaced, by label and by the recognizer that found them.",
            ["label", "source"],
            namespace=ns,
            registry=r,
        )
        self.llm_requests = Counter(
            "llm_requests", "LLM requests by result.", ["status"], namespace=ns, registry=r
        )
        self.llm_tokens_counter = Counter(
            "llm_tokens", "LLM tokens used, by kind (prompt, completion).", ["kind"], namespace=ns, registry=r
        )
        self.llm_cost_counter = Counter(
            "llm_cost_usd", "Estimated LLM spend in US dollars.", namespace=ns, registry=r
        )
        self.degraded_outputs = Counter(
            "degraded",
            "Outputs emitted in degraded mode (a stage was skipped or failed; local detection only).",
            namespace=ns,
            registry=r,
        )
        self.dlq_records = Counter(
            "dlq", "Records sent to the dead-letter topic, by reason.", ["reason"], namespace=ns, registry=r
        )
        self.state_events = Counter(
            "state_events", "Session-state events: values past the entry cap, state keys skipped, sessions "
            "forgotten, turns past their deadline, rollbacks refused.", ["event"], namespace=ns, registry=r
        )
        self.consumer_lag = Gauge(
            "consumer_lag",
            "Records behind the partition's high watermark (this worker's assigned partitions).",
            ["topic", "partition"],
            namespace=ns,
            registry=r,
        )
        self.active_sessions = Gauge(
            "active_sessions", "Sessions whose state is held in memory.", namespace=ns, registry=r
        )
        self.ready_gauge = Gauge(
            "ready", "1 when the worker is ready to process traffic (same as /readyz), else 0.",
            namespace=ns, registry=r,
        )  # fmt: skip
        self.insecure_dev_keys = Gauge(
            "insecure_dev_keys",
            "1 while the worker runs with the public development secret and state key "
            "(--insecure-dev-keys): anyone can re-identify its surrogates and read its state.",
            namespace=ns, registry=r,
        )  # fmt: skip
        self._insecure_flag = False
        self.build_info = Gauge(
            "build_info",
            "Build information (value always 1).",
            ["version", "python", "engine", "revision"],
            namespace=ns,
            registry=r,
        )

        # every metric and known label combination exists from start-up, at zero
        for s in STAGES:
            self.stage_latency.labels(stage=s)
        for o in OUTCOMES:
            self.turns.labels(outcome=o)
        for lab in sorted(self._labels):
            for src in sorted(self._sources):
                self.entities.labels(label=lab, source=src)
        for st in LLM_STATUSES:
            self.llm_requests.labels(status=st)
        for k in TOKEN_KINDS:
            self.llm_tokens_counter.labels(kind=k)
        for reason in DLQ_REASONS:
            self.dlq_records.labels(reason=reason)
        for t in sorted(self._topics):
            for p in range(max(0, min(int(partitions), MAX_PARTITION_LABEL))):
                self.consumer_lag.labels(topic=t, partition=str(p)).set(0)
        self.active_sessions.set(0)
        self.ready_gauge.set(0)
        self.insecure_dev_keys.set(0)
        self.build_info.labels(
            version=_safe_info(version or _package_version()),
            python=_safe_info(platform.python_version()),
            engine=_safe_info(engine),
            revision=_safe_info(revision or os.environ.get("PLAINSIGHT_REVISION") or "unknown"),
        ).set(1)

        if process_collectors:
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)

    @classmethod
    def from_settings(cls, settings: Settings, registry: CollectorRegistry | None = None, **kw: Any) -> Metrics:
        """Metrics whose closed sets (topics, partitions, entity labels, engine) come from settings."""
        t = settings.topics
        kw.setdefault("topics", (t.input, t.replies_in))
        kw.setdefault("partitions", settings.kafka.partitions)
        # labels and sources of the recognizer registry (configured recognizers included): a closed set
        from .pipeline import detection_registry

        reg = detection_registry(settings)
        kw.setdefault("entity_labels", (*settings.detection.labels, *reg.added_labels))
        kw.setdefault("entity_sources", reg.sources)
        kw.setdefault("engine", settings.detection.engine)
        return cls(registry, **kw)

    # ------------------------------------------------------------------ latency

    def observe_e2e(self, seconds: float) -> None:
        """End-to-end latency of one turn (negative values, e.g. from clock skew, count as 0)."""
        try:
            self.e2e_latency.observe(max(0.0, float(seconds)))
        except (TypeError, ValueError):
            pass

    def observe_e2e_since(self, sent_at: float, now: float | None = None) -> float:
        """Observe ``now - sent_at`` (epoch seconds, as in ``InputTurn.sent_at``); returns it."""
        try:
            dt = (time.time() if now is None else now) - float(sent_at)
        except (TypeError, ValueError):
            return 0.0
        self.observe_e2e(dt)
        return max(0.0, dt)

    def observe_stage(self, stage: str, seconds: float) -> None:
        """Time spent in one stage for one turn (stage outside STAGES → "other")."""
        try:
            self.stage_latency.labels(stage=_closed(stage, self._stages)).observe(max(0.0, float(seconds)))
        except (TypeError, ValueError):
            pass

    def observe_stages_ms(self, timings_ms: dict[str, float]) -> None:
        """Record a ``TurnResult.timings_ms`` / ``OutputTurn.timings_ms`` mapping (milliseconds)."""
        for stage, ms in (timings_ms or {}).items():
            if stage in self._stages:
                try:
                    self.observe_stage(stage, float(ms) / 1000.0)
                except (TypeError, ValueError):
                    pass

    @contextmanager
    def time_stage(self, stage: str) -> Iterator[None]:
        """``with metrics.time_stage("llm"): ...`` — observes the block's duration (also on error)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.observe_stage(stage, time.perf_counter() - t0)

    # ------------------------------------------------------------------ counters

    def turn(self, outcome: str, n: int = 1) -> None:
        """Count consumed records by outcome (ok, degraded, dlq, reply, duplicate)."""
        if n > 0:
            self.turns.labels(outcome=_closed(outcome, self._outcomes)).inc(n)

    def entity(self, label: str, source: str, n: int = 1) -> None:
        """Count replaced entities. ``label``/``source`` outside the known sets → "other"."""
        if n > 0:
            self.entities.labels(
                label=_closed(label, self._labels, casefold=True), source=_closed(source, self._sources)
            ).inc(n)

    def entities_from(self, items: Iterable[Any]) -> None:
        """Count a batch of entities: objects with ``.label``/``.source`` (Span, EntityOut)."""
        for it in items or ():
            self.entity(getattr(it, "label", OTHER), getattr(it, "source", OTHER))

    def dlq(self, reason: str, n: int = 1) -> None:
        """Count a dead-lettered record (does not touch ``turns_total``; call ``turn("dlq")`` too)."""
        if n > 0:
            self.dlq_records.labels(reason=_closed(reason, self._dlq_reasons)).inc(n)

    def state_event(self, event: str, n: int = 1) -> None:
        if n > 0:
            self.state_events.labels(event=_closed(event, frozenset(STATE_EVENTS))).inc(n)

    def degraded(self, n: int = 1) -> None:
        """Count an output emitted in degraded mode (does not touch ``turns_total``)."""
        if n > 0:
            self.degraded_outputs.inc(n)

    def llm_request(self, status: str, n: int = 1) -> None:
        """Count LLM requests by result (see LLM_STATUSES; "http_5xx"-style codes → "error")."""
        if n > 0:
            self.llm_requests.labels(status=self._llm_status(status)).inc(n)

    def _llm_status(self, status: Any) -> str:
        if not isinstance(status, str):
            return OTHER
        s = status.strip().lower()
        if s in self._llm_statuses:
            return s
        if s in _LLM_STATUS_ALIASES:
            return _LLM_STATUS_ALIASES[s]
        if s.startswith("http_"):
            return "error"
        return OTHER

    def llm_tokens(self, kind: str, n: int) -> None:
        """Count LLM tokens; ``kind`` is "prompt" or "completion" (other kinds are dropped)."""
        if kind in self._token_kinds and isinstance(n, (int, float)) and n > 0:
            self.llm_tokens_counter.labels(kind=kind).inc(n)

    def llm_cost(self, usd: float) -> None:
        """Add estimated LLM spend in US dollars."""
        try:
            usd = float(usd)
        except (TypeError, ValueError):
            return
        if usd > 0:
            self.llm_cost_counter.inc(usd)

    def llm_usage(self, prompt_tokens: int = 0, completion_tokens: int = 0, cost_usd: float = 0.0) -> None:
        """One call's usage: tokens of both kinds and its cost."""
        self.llm_tokens("prompt", prompt_tokens)
        self.llm_tokens("completion", completion_tokens)
        self.llm_cost(cost_usd)

    def sync_llm_stats(self, stats: Any) -> None:
        """Export an ``middleware.llm.stats.LLMStats`` (cumulative plain counters) as increments.

        Call it periodically (e.g. from the worker's gauge/commit loop) with the same stats
        object; only the growth since the previous call is added. Requests = HTTP attempts;
        ``request_errors`` (by cause: timeout, rate_limited, outage, http_5xx, http_4xx…) map onto
        LLM_STATUSES; the remainder are "ok".
        """
        try:
            requests = float(sum(getattr(stats, "requests", {}).values()))
            errors = {str(k): float(v) for k, v in getattr(stats, "request_errors", {}).items()}
            prompt = float(sum(getattr(stats, "prompt_tokens", {}).values()))
            completion = float(sum(getattr(stats, "completion_tokens", {}).values()))
            cost_fn = getattr(stats, "cost_usd", None)
            cost = float(cost_fn()) if callable(cost_fn) else 0.0
        except (TypeError, ValueError, AttributeError):
            return
        with self._lock:
            seen = self._llm_seen

            def delta(key: str, value: float) -> float:
                d = value - seen.get(key, 0.0)
                seen[key] = max(value, seen.get(key, 0.0))
                return d if d > 0 else 0.0

            ok = delta("ok", max(0.0, requests - sum(errors.values())))
            if ok:
                self.llm_request("ok", ok)
            for cause, v in errors.items():
                d = delta("err:" + cause, v)
                if d:
                    self.llm_request(cause, d)
            self.llm_tokens("prompt", delta("prompt", prompt))
            self.llm_tokens("completion", delta("completion", completion))
            self.llm_cost(delta("cost", cost))

    # ------------------------------------------------------------------ gauges

    def set_lag(self, topic: str, partition: int, lag: float) -> None:
        """Consumer lag of one assigned partition (topic outside the configured set → "other")."""
        t = self._topic(topic)
        p = str(partition) if isinstance(partition, int) and 0 <= partition < MAX_PARTITION_LABEL else OTHER
        try:
            self.consumer_lag.labels(topic=t, partition=p).set(max(0.0, float(lag)))
        except (TypeError, ValueError):
            pass

    def reset_lag(self, topic: str | None = None, partitions: Iterable[int] | None = None) -> None:
        """Set lag to 0 for revoked partitions (all of ``topic``, or everything if no topic):
        another worker reports them now, and a stale value would be counted twice."""
        with self._lock:
            for labels, _ in list(_gauge_children(self.consumer_lag)):
                t, p = labels
                if topic is not None and t != self._topic(topic):
                    continue
                if partitions is not None and p not in {str(x) for x in partitions}:
                    continue
                self.consumer_lag.labels(topic=t, partition=p).set(0)

    def _topic(self, topic: Any) -> str:
        if topic in self._topics:
            return topic
        if self._learn_topics and isinstance(topic, str) and _TOPIC_RE.match(topic) and topic != OTHER:
            with self._lock:
                if len(self._topics) < MAX_TOPICS:
                    self._topics.add(topic)
                    return topic
        return OTHER

    def set_active_sessions(self, n: int) -> None:
        try:
            self.active_sessions.set(max(0, int(n)))
        except (TypeError, ValueError):
            pass

    def set_ready(self, ready: bool) -> None:
        self._ready_flag = bool(ready)
        self.ready_gauge.set(1 if ready else 0)

    @property
    def is_ready(self) -> bool:
        return self._ready_flag

    def set_insecure_dev_keys(self, on: bool) -> None:
        """Report ``--insecure-dev-keys`` (the gauge, and a warning in the /readyz body)."""
        self._insecure_flag = bool(on)
        self.insecure_dev_keys.set(1 if on else 0)

    @property
    def insecure(self) -> bool:
        return self._insecure_flag

    # ------------------------------------------------------------------ exposition

    def exposition(self, accept: str | None = None) -> tuple[bytes, str]:
        """The registry in the text format the client asked for: (body, content type)."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type

    def sample(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """Current value of one sample (for tests and the CLI), e.g. ``sample("plainsight_turns_total",
        {"outcome": "ok"})``."""
        return self.registry.get_sample_value(name, labels or {})


def _gauge_children(g: Gauge) -> list[tuple[tuple[str, ...], Any]]:
    # prometheus-client keeps labelled children in ``_metrics``; no public iterator exists.
    with g._lock:  # noqa: SLF001
        return list(g._metrics.items())  # noqa: SLF001


class NoMetrics:
    """Metrics off (a worker without ``metrics``): every recording call does nothing."""

    enabled = False

    def observe_e2e(self, seconds: float) -> None: ...
    def observe_stage(self, stage: str, seconds: float) -> None: ...
    def observe_stages_ms(self, timings_ms: dict[str, float]) -> None: ...
    def turn(self, outcome: str, n: int = 1) -> None: ...
    def entity(self, label: str, source: str, n: int = 1) -> None: ...
    def dlq(self, reason: str, n: int = 1) -> None: ...
    def state_event(self, event: str, n: int = 1) -> None: ...
    def degraded(self, n: int = 1) -> None: ...
    def sync_llm_stats(self, stats: Any) -> None: ...
    def set_lag(self, topic: str, partition: int, lag: float) -> None: ...
    def reset_lag(self, topic: str | None = None, partitions: Iterable[int] | None = None) -> None: ...
    def set_active_sessions(self, n: int) -> None: ...
    def set_ready(self, ready: bool) -> None: ...


#: what a component records into: the real metrics or the null object
MetricsSink = typing.Union[Metrics, NoMetrics]
