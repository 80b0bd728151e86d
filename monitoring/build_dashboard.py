#!/usr/bin/env python3
"""Generates ``monitoring/grafana/dashboards/plainsight.json`` (the Grafana dashboard).

The dashboard is code so that reviews see queries, not 2,000 lines of layout JSON. Edit this
file, then run ``python monitoring/build_dashboard.py``; ``tests/integration/cli/test_prometheus.py`` fails
if the committed JSON is out of date, and evaluates every query against a real Prometheus.

Conventions (see monitoring/README.md):

* Datasource: the ``datasource`` variable (type prometheus; provisioned uid ``prometheus``).
* ``$job`` (text box, default ``plainsight``) / ``$instance`` (All = ``.+``) select workers; every query filters on ``job=~"$job",instance=~"$instance"``.
* Rates use ``$__rate_interval``; range totals use ``$__range``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "grafana" / "dashboards" / "plainsight.json"
UID = "plainsight-main"
DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'job=~"$job",instance=~"$instance"'
RI = "$__rate_interval"
#: Bucket selectors at the SLO edges. "1|1.0": clients write le="1.0", Prometheus 3 normalises to "1".
LE_30MS = 'le=~"0.03|0.030"'
LE_1S = 'le=~"1|1.0"'
NOT_OK = 'status!="ok"'


def sel(extra: str = "") -> str:
    return "{" + SEL + ("," + extra if extra else "") + "}"


def q(expr: str, legend: str = "__auto", instant: bool = False) -> dict[str, Any]:
    return {"expr": expr, "legendFormat": legend, "range": not instant, "instant": instant}


def quantile(p: float, metric: str, by: str = "le", extra: str = "") -> str:
    return f"histogram_quantile({p}, sum by ({by}) (rate({metric}_bucket{sel(extra)}[{RI}])))"


# --------------------------------------------------------------------------- panel builders

_id = 0


def _next_id() -> int:
    global _id
    _id += 1
    return _id


def timeseries(
    title: str,
    description: str,
    targets: list[dict[str, Any]],
    *,
    unit: str = "short",
    w: int = 12,
    h: int = 8,
    stack: bool = False,
    min_: float | None = 0,
    thresholds: list[tuple[float, str]] | None = None,
    decimals: int | None = None,
) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "unit": unit,
        "custom": {
            "drawStyle": "line",
            "lineWidth": 1,
            "fillOpacity": 15 if stack else 5,
            "showPoints": "never",
            "spanNulls": False,
            "stacking": {"mode": "normal" if stack else "none", "group": "A"},
            "thresholdsStyle": {"mode": "dashed" if thresholds else "off"},
        },
        "color": {"mode": "palette-classic"},
        "thresholds": _thresholds(thresholds),
    }
    if min_ is not None:
        defaults["min"] = min_
    if decimals is not None:
        defaults["decimals"] = decimals
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"w": w, "h": h},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": targets,
    }


def stat(
    title: str,
    description: str,
    target: dict[str, Any],
    *,
    unit: str = "short",
    w: int = 4,
    h: int = 4,
    thresholds: list[tuple[float, str]] | None = None,
    mappings: list[dict[str, Any]] | None = None,
    decimals: int | None = None,
    graph: bool = True,
) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "unit": unit,
        "color": {"mode": "thresholds"},
        "thresholds": _thresholds(thresholds),
        "mappings": mappings or [],
    }
    if decimals is not None:
        defaults["decimals"] = decimals
    return {
        "type": "stat",
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"w": w, "h": h},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
            "colorMode": "background" if thresholds else "value",
            "graphMode": "area" if graph else "none",
            "justifyMode": "auto",
            "textMode": "auto",
            "orientation": "auto",
        },
        "targets": [target],
    }


def bargauge(title: str, description: str, target: dict[str, Any], *, w: int = 12, h: int = 8) -> dict[str, Any]:
    return {
        "type": "bargauge",
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"w": w, "h": h},
        "fieldConfig": {
            "defaults": {"unit": "short", "min": 0, "color": {"mode": "palette-classic"}, "thresholds": _thresholds(None)},
            "overrides": [],
        },
        "options": {
            "orientation": "horizontal",
            "displayMode": "gradient",
            "showUnfilled": True,
            "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
        },
        "targets": [target],
    }


def _thresholds(steps: list[tuple[float, str]] | None) -> dict[str, Any]:
    out: list[dict[str, Any]] = [{"color": "green", "value": None}]
    for value, color in steps or []:
        out.append({"color": color, "value": value})
    return {"mode": "absolute", "steps": out}


def row(title: str, panels: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    return title, panels


UP_MAPPING = [
    {"type": "value", "options": {"0": {"text": "DOWN", "color": "red"}, "1": {"text": "UP", "color": "green"}}}
]

# --------------------------------------------------------------------------- the dashboard

ROWS = [
    row(
        "Overview",
        [
            stat(
                "Workers up",
                "Workers Prometheus can scrape (sum of `up`). Fewer than expected → PlainsightWorkerDown.",
                q(f"sum(up{sel()})", "up"),
                thresholds=[],
                graph=False,
            ),
            stat(
                "Workers ready",
                "Workers reporting ready (`plainsight_ready`, same as /readyz): broker connected, "
                "partitions assigned, models loaded.",
                q(f"sum(plainsight_ready{sel()})", "ready"),
                graph=False,
            ),
            stat(
                "Throughput",
                "Consumed records per second, all outcomes.",
                q(f"sum(rate(plainsight_turns_total{sel()}[{RI}]))", "turns/s"),
                unit="reqps",
            ),
            stat(
                "E2E latency p99",
                "99th percentile from the input's sent_at to the outputs acknowledged by Kafka. "
                "SLO: p99 < 1 s (alert PlainsightE2ELatencySLO).",
                q(quantile(0.99, "plainsight_e2e_latency_seconds"), "p99"),
                unit="s",
                thresholds=[(0.03, "yellow"), (1, "red")],
            ),
            stat(
                "Consumer lag",
                "Records behind the high watermark, summed over all assigned partitions.",
                q(f"sum(plainsight_consumer_lag{sel()})", "lag"),
                thresholds=[(1000, "yellow"), (10000, "red")],
            ),
            stat(
                "Active sessions",
                "Sessions held in memory (LRU + TTL), summed over workers.",
                q(f"sum(plainsight_active_sessions{sel()})", "sessions"),
            ),
        ],
    ),
    row(
        "Latency",
        [
            timeseries(
                "End-to-end latency (p50 / p95 / p99)",
                "From the input turn's sent_at to its outputs acknowledged by Kafka. Includes time "
                "spent waiting in the topic, so it grows with consumer lag. Dashed lines: 30 ms "
                "(fast-path target) and 1 s (SLO).",
                [
                    q(quantile(0.5, "plainsight_e2e_latency_seconds"), "p50"),
                    q(quantile(0.95, "plainsight_e2e_latency_seconds"), "p95"),
                    q(quantile(0.99, "plainsight_e2e_latency_seconds"), "p99"),
                ],
                unit="s",
                thresholds=[(0.03, "yellow"), (1, "red")],
            ),
            timeseries(
                "Turns within SLO",
                "Share of turns whose end-to-end latency was ≤ 30 ms and ≤ 1 s (histogram bucket "
                "ratio; exact because both are bucket edges).",
                [
                    q(
                        f"sum(rate(plainsight_e2e_latency_seconds_bucket{sel(LE_30MS)}[{RI}])) "
                        f"/ sum(rate(plainsight_e2e_latency_seconds_count{sel()}[{RI}]))",
                        "≤ 30 ms",
                    ),
                    q(
                        f"sum(rate(plainsight_e2e_latency_seconds_bucket{sel(LE_1S)}[{RI}])) "
                        f"/ sum(rate(plainsight_e2e_latency_seconds_count{sel()}[{RI}]))",
                        "≤ 1 s",
                    ),
                ],
                unit="percentunit",
                min_=None,
            ),
            timeseries(
                "Stage latency p99 by stage",
                "99th percentile per pipeline stage: parse, fast_pass (local cascade), llm, verifier, "
                "surrogate, produce.",
                [q(quantile(0.99, "plainsight_stage_latency_seconds", "le, stage"), "{{stage}}")],
                unit="s",
            ),
            timeseries(
                "Stage latency p50 by stage",
                "Median per pipeline stage.",
                [q(quantile(0.5, "plainsight_stage_latency_seconds", "le, stage"), "{{stage}}")],
                unit="s",
            ),
            timeseries(
                "Mean time per turn by stage (stacked)",
                "Average seconds each stage adds to a turn (sum/count); the stack shows where the time goes.",
                [
                    q(
                        f"sum by (stage) (rate(plainsight_stage_latency_seconds_sum{sel()}[{RI}])) "
                        f"/ sum by (stage) (rate(plainsight_stage_latency_seconds_count{sel()}[{RI}]))",
                        "{{stage}}",
                    )
                ],
                unit="s",
                stack=True,
            ),
            timeseries(
                "End-to-end latency p99 by worker",
                "p99 per scraped worker (instance): spots a single slow or overloaded worker.",
                [q(quantile(0.99, "plainsight_e2e_latency_seconds", "le, instance"), "{{instance}}")],
                unit="s",
            ),
        ],
    ),
    row(
        "Throughput and errors",
        [
            timeseries(
                "Throughput by outcome",
                "Records per second by outcome: ok, degraded, dlq, reply (tutor replies re-identified), "
                "duplicate, other.",
                [q(f"sum by (outcome) (rate(plainsight_turns_total{sel()}[{RI}]))", "{{outcome}}")],
                unit="reqps",
                stack=True,
            ),
            timeseries(
                "Dead letters by reason",
                "Records per second sent to the DLQ topic, by reason (not_json, invalid_utf8, schema, "
                "empty_text, too_large, not_object, processing_error).",
                [q(f"sum by (reason) (rate(plainsight_dlq_total{sel()}[{RI}]))", "{{reason}}")],
                unit="reqps",
                stack=True,
            ),
            timeseries(
                "DLQ and degraded ratios",
                "Dead-lettered and degraded outputs as a share of consumed records. Alerts: DLQ > 1 %, "
                "degraded > 5 %.",
                [
                    q(
                        f"sum(rate(plainsight_dlq_total{sel()}[{RI}])) / sum(rate(plainsight_turns_total{sel()}[{RI}]))",
                        "dlq",
                    ),
                    q(
                        f"sum(rate(plainsight_degraded_total{sel()}[{RI}])) "
                        f"/ sum(rate(plainsight_turns_total{sel()}[{RI}]))",
                        "degraded",
                    ),
                ],
                unit="percentunit",
                thresholds=[(0.01, "orange"), (0.05, "red")],
            ),
            timeseries(
                "Degraded outputs",
                "Outputs per second emitted with degraded=true (a stage such as the LLM was skipped or "
                "failed; local detection only).",
                [q(f"sum(rate(plainsight_degraded_total{sel()}[{RI}]))", "degraded/s")],
                unit="reqps",
            ),
        ],
    ),
    row(
        "Kafka",
        [
            timeseries(
                "Consumer lag by partition",
                "Records behind the high watermark per topic and partition (each worker reports its "
                "assigned partitions).",
                [q(f"sum by (topic, partition) (plainsight_consumer_lag{sel()})", "{{topic}}/{{partition}}")],
            ),
            timeseries(
                "Consumer lag trend",
                "Per-topic lag change in records per second (deriv over 10 min). Positive for a long "
                "time → workers are not keeping up (alert PlainsightConsumerLagGrowing).",
                [q(f"sum by (topic) (deriv(plainsight_consumer_lag{sel()}[10m]))", "{{topic}}")],
                min_=None,
            ),
        ],
    ),
    row(
        "LLM",
        [
            timeseries(
                "LLM requests by status",
                "Requests per second by result: ok, error, timeout, rate_limited, invalid_response, "
                "circuit_open, budget_exceeded.",
                [q(f"sum by (status) (rate(plainsight_llm_requests_total{sel()}[{RI}]))", "{{status}}")],
                unit="reqps",
                stack=True,
            ),
            timeseries(
                "LLM error ratio",
                "Share of LLM requests that did not succeed (status != ok). Alert above 20 %.",
                [
                    q(
                        f"sum(rate(plainsight_llm_requests_total{sel(NOT_OK)}[{RI}])) "
                        f"/ sum(rate(plainsight_llm_requests_total{sel()}[{RI}]))",
                        "errors",
                    )
                ],
                unit="percentunit",
                thresholds=[(0.2, "red")],
            ),
            timeseries(
                "LLM tokens",
                "Tokens per second by kind (prompt, completion).",
                [q(f"sum by (kind) (rate(plainsight_llm_tokens_total{sel()}[{RI}]))", "{{kind}}")],
                stack=True,
            ),
            timeseries(
                "LLM cost",
                "Estimated spend: USD per hour at the current rate.",
                [q(f"sum(rate(plainsight_llm_cost_usd_total{sel()}[{RI}])) * 3600", "USD/hour")],
                unit="currencyUSD",
                decimals=4,
            ),
            stat(
                "LLM cost in range",
                "Estimated USD spent during the dashboard's time range.",
                q(f"sum(increase(plainsight_llm_cost_usd_total{sel()}[$__range]))", "USD", instant=True),
                unit="currencyUSD",
                w=6,
                decimals=4,
                graph=False,
            ),
            stat(
                "LLM tokens in range",
                "Tokens (prompt + completion) used during the dashboard's time range.",
                q(f"sum(increase(plainsight_llm_tokens_total{sel()}[$__range]))", "tokens", instant=True),
                w=6,
                graph=False,
            ),
        ],
    ),
    row(
        "Entities and sessions",
        [
            timeseries(
                "Entities replaced by label",
                "Entities per second by label (NAME, EMAIL, PHONE, URL, USERNAME, ID_NUM, ADDRESS, …).",
                [q(f"sum by (label) (rate(plainsight_entities_total{sel()}[{RI}]))", "{{label}}")],
                unit="reqps",
                stack=True,
            ),
            timeseries(
                "Entities replaced by source",
                "Entities per second by the recognizer that found them (pattern, ner, gazetteer, memory, "
                "llm, …): shows how much each cascade stage contributes.",
                [q(f"sum by (source) (rate(plainsight_entities_total{sel()}[{RI}]))", "{{source}}")],
                unit="reqps",
                stack=True,
            ),
            bargauge(
                "Entities in range by label",
                "Total entities replaced per label during the dashboard's time range.",
                q(f"sum by (label) (increase(plainsight_entities_total{sel()}[$__range]))", "{{label}}", instant=True),
            ),
            timeseries(
                "Active sessions",
                "Sessions whose state is held in memory, per worker.",
                [q(f"sum by (instance) (plainsight_active_sessions{sel()})", "{{instance}}")],
            ),
        ],
    ),
    row(
        "Proxy (plainsight proxy)",
        [
            timeseries(
                "Proxy added latency",
                "plainsight proxy: time from a request's arrival to the upstream call (de-identification, "
                "session load and seal), p50 / p99; target p99 ≤ 5 ms on the fast pass.",
                [
                    q(quantile(0.5, "plainsight_proxy_added_seconds"), "p50"),
                    q(quantile(0.99, "plainsight_proxy_added_seconds"), "p99"),
                    q(quantile(0.99, "plainsight_proxy_after_seconds"), "p99 after the upstream"),
                ],
                unit="s",
                w=8,
            ),
            timeseries(
                "Proxy streamed TTFT overhead",
                "Streams: time-to-first-token the proxy adds (added latency + the delay of the first content "
                "delta), p99; and the characters held back per stream (p99).",
                [
                    q(quantile(0.99, "plainsight_proxy_ttft_overhead_seconds"), "TTFT overhead p99 (s)"),
                    q(quantile(0.99, "plainsight_proxy_held_chars"), "held back p99 (chars)"),
                ],
                w=8,
            ),
            timeseries(
                "Proxy requests by outcome",
                "Requests per second by outcome (ok, refused, upstream_error, failed_closed, cancelled, "
                "upstream_unreachable) and refusals by reason.",
                [
                    q(f"sum by (outcome) (rate(plainsight_proxy_requests_total{sel()}[{RI}]))", "{{outcome}}"),
                    q(f"sum by (reason) (rate(plainsight_proxy_refused_total{sel()}[{RI}]))", "refused: {{reason}}"),
                ],
                unit="reqps",
                w=8,
            ),
        ],
    ),
    row(
        "Process",
        [
            timeseries(
                "CPU",
                "CPU cores used per worker process.",
                [q(f"sum by (instance) (rate(process_cpu_seconds_total{sel()}[{RI}]))", "{{instance}}")],
                unit="short",
                w=8,
            ),
            timeseries(
                "Resident memory",
                "Resident set size per worker process.",
                [q(f"sum by (instance) (process_resident_memory_bytes{sel()})", "{{instance}}")],
                unit="bytes",
                w=8,
            ),
            timeseries(
                "Up and ready",
                "Scrape health (up) and readiness (plainsight_ready) per worker.",
                [
                    q(f"up{sel()}", "up {{instance}}"),
                    q(f"plainsight_ready{sel()}", "ready {{instance}}"),
                ],
                w=8,
                min_=0,
            ),
        ],
    ),
]


def _layout(rows: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Flow panels left to right, top to bottom, with a row header per section."""
    panels: list[dict[str, Any]] = []
    y = 0
    for title, items in rows:
        panels.append(
            {
                "type": "row",
                "title": title,
                "collapsed": False,
                "id": _next_id(),
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        y += 1
        x = 0
        row_h = 0
        for p in items:
            w, h = p["gridPos"]["w"], p["gridPos"]["h"]
            if x + w > 24:
                x, y, row_h = 0, y + row_h, 0
            p["gridPos"] = {"h": h, "w": w, "x": x, "y": y}
            p["id"] = _next_id()
            for i, t in enumerate(p["targets"]):
                t["refId"] = chr(ord("A") + i)
                t["datasource"] = DS
            panels.append(p)
            x += w
            row_h = max(row_h, h)
        y += row_h
    return panels


def build() -> dict[str, Any]:
    global _id
    _id = 0
    return {
        "uid": UID,
        "title": "plainsight",
        "description": "plainsight privacy middleware: latency, throughput, Kafka lag, DLQ, LLM usage, entities.",
        "tags": ["plainsight", "kafka", "privacy"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "schemaVersion": 39,
        "version": 1,
        "fiscalYearStartMonth": 0,
        "liveNow": False,
        "links": [],
        "annotations": {
            "list": [
                {
                    "builtIn": 1,
                    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                    "enable": True,
                    "hide": True,
                    "iconColor": "rgba(0, 211, 255, 1)",
                    "name": "Annotations & Alerts",
                    "type": "dashboard",
                }
            ]
        },
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                    "refresh": 1,
                    "regex": "",
                    "includeAll": False,
                    "multi": False,
                    "options": [],
                },
                {
                    # a text box, not a query: the "Workers up" panels must still show a worker
                    # whose metrics have gone away (up == 0)
                    "name": "job",
                    "label": "Job",
                    "type": "textbox",
                    "query": "plainsight",
                    "current": {"text": "plainsight", "value": "plainsight"},
                    "options": [{"selected": True, "text": "plainsight", "value": "plainsight"}],
                    "hide": 0,
                },
                {
                    "name": "instance",
                    "label": "Instance",
                    "type": "query",
                    "datasource": DS,
                    "definition": 'label_values(up{job=~"$job"}, instance)',
                    "query": {"query": 'label_values(up{job=~"$job"}, instance)', "refId": "instance"},
                    "current": {},
                    "hide": 0,
                    "refresh": 2,
                    "regex": "",
                    "sort": 1,
                    "includeAll": True,
                    "allValue": ".+",
                    "multi": True,
                    "options": [],
                },
            ]
        },
        "panels": _layout(ROWS),
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is out of date: run python monitoring/build_dashboard.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({sum(1 for p in build()['panels'] if p['type'] != 'row')} panels)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
