"""The monitoring bundle against a real Prometheus server (Debian package ``prometheus``).

* ``promtool check rules`` / ``check config`` / ``test rules`` on monitoring/.
* A real Prometheus (loopback, temporary data dir, 1 s scrape and rule evaluation) scrapes a
  plainsight metrics endpoint; every PromQL expression of the Grafana dashboard and of the
  alert rules is extracted programmatically, Grafana variables substituted, and evaluated
  through the HTTP API (instant and range queries) without error; the latency, throughput and
  entity panels must return data, and the alert rules must evaluate with health "ok".
* Traffic: (1) simulated observations through the Metrics API in-process, shaped so that the
  alerts go pending; (2) the real worker, ``plainsight serve --metrics-port P`` on the embedded
  broker, fed the bundled demo chats plus malformed records and tutor replies.

Skips with a clear message where the ``prometheus``/``promtool`` binaries are absent
(install: ``apt-get install -y --no-install-recommends prometheus``).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable

from tests.support import ROOT, TEST_SECRETS_ENV, free_port, reply_token_for
import pytest
import yaml

from plainsight.middleware.metrics import Metrics
from plainsight.middleware.metrics_server import MetricsServer

MON = ROOT / "monitoring"
DASHBOARD = MON / "grafana" / "dashboards" / "plainsight.json"
ALERTS = MON / "alerts.yml"

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool not found: install the Debian package (apt-get install -y --no-install-recommends prometheus)",
)
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None or PROMTOOL is None,
    reason="prometheus server not found: install the Debian package "
    "(apt-get install -y --no-install-recommends prometheus)",
)

#: Grafana's built-in and dashboard variables → values for a 1 s-scrape test server.
GRAFANA_VARS = {
    "__rate_interval": "15s",
    "__interval": "2s",
    "__range": "5m",
    "__range_s": "300",
    "job": "plainsight",
    "instance": ".+",
}

#: Panels that must show data once traffic has flowed (title → at least one finite value > 0).
MUST_HAVE_DATA = {
    "Throughput",
    "E2E latency p99",
    "End-to-end latency (p50 / p95 / p99)",
    "Stage latency p99 by stage",
    "Stage latency p50 by stage",
    "Mean time per turn by stage (stacked)",
    "Throughput by outcome",
    "Entities replaced by label",
    "Entities replaced by source",
    "Entities in range by label",
    "Workers up",
    "Workers ready",
}


# --------------------------------------------------------------------------- helpers


def run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=MON)


def substitute(expr: str) -> str:
    """Replace Grafana variables ($x, ${x}, ${x:fmt}, [[x]]) with test values."""

    def repl(m: re.Match) -> str:
        name = m.group("a") or m.group("b") or m.group("c")
        if name not in GRAFANA_VARS:
            raise AssertionError(f"unknown Grafana variable ${name} in {expr!r}")
        return GRAFANA_VARS[name]

    out = re.sub(r"\$\{(?P<a>\w+)(?::\w+)?\}|\$(?P<b>\w+)|\[\[(?P<c>\w+)\]\]", repl, expr)
    assert "$" not in out, out
    return out


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(panel title, refId, expr) for every target of every panel, rows included."""
    d = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out: list[tuple[str, str, str]] = []

    def walk(panels: list[dict]) -> None:
        for p in panels:
            walk(p.get("panels", []))
            for t in p.get("targets", []):
                if t.get("expr"):
                    out.append((p["title"], t.get("refId", "?"), t["expr"]))

    walk(d["panels"])
    return out


def dashboard_variable_queries() -> list[tuple[str, str]]:
    """Query variables, as a PromQL selector (label_values(sel, label) → sel)."""
    d = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    out = []
    for v in d["templating"]["list"]:
        if v["type"] != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", q.strip())
        assert m, f"unsupported variable query {q!r}"
        out.append((v["name"], m.group(1)))
    return out


def alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [r for g in doc["groups"] for r in g["rules"]]


def wait_for(pred: Callable[[], Any], timeout: float, what: str, interval: float = 0.25) -> Any:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = pred()
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            last = None
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


