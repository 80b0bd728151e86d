"""Issue #11.5: a configured stage that cannot be loaded stops ``plainsight serve`` at start-up
(non-zero, one line), and the fault harness fails loudly — with the worker's last log lines — when
a scenario's worker exits or never becomes ready, instead of reporting "0 outputs"."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.support import TEST_SECRETS_ENV

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


@pytest.fixture
def broken_openai(tmp_path):
    """A Python path on which ``import openai`` fails, as in a broken environment."""
    pkg = tmp_path / "broken" / "openai"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('raise ImportError("simulated broken openai install")\n')
    return str(tmp_path / "broken")


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_") and k != "OPENAI_API_KEY"}
    env.update(TEST_SECRETS_ENV)
    env.update(extra)
    return env


def _serve(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(PLAINSIGHT + ["serve", "--no-metrics", "--max-runtime", "60", *args],
                          capture_output=True, text=True, timeout=120, env=env)


def test_serve_exits_at_start_up_when_the_llm_client_cannot_be_loaded(broken_openai):
    from plainsight.benchmarks.llm_simulator import closed_port_url

    t0 = time.monotonic()
    proc = _serve(["--llm-base-url", closed_port_url()], _env(PYTHONPATH=broken_openai))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert time.monotonic() - t0 < 60
    last = proc.stderr.strip().splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert last.startswith("plainsight serve: error: the LLM stage") and "cannot be loaded" in last
    assert "embedded Kafka-protocol broker" not in proc.stderr  # nothing was started before the check


def test_serve_exits_at_start_up_when_a_recognizer_cannot_be_loaded(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("detection:\n  recognizers:\n    - {plugin: no_such_plugin}\n", encoding="utf-8")
    proc = _serve(["--config", str(cfg)], _env())
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert "no_such_plugin" in proc.stderr.strip().splitlines()[-1]


async def test_fault_scenario_fails_loudly_when_its_worker_exits(broken_openai, monkeypatch, tmp_path):
    from plainsight.benchmarks.faults import Scenario
    from plainsight.benchmarks.stream import WorkerFailed
    from plainsight.benchmarks.leak_scan import ValueSet
    from plainsight.benchmarks.llm_simulator import closed_port_url

    monkeypatch.setenv("PYTHONPATH", broken_openai)
    values = ValueSet()
    values.add("s", "simulated broken openai install", "canary")  # a "value" that is in the log: masked
    sc = Scenario("llm", str(tmp_path), partitions=2, extra_args=["--llm-base-url", closed_port_url()])
    t0 = time.monotonic()
    try:
        with pytest.raises(WorkerFailed) as e:
            await sc.start(1, values, ready_timeout=90)
    finally:
        await sc.stop()
    assert time.monotonic() - t0 < 90  # the exit is noticed, not waited out
    assert "worker 0 exited with status 2" in str(e.value)
    tail = "\n".join(e.value.log_tail)
    assert "the LLM stage" in tail and "cannot be loaded" in tail
    assert "simulated broken openai install" not in tail and "[masked]" in tail
    assert e.value.report()["failed"] == str(e.value)


def test_worker_that_never_gets_ready_fails_with_its_log(tmp_path):
    from plainsight.benchmarks.stream import WorkerFailed, WorkerProcs, write_bench_config
    from plainsight.consumers.broker import free_port

    cfg = write_bench_config({}, "never-ready", 1, "never-ready-g")
    procs = WorkerProcs(1, f"127.0.0.1:{free_port()}", cfg, log_dir=str(tmp_path), metrics=True)
    procs.start()
    try:
        with pytest.raises(WorkerFailed) as e:
            procs.wait_ready(timeout=8)
    finally:
        procs.stop(timeout=10)
        os.unlink(cfg)
    assert "not ready after 8 s" in str(e.value) or "exited" in str(e.value)
    assert isinstance(e.value.log_tail, list)


def test_bench_faults_command_reports_a_failed_scenario(monkeypatch, capsys):
    import plainsight.benchmarks.commands.faults as cmd

    async def fake_run_all(*a, **k):
        return {"llm_outage": {"failed": "worker 0 exited with status 2", "worker_log_tail": ["boom"]},
                "total_leaks": 0}

    monkeypatch.setattr("plainsight.benchmarks.faults.run_all", fake_run_all)

    class Args:
        turns, hostile, only, data_dir, json = 10, 10, "llm_outage", None, True

    assert cmd.run(Args()) == 1
    err = capsys.readouterr().err
    assert "scenario llm_outage FAILED: worker 0 exited with status 2" in err and "    boom" in err
