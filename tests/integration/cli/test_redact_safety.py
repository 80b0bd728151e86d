"""`plainsight redact` foot-guns (issue #17): the input is never the output, outputs are never
half-written, one bad turn does not drop its dialogue, --mode is documented."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.support import cli_env as _env

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


def _run(*args, **kw):
    return subprocess.run(PLAINSIGHT + ["redact", *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=_env(), **kw)


def _dialogue(**extra) -> str:
    return json.dumps({"id": "d1", "turns": [{"speaker": "student", "text": "I am Olga Petrova"},
                                             {"speaker": "tutor", "text": "Hi Olga!"}], **extra}) + "\n"


def test_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path):
    src = tmp_path / "same.jsonl"
    src.write_text(_dialogue())
    before = src.read_bytes()
    (tmp_path / "sub").mkdir()
    for out in (src, tmp_path / "sub" / ".." / "same.jsonl"):
        proc = _run(src, "-o", out)
        assert proc.returncode == 2 and "is the input file" in proc.stderr
        assert src.read_bytes() == before
    os.symlink(src, tmp_path / "link.jsonl")
    proc = _run(tmp_path / "link.jsonl", "-o", src)
    assert proc.returncode == 2 and src.read_bytes() == before
    proc = _run(src, "-o", tmp_path / "out.jsonl", "--dlq", src)
    assert proc.returncode == 2 and src.read_bytes() == before


def test_output_written_through_a_temporary_file(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(_dialogue())
    out.write_text("previous run\n")
    out.chmod(0o640)
    proc = _run(src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Olga" not in out.read_text() and json.loads(out.read_text())["turns"]
    assert (out.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_killed_run_leaves_the_previous_output_untouched(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    line = json.dumps({"session_id": "s", "turn_id": 1, "role": "student", "text": "hi I'm Maria, maria@x.com",
                       "sent_at": 1.0})
    src.write_text("\n".join([line] * 40000) + "\n")
    out.write_text("previous run\n")
    proc = subprocess.Popen(PLAINSIGHT + ["redact", str(src), "-o", str(out)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=_env())
    try:
        deadline = time.monotonic() + 60
        part = []
        while time.monotonic() < deadline:
            part = [p for p in tmp_path.iterdir() if p.name.endswith(".part") and p.stat().st_size > 0]
            if part or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert part, "no temporary output appeared while running"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out.read_text() == "previous run\n"


def test_one_bad_turn_is_dead_lettered_alone(tmp_path):
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    src.write_text(json.dumps({"id": "d1", "turns": [
        {"speaker": "student", "text": "I am Olga Petrova"},
        {"speaker": "tutor", "text": 5},
        {"speaker": "tutor", "text": "Hi Olga!"},
        "not a turn"]}) + "\n")
    proc = _run(src, "-o", out, "--dlq", dlq)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    assert [t["speaker"] for t in d["turns"]] == ["student", "tutor"]
    assert "Olga" not in out.read_text() and d["turns"][0]["entities"]
    assert "turns[1].text: expected a string" in proc.stderr and "turns[3]: expected an object" in proc.stderr
    dls = [json.loads(l) for l in dlq.read_text().splitlines()]
    assert [x["detail"] for x in dls] == ["turns[1].text: expected a string", "turns[3]: expected an object"]
    assert all(x["reason"] == "schema" and x["offset"] == 1 for x in dls)
    assert "not a turn" not in dlq.read_text() and "not a turn" not in proc.stderr


def test_mode_help_names_its_default_setting_and_mode_applies(tmp_path):
    proc = subprocess.run(PLAINSIGHT + ["redact", "--help"], capture_output=True, text=True, timeout=60, env=_env())
    assert "output.logs_mode" in " ".join(proc.stdout.split())
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(_dialogue())
    assert _run(src, "-o", out, "--mode", "tag").returncode == 0
    assert "[NAME_1]" in out.read_text()
    cfg = tmp_path / "c.yaml"
    cfg.write_text("output:\n  logs_mode: redact\n")
    assert _run(src, "-o", out, "--config", cfg).returncode == 0
    assert "[NAME]" in out.read_text()