class Prometheus:
    """A real Prometheus on loopback scraping ``targets`` every second; rules from alerts.yml."""

    def __init__(self, tmp: Path, targets: list[str]) -> None:
        self.tmp = tmp
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cfg = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
            "rule_files": [str(ALERTS)],
            "scrape_configs": [{"job_name": "plainsight", "static_configs": [{"targets": targets}]}],
        }
        self.config = tmp / "prometheus.yml"
        self.config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        self.proc: subprocess.Popen | None = None
        self.log = tmp / "prometheus.log"

    def start(self) -> "Prometheus":
        r = run([PROMTOOL, "check", "config", str(self.config)])
        assert r.returncode == 0, r.stdout + r.stderr
        self._fh = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={self.config}",
                f"--storage.tsdb.path={self.tmp / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1h",
                "--log.level=warn",
            ],
            stdout=self._fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(self._ready, 30, "Prometheus /-/ready")
        except AssertionError:
            self.stop()
            raise AssertionError("Prometheus did not start:\n" + self.log.read_text(errors="replace")[-3000:]) from None
        return self

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError("Prometheus exited:\n" + self.log.read_text(errors="replace")[-3000:])
        with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
            return r.status == 200

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if getattr(self, "_fh", None):
            self._fh.close()

    def api(self, path: str, **params: Any) -> dict[str, Any]:
        data = urllib.parse.urlencode(params).encode() if params else None
        req = urllib.request.Request(self.url + "/api/v1/" + path, data=data)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:  # 400/422: PromQL errors come back as JSON
            return json.loads(e.read())

    def query(self, expr: str) -> dict[str, Any]:
        return self.api("query", query=expr, time=f"{time.time():.3f}")

    def query_range(self, expr: str, seconds: float = 60, step: float = 2) -> dict[str, Any]:
        now = time.time()
        return self.api("query_range", query=expr, start=f"{now - seconds:.3f}", end=f"{now:.3f}", step=str(step))

    def value(self, expr: str) -> float | None:
        r = self.query(expr)
        if r.get("status") != "success" or not r["data"]["result"]:
            return None
        return float(r["data"]["result"][0]["value"][1])

    def targets_up(self) -> int:
        return int(self.value('sum(up{job="plainsight"})') or 0)

    def rules(self) -> list[dict[str, Any]]:
        return [r for g in self.api("rules")["data"]["groups"] for r in g["rules"]]

    def active_alerts(self) -> dict[str, str]:
        return {a["labels"]["alertname"]: a["state"] for a in self.api("alerts")["data"]["alerts"]}


def finite_values(result: dict[str, Any]) -> list[float]:
    data = result["data"]
    vals: list[float] = []
    if data["resultType"] == "vector":
        vals = [float(s["value"][1]) for s in data["result"]]
    elif data["resultType"] == "matrix":
        vals = [float(v[1]) for s in data["result"] for v in s["values"]]
    elif data["resultType"] == "scalar":
        vals = [float(data["result"][1])]
    return [v for v in vals if math.isfinite(v)]


def fmt(vals: list[float]) -> str:
    if not vals:
        return "no data"
    return ", ".join(f"{v:.4g}" for v in vals[:8]) + (f" … ({len(vals)} series)" if len(vals) > 8 else "")


def check_everything(prom: Prometheus, report: list[str]) -> dict[str, list[float]]:
    """Every dashboard/alert expression evaluates (instant + range); returns panel → values."""
    errors: list[str] = []
    panel_values: dict[str, list[float]] = {}
    for title, ref, expr in dashboard_queries():
        q = substitute(expr)
        for kind, r in (("instant", prom.query(q)), ("range", prom.query_range(q))):
            if r.get("status") != "success":
                errors.append(f"dashboard {title!r}/{ref} ({kind}): {r.get('errorType')}: {r.get('error')}\n  {q}")
            elif r.get("warnings"):
                errors.append(f"dashboard {title!r}/{ref} ({kind}) warnings: {r['warnings']}")
        r = prom.query(q)
        if r.get("status") == "success":
            vals = finite_values(r)
            panel_values.setdefault(title, []).extend(vals)
            report.append(f"panel {title} [{ref}]: {fmt(vals)}")
    for name, selector in dashboard_variable_queries():
        r = prom.api("series", **{"match[]": substitute(selector)})
        if r.get("status") != "success" or not r["data"]:
            errors.append(f"variable {name}: {selector} → {r}")
        else:
            report.append(f"variable ${name}: {sorted({s.get(name, '') for s in r['data']})}")
    for rule in alert_rules():
        r = prom.query(rule["expr"])
        if r.get("status") != "success":
            errors.append(f"alert {rule['alert']}: {r.get('errorType')}: {r.get('error')}")
        else:
            report.append(f"alert {rule['alert']} expr: {fmt(finite_values(r))}")
    assert not errors, "PromQL errors:\n" + "\n".join(errors)
    return panel_values


