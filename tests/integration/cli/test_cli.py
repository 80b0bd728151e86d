"""The commands as a user runs them (subprocesses, embedded broker, no network, no API key)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support import TEST_SECRETS_ENV, produce, read_topic, turn_bytes

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


def _env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("PLAINSIGHT_") or k == "OPENAI_API_KEY":
            env.pop(k)
    return env


def test_demo_runs_on_embedded_defaults_and_exits_0():
    proc = subprocess.run(PLAINSIGHT + ["demo", "--json", "--rate", "200"], capture_output=True, text=True,
                          timeout=180, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["turns_received"] == summary["turns_sent"] > 20
    assert summary["broker"] == "embedded"
    assert "random surrogate secret and state key for this run" in proc.stderr  # says so (issue #16)
    assert summary["entities"].get("NAME", 0) > 5 and summary["entities"].get("EMAIL", 0) >= 1
    assert summary["e2e_p99_ms"] > 0
    # the simulated tutor replies carry their outputs' reply_token: all re-identified (#28)
    assert summary["replies_restored"] == summary["replies_sent"] > 0


def test_demo_prints_raw_and_deidentified_turns():
    proc = subprocess.run(PLAINSIGHT + ["demo", "--rate", "200"], capture_output=True, text=True, timeout=180,
                          env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "→" in proc.stdout and "end-to-end latency" in proc.stdout
    assert "priya.raman@gmail.com" in proc.stdout  # the raw side of the display
    deid_lines = [l for l in proc.stdout.splitlines() if l.strip().startswith("→")]
    assert deid_lines and not any("priya.raman@gmail.com" in l for l in deid_lines)


def test_redact_dialogues_and_turns(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps({"id": "d1", "source": "x", "meta": {}, "turns": [
            {"speaker": "teacher", "text": "Hi Maria Lopez, welcome."},
            {"speaker": "student", "text": "thanks! my email is maria.lopez@example.com"}],
            "spans": [{"turn": 0, "start": 3, "end": 14, "label": "NAME", "text": "Maria Lopez"}]}) + "\n"
        + turn_bytes("s1", 1, "call me at (415) 555-0142, Tom").decode() + "\n"
        + "this is not json\n"
    )
    out, dlq = tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    proc = subprocess.run(PLAINSIGHT + ["redact", str(src), "-o", str(out), "--dlq", str(dlq)],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(lines) == 2
    assert "spans" not in lines[0], "gold spans hold raw values and must not be copied"
    text = out.read_text()
    for raw in ("Maria", "Lopez", "maria.lopez@example.com", "555-0142"):
        assert raw not in text
    assert lines[1]["session_id"] == "s1" and lines[1]["entities"]
    dl = json.loads(dlq.read_text())
    assert dl["reason"] == "not_json" and dl["offset"] == 3 and "not json" not in dlq.read_text()
    assert "line 3: not_json" in proc.stderr
    strict = subprocess.run(PLAINSIGHT + ["redact", str(src), "-o", str(out), "--strict"],
                            capture_output=True, text=True, timeout=120, env=_env())
    assert strict.returncode == 1


async def test_serve_against_given_bootstrap_and_sigterm_drains(make_settings, tmp_path):
    s = make_settings()
    cfg = tmp_path / "c.yaml"
    import yaml

    cfg.write_text(yaml.safe_dump({"topics": s.topics.model_dump(), "kafka": {
        "group_id": s.kafka.group_id, "partitions": 4, "session_timeout_ms": 2000, "heartbeat_interval_ms": 400}}))
    proc = subprocess.Popen(PLAINSIGHT + ["serve", "--config", str(cfg), "--bootstrap-servers",
                                          s.kafka.bootstrap_servers, "--no-metrics", "--max-runtime", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**_env(), **TEST_SECRETS_ENV})
    try:
        n = 50
        await produce(s, [(f"s{i}", turn_bytes(f"s{i}", i, f"hi Ana {i}")) for i in range(n)])
        outs = await read_topic(s, s.topics.output, n, timeout=90)
        assert len(outs) == n
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "worker stopped" in err
    assert "Ana" not in err


def test_bench_stream_smoke_reports_throughput_latency_breakdown(tmp_path):
    """`bench stream` end to end (embedded broker, one worker process, bundled demo chats): every
    turn comes back, and the JSON carries the figures docs/performance.md quotes."""
    env = _env()
    env["PLAINSIGHT_DATA_DIR"] = str(tmp_path)  # no dev files: the bundled demo chats are used
    proc = subprocess.run(PLAINSIGHT + ["bench", "stream", "--turns", "300", "--sessions", "20", "--rate", "300",
                                        "--workers", "1", "--idle-sessions", "0", "--json"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    run = out["runs"][0]
    assert run["turns_received"] == run["turns_sent"] == 300 and run["missing"] == 0
    assert out["turns_per_s"] > 0 and out["e2e_p99_ms"] > 0
    for k in ("inbound_p99_ms", "in_worker_p99_ms", "outbound_p99_ms"):
        assert run[k] is not None and run[k] >= 0, k
    # the three segments add up to the end-to-end time (medians of parts ≈ median of the whole)
    assert run["in_worker_p50_ms"] <= run["e2e_p50_ms"]
    assert run["broker_cpu_percent"] is not None and run["worker_cpu_percent"] > 0


def test_bench_broker_measures_one_hop_on_a_fresh_embedded_broker():
    proc = subprocess.run(PLAINSIGHT + ["bench", "broker", "--messages", "600", "--rate", "400", "--window", "300",
                                        "--json"], capture_output=True, text=True, timeout=180, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["received"] == 600 and out["broker"] == "embedded"
    assert 0 < out["hop_p50_ms"] <= out["hop_p99_ms"] and len(out["hop_p99_ms_per_window"]) == 2
    assert out["broker_cpu_percent"] is not None
