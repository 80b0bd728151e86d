"""`plainsight bench detect` on a tiny sample (in a subprocess: the benchmark pins its process
to one CPU, which must not leak into the test process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT
import pytest

from plainsight.middleware.evaluation import default_data_dir, read_dialogues



def _need_data():
    d = default_data_dir()
    if not (d / "bridge.jsonl").exists():
        pytest.skip(f"dev data not found at {d} (set PLAINSIGHT_DATA_DIR to the dev data directory)")
    return d


def test_bench_requires_a_benchmark(capsys):
    from plainsight.middleware.cli import main

    assert main(["bench"]) == 2
    assert "detect" in capsys.readouterr().err


def test_sample_dialogues_quota_and_order():
    from plainsight.benchmarks.commands.detect import sample_dialogues

    d = _need_data()
    paths = [d / "bridge.jsonl", d / "mathdial.jsonl"]
    ds = sample_dialogues(paths, 41, seed=1, read_dialogues=read_dialogues)
    assert sum(len(x["turns"]) for x in ds) == 41
    assert all(t["text"].strip() for x in ds for t in x["turns"])
    again = sample_dialogues(paths, 41, seed=1, read_dialogues=read_dialogues)
    assert [x["id"] for x in ds] == [x["id"] for x in again]  # seeded


def test_bench_detect_tiny_sample_json():
    d = _need_data()
    env = dict(os.environ, PLAINSIGHT_DATA_DIR=str(d))
    cmd = [sys.executable, "-m", "plainsight.middleware.cli", "bench", "detect", "--turns", "40", "--warmup", "5", "--json",
           "--file", "bridge", "--file", "presidio_synth"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["turns"] == 40
    for name in ("cascade", "presidio"):
        assert out[name]["ms_per_turn_mean"] > 0
        assert out[name]["ms_per_turn_p99"] >= out[name]["ms_per_turn_p50"]
    assert out["ratio_mean"] > 0 and out["ratio_p99"] > 0
    # figures only: no dialogue text in the output
    sample = next(read_dialogues(d / "bridge.jsonl"))
    assert all(t["text"] not in proc.stdout for t in sample["turns"] if len(t["text"]) > 20)