def assert_panels_have_data(panel_values: dict[str, list[float]]) -> None:
    titles = {t for t, _, _ in dashboard_queries()}
    assert MUST_HAVE_DATA <= titles, MUST_HAVE_DATA - titles
    empty = [t for t in sorted(MUST_HAVE_DATA) if not any(v > 0 for v in panel_values.get(t, []))]
    assert not empty, f"panels without data: {empty}"


def wait_rules_evaluated(prom: Prometheus) -> list[dict[str, Any]]:
    names = {r["alert"] for r in alert_rules()}

    def evaluated():
        rules = prom.rules()
        done = [r for r in rules if not r.get("lastEvaluation", "").startswith("0001-")]
        return rules if {r["name"] for r in done} >= names else None

    rules = wait_for(evaluated, 20, "every alert rule to be evaluated")
    bad = [(r["name"], r.get("health"), r.get("lastError")) for r in rules if r.get("health") != "ok"]
    assert not bad, f"alert rules with errors: {bad}"
    return rules


def alerts_including(prom: Prometheus, names: set[str]) -> dict[str, str] | None:
    active = prom.active_alerts()
    return active if names <= set(active) else None


def emit(report: list[str], header: str) -> None:
    text = "\n".join([f"== {header}", *report])
    print(text)
    out = os.environ.get("PLAINSIGHT_PROM_REPORT")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


# --------------------------------------------------------------------------- static checks


@needs_promtool
def test_promtool_check_rules() -> None:
    r = run([PROMTOOL, "check", "rules", str(ALERTS)])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in r.stdout


@needs_promtool
def test_promtool_check_config() -> None:
    r = run([PROMTOOL, "check", "config", str(MON / "prometheus.yml")])
    assert r.returncode == 0, r.stdout + r.stderr


@needs_promtool
def test_promtool_alert_unit_tests() -> None:
    r = run([PROMTOOL, "test", "rules", str(MON / "alerts_test.yml")])
    assert r.returncode == 0, r.stdout + r.stderr


