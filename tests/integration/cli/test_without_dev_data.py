"""Issue #22 item 13: what works without ../shared/data/dev (a fresh clone, an installed wheel).
`bench detect` times the shipped synthetic sample and says so; `eval sample` scores it; a dev file
name that cannot be found explains where the dev dialogues come from (one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys

from plainsight.middleware.cli import main
from tests.support import cli_env

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


def test_bench_detect_without_dev_data_times_the_shipped_sample(tmp_path):
    env = {**cli_env(), "PLAINSIGHT_DATA_DIR": str(tmp_path / "none")}
    proc = subprocess.run(PLAINSIGHT + ["bench", "detect", "--turns", "60", "--warmup", "5", "--json"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "no dev dialogues in" in proc.stderr and "synthetic sample" in proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["files"] == ["sample_dialogues.jsonl"]


def test_eval_sample_without_dev_data(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PLAINSIGHT_DATA_DIR", str(tmp_path / "none"))
    assert main(["eval", "sample", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["dialogues"] == 10 and s["gold_spans"] == 14 and s["overall"]["tp"] >= 10


def test_missing_dev_file_explains_where_dev_data_comes_from(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PLAINSIGHT_DATA_DIR", str(tmp_path / "none"))
    assert main(["eval", "bridge"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("plainsight eval: error: no such dialogue file: bridge")
    assert "PLAINSIGHT_DATA_DIR" in err[0] and "'sample'" in err[0]


def test_sample_dialogues_hold_no_real_data_and_are_labelled():
    from plainsight.middleware.evaluation import gold_ents, read_dialogues, sample_dialogues_file

    ds = list(read_dialogues(sample_dialogues_file()))
    assert len(ds) == 10 and all(d["source"] == "sample" for d in ds)
    for d in ds:  # every span's offsets point at its text
        for e in gold_ents(d):
            assert d["turns"][e.turn]["text"][e.start:e.end] == e.text