def test_dashboard_json_is_generated_from_build_dashboard() -> None:
    r = subprocess.run(
        [sys.executable, str(MON / "build_dashboard.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr


def test_dashboard_structure_and_metric_names() -> None:
    d = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    for p in d["panels"]:
        if p["type"] == "row":
            continue
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        assert p.get("description"), f"panel {p['title']!r} has no description"
        assert p["targets"], p["title"]
        g = p["gridPos"]
        assert g["x"] + g["w"] <= 24
    # every plainsight_* name a query uses is one Metrics actually exports
    from plainsight.middleware.config import Settings

    body = Metrics.from_settings(Settings()).exposition()[0].decode()
    exported = set(re.findall(r"^(plainsight_\w+?)(?:\{| )", body, re.M))
    from plainsight.proxy.metrics import ProxyMetrics  # the proxy's row (plainsight proxy's /metrics)

    exported |= set(re.findall(r"^(plainsight_\w+?)(?:\{| )", ProxyMetrics().exposition()[0].decode(), re.M))
    used = set()
    for _, _, expr in dashboard_queries():
        used |= set(re.findall(r"\bplainsight_\w+", expr))
    for rule in alert_rules():
        used |= set(re.findall(r"\bplainsight_\w+", rule["expr"]))
    assert used, "no queries found"
    assert used <= exported, f"queried but not exported: {sorted(used - exported)}"
    # the README documents every panel and every alert
    readme = (MON / "README.md").read_text(encoding="utf-8")
    for title in {t for t, _, _ in dashboard_queries()}:
        assert title in readme, f"panel {title!r} not documented in monitoring/README.md"
    for rule in alert_rules():
        assert rule["alert"] in readme, f"alert {rule['alert']} not documented in monitoring/README.md"


def test_compose_and_provisioning_are_consistent() -> None:
    compose = yaml.safe_load((MON / "docker-compose.yml").read_text(encoding="utf-8"))
    services = compose["services"]
    assert {"kafka", "plainsight", "prometheus", "grafana"} <= set(services)
    ps = services["plainsight"]
    cmd = ps["command"]
    assert cmd[0] == "serve" and cmd[cmd.index("--bootstrap-servers") + 1] == "kafka:9092"
    port = cmd[cmd.index("--metrics-port") + 1]
    context = (MON / ps["build"]["context"]).resolve()
    assert context == ROOT and (context / ps["build"]["dockerfile"]).exists()
    prom_cfg = yaml.safe_load((MON / "prometheus.yml").read_text(encoding="utf-8"))
    jobs = {j["job_name"]: j for j in prom_cfg["scrape_configs"]}
    targets = [t for sc in jobs["plainsight"]["static_configs"] for t in sc["targets"]]
    assert f"plainsight:{port}" in targets
    # alert rules select the scrape job by name
    for rule in alert_rules():
        if "plainsight_" in rule["expr"] or "up{" in rule["expr"]:
            assert 'job="plainsight"' in rule["expr"], rule["alert"]
    # every host path mounted into a container exists
    for name, svc in services.items():
        for vol in svc.get("volumes", []):
            src = vol.split(":", 1)[0]
            if src.startswith("."):
                assert (MON / src).exists(), f"{name}: {src} missing"
    ds = yaml.safe_load((MON / "grafana/provisioning/datasources/prometheus.yml").read_text(encoding="utf-8"))
    assert ds["datasources"][0]["type"] == "prometheus"
    assert ds["datasources"][0]["url"] == "http://prometheus:9090"
    assert ds["datasources"][0]["jsonData"]["timeInterval"] == prom_cfg["global"]["scrape_interval"]
    prov = yaml.safe_load((MON / "grafana/provisioning/dashboards/plainsight.yml").read_text(encoding="utf-8"))
    dash_path = prov["providers"][0]["options"]["path"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in services["grafana"]["volumes"] if v.startswith(".")}
    assert mounts[dash_path] == "./grafana/dashboards"
    assert services["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"] == f"{dash_path}/plainsight.json"
    dockerfile = (MON / "Dockerfile").read_text(encoding="utf-8")
    assert "EXPOSE 9464" in dockerfile and '"plainsight"' in dockerfile


# --------------------------------------------------------------------------- phase 1: simulated traffic


class SimulatedTraffic(threading.Thread):
    """~60 turns/s through the Metrics API, shaped so that every traffic-driven alert goes
    pending: 3 % of turns take 2 s end to end, 5 % dead-lettered, 10 % degraded, a third of the
    LLM requests fail, spend well above 5 USD/h, lag on chat.turns growing past 1000."""

    def __init__(self, m: Metrics, seconds: float, rate: float = 60.0) -> None:
        super().__init__(daemon=True, name="sim-traffic")
        self.m, self.seconds, self.rate = m, seconds, rate
        self.rng = random.Random(6)
        self.stop_evt = threading.Event()
        self.turns = 0

    def run(self) -> None:
        m, rng = self.m, self.rng
        end = time.monotonic() + self.seconds
        lag = 0
        while time.monotonic() < end and not self.stop_evt.is_set():
            self.turns += 1
            m.observe_stage("parse", rng.uniform(0.00005, 0.0003))
            m.observe_stage("fast_pass", rng.uniform(0.002, 0.012))
            m.observe_stage("surrogate", rng.uniform(0.0001, 0.0008))
            m.observe_stage("produce", rng.uniform(0.002, 0.008))
            if rng.random() < 0.3:
                m.observe_stage("llm", rng.uniform(0.3, 0.9))
                m.observe_stage("verifier", rng.uniform(0.1, 0.3))
                m.llm_request("ok" if rng.random() < 0.65 else rng.choice(["timeout", "http_5xx", "rate_limited"]))
                m.llm_usage(prompt_tokens=rng.randint(200, 600), completion_tokens=rng.randint(20, 80), cost_usd=0.05)
            r = rng.random()
            if r < 0.05:
                m.dlq(rng.choice(["not_json", "schema", "empty_text"]))
                m.turn("dlq")
            elif r < 0.15:
                m.degraded()
                m.turn("degraded")
            else:
                m.turn("ok")
            if r >= 0.05:
                m.observe_e2e(2.0 if rng.random() < 0.03 else rng.uniform(0.008, 0.028))
                for _ in range(rng.choice([0, 0, 1, 1, 2])):
                    m.entity(rng.choice(["NAME", "NAME", "EMAIL", "PHONE", "URL"]), rng.choice(["ner", "email", "phone", "url", "memory"]))
            lag += 40
            m.set_lag("chat.turns", self.turns % 6, lag)
            m.set_active_sessions(min(500, self.turns // 3))
            time.sleep(1.0 / self.rate)


@needs_prometheus
def test_dashboard_and_alerts_on_a_real_prometheus_simulated_traffic(tmp_path: Path) -> None:
    from plainsight.middleware.config import Settings

    m = Metrics.from_settings(Settings())
    server = MetricsServer(m, "127.0.0.1", 0).start()
    prom = Prometheus(tmp_path, [f"127.0.0.1:{server.port}"])
    traffic = SimulatedTraffic(m, seconds=14)
    report: list[str] = []
    try:
        prom.start()
        # the zero-valued series are scraped first, so rates see the traffic as growth
        wait_for(lambda: prom.targets_up() == 1, 20, "the first scrape of the metrics endpoint")
        m.set_ready(True)
        time.sleep(1.5)
        traffic.start()
        # before any traffic: every series already exists (zero from start-up)
        zero = prom.value('count({__name__=~"plainsight_.+", job="plainsight"})')
        report.append(f"plainsight series at start-up: {zero:.0f}")
        assert zero and zero > 300
        traffic.join(30)
        time.sleep(3)  # a few more scrapes and rule evaluations
        report.append(f"simulated turns: {traffic.turns}")

        panel_values = check_everything(prom, report)
        assert_panels_have_data(panel_values)
        rules = wait_rules_evaluated(prom)
        report.append(f"alert rules evaluated, all health=ok: {len(rules)}")

        # the alerts that this traffic should trip are pending (their `for:` hasn't elapsed)
        expected = {
            "PlainsightLatencySLOBreach",
            "PlainsightConsumerLagGrowing",
            "PlainsightDLQRateHigh",
            "PlainsightDegradedRateHigh",
            "PlainsightLLMErrorRateHigh",
            "PlainsightLLMSpendHigh",
        }
        active = wait_for(lambda: alerts_including(prom, expected), 15, f"alerts {sorted(expected)}")
        report.append(f"active alerts under simulated traffic: {sorted(active.items())}")
        assert set(active) == expected, active
        p99 = prom.value(substitute(dashboard_expr("E2E latency p99")))
        assert p99 is not None and 1.0 < p99 <= 2.5, p99  # 3 % of turns at 2 s
        report.append(f"e2e p99 under simulated traffic: {p99:.3f}s")

        # readiness and the worker going away
        m.set_ready(False)
        server.stop()
        active = wait_for(lambda: alerts_including(prom, {"PlainsightWorkerDown"}), 15, "PlainsightWorkerDown")
        report.append(f"after stopping the metrics server: {sorted(k for k in active)}")
        assert prom.targets_up() == 0
    finally:
        traffic.stop_evt.set()
        server.stop()
        prom.stop()
        emit(report, "phase 1: simulated traffic")


def dashboard_expr(title: str, ref: str = "A") -> str:
    for t, r, e in dashboard_queries():
        if t == title and r == ref:
            return e
    raise KeyError(title)


# --------------------------------------------------------------------------- phase 2: the real worker


def _sample_turns(passes: int) -> list[tuple[str, dict[str, Any]]]:
    """The bundled demo chats (fake names, emails, phones), ``passes`` times with fresh session ids."""
    path = ROOT / "middleware" / "samples" / "demo_chats.jsonl"
    chats = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for p in range(passes):
        for c in chats:
            sid = f"{c['session_id']}-p{p}"
            for i, t in enumerate(c["turns"]):
                out.append((sid, {"session_id": sid, "turn_id": i, "role": t["role"], "text": t["text"]}))
    return out


#: Malformed records → the DLQ with these reasons.
BAD_RECORDS = [
    b"not json at all",
    b"\xff\xfe\xfa",
    b"[1, 2, 3]",
    b'{"session_id": "x", "turn_id": 1, "role": "student"}',
    b'{"session_id": "x", "turn_id": 1, "role": "student", "text": "   ", "sent_at": 1}',
] * 2


def _produce_traffic(bootstrap: str, turns: list[tuple[str, dict]], rate: float, seconds_budget: float) -> dict[str, int]:
    import asyncio

    from plainsight.consumers.kafka import make_producer
    from plainsight.middleware.config import load_settings

    settings = load_settings(kafka={"bootstrap_servers": bootstrap})

    async def go() -> dict[str, int]:
        p = make_producer(settings, bootstrap)
        await asyncio.wait_for(p.start(), 30)
        sent = {"turns": 0, "bad": 0, "replies": 0}
        deadline = time.monotonic() + seconds_budget
        try:
            bad = list(BAD_RECORDS)
            for n, (sid, obj) in enumerate(turns):
                if time.monotonic() > deadline:
                    break
                obj = dict(obj, sent_at=time.time())
                await p.send_and_wait(settings.topics.input, json.dumps(obj).encode(), key=sid.encode())
                sent["turns"] += 1
                if n % 17 == 5 and bad:
                    await p.send_and_wait(settings.topics.input, bad.pop(), key=None)
                    sent["bad"] += 1
                if n % 40 == 10:  # a tutor reply on a session the worker has seen
                    reply = {"session_id": sid, "turn_id": f"r{n}", "role": "tutor", "text": "Well done, keep going!",
                             "sent_at": time.time(), "reply_token": reply_token_for(settings, sid)}
                    await p.send_and_wait(settings.topics.replies_in, json.dumps(reply).encode(), key=sid.encode())
                    sent["replies"] += 1
                await asyncio.sleep(1.0 / rate)
            for b in bad:
                await p.send_and_wait(settings.topics.input, b, key=None)
                sent["bad"] += 1
        finally:
            await asyncio.wait_for(p.stop(), 30)
        return sent

    return asyncio.run(go())


def _http_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@needs_prometheus
@pytest.mark.slow
def test_dashboard_and_alerts_on_a_real_prometheus_real_worker(tmp_path: Path) -> None:
    """`plainsight serve --metrics-port P` on the embedded broker, real chat turns, Prometheus scraping."""
    metrics_port, broker_port = free_port(), free_port()
    bootstrap = f"127.0.0.1:{broker_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_")}
    env.update(
        PLAINSIGHT_EMBEDDED__PORT=str(broker_port),
        PLAINSIGHT_KAFKA__PARTITIONS="3",
        PLAINSIGHT_REVISION="test",
        PYTHONUNBUFFERED="1",
    )
    env.update(TEST_SECRETS_ENV)  # a known secret: the test's tutor replies carry valid reply tokens
    log_path = tmp_path / "serve.log"
    report: list[str] = []
    prom = None
    with open(log_path, "wb") as log_fh:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "plainsight.middleware.cli", "serve",
                "--metrics-port", str(metrics_port), "--metrics-host", "127.0.0.1",
                "--max-runtime", "240", "--log-level", "WARNING",
            ],
            cwd=ROOT, env=env, stdout=log_fh, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

        def serve_log() -> str:
            return log_path.read_text(errors="replace")[-4000:]

        try:
            base = f"http://127.0.0.1:{metrics_port}"

            def ready() -> bool:
                if proc.poll() is not None:
                    raise AssertionError(f"plainsight serve exited with {proc.returncode}:\n{serve_log()}")
                return _http_status(base + "/readyz") == 200

            wait_for(lambda: _http_status(base + "/healthz") == 200 or ready(), 90, "/healthz of plainsight serve")
            assert _http_status(base + "/metrics") == 200
            wait_for(ready, 90, "/readyz of plainsight serve (partitions assigned)")

            prom = Prometheus(tmp_path, [f"127.0.0.1:{metrics_port}"]).start()
            wait_for(lambda: prom.targets_up() == 1, 20, "the first scrape of plainsight serve")
            time.sleep(1.5)  # zero-valued series scraped before any traffic

            turns = _sample_turns(passes=6)
            t0 = time.monotonic()
            sent = _produce_traffic(bootstrap, turns, rate=25.0, seconds_budget=20)
            report.append(f"produced: {sent} in {time.monotonic() - t0:.1f}s")
            expected = sent["turns"] + sent["bad"] + sent["replies"]

            def all_consumed() -> float | None:
                v = prom.value('sum(plainsight_turns_total{job="plainsight"})')
                return v if v is not None and v >= expected else None

            total = wait_for(all_consumed, 60, f"{expected} records counted by plainsight_turns_total")
            time.sleep(3)  # more scrapes and rule evaluations after the last record
            report.append(f"plainsight_turns_total: {total:.0f}")

            panel_values = check_everything(prom, report)
            assert_panels_have_data(panel_values)
            rules = wait_rules_evaluated(prom)
            report.append(f"alert rules evaluated, all health=ok: {len(rules)}")

            v = prom.value
            ok = v('sum(plainsight_turns_total{outcome="ok"})')
            dlq = v('sum(plainsight_dlq_total)')
            replies = v('sum(plainsight_turns_total{outcome="reply"})')
            assert ok == sent["turns"], (ok, sent)
            assert dlq == sent["bad"], (dlq, sent)
            assert replies == sent["replies"], (replies, sent)
            by_reason = {
                r["metric"]["reason"]: float(r["value"][1])
                for r in prom.query("sum by (reason) (plainsight_dlq_total) > 0")["data"]["result"]
            }
            report.append(f"dlq by reason: {by_reason}")
            assert {"not_json", "invalid_utf8", "not_object", "schema", "empty_text"} <= set(by_reason)
            entities = {
                r["metric"]["label"]: float(r["value"][1])
                for r in prom.query("sum by (label) (plainsight_entities_total) > 0")["data"]["result"]
            }
            report.append(f"entities by label: {entities}")
            assert entities.get("NAME", 0) > 0
            lat = {
                q: v(f"histogram_quantile({q}, sum by (le) (increase(plainsight_e2e_latency_seconds_bucket[5m])))")
                for q in (0.5, 0.95, 0.99)
            }
            report.append("e2e latency over the run: " + ", ".join(f"p{int(q * 100)}={s * 1000:.1f} ms" for q, s in lat.items()))
            stages = {
                r["metric"]["stage"]: float(r["value"][1])
                for r in prom.query(
                    "histogram_quantile(0.99, sum by (le, stage) (increase(plainsight_stage_latency_seconds_bucket[5m])))"
                )["data"]["result"]
                if r["value"][1] != "NaN"
            }
            report.append("stage p99 over the run: " + ", ".join(f"{k}={s * 1000:.2f} ms" for k, s in sorted(stages.items())))
            assert {"parse", "fast_pass", "surrogate", "produce"} <= set(stages)
            info = prom.query("plainsight_build_info")["data"]["result"]
            report.append(f"build info: {info[0]['metric'] if info else None}")
            assert info and info[0]["metric"]["revision"] == "test"
            active = prom.active_alerts()
            report.append(f"active alerts under real traffic: {sorted(active.items())}")
            # ~5 % malformed records → the DLQ alert is pending; the worker is up and ready
            assert "PlainsightDLQRateHigh" in active
            assert not {"PlainsightWorkerDown", "PlainsightAbsent", "PlainsightNotReady"} & set(active)

            # graceful shutdown: SIGTERM drains, commits and exits 0
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(60) == 0, serve_log()
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
            if prom is not None:
                prom.stop()
            emit(report, "phase 2: plainsight serve on the embedded broker")
