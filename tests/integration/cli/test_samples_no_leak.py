"""The product's first impression: `plainsight demo` and `plainsight redact` on the bundled sample
chats leave none of the samples' private values in any de-identified output. The values are the
samples' own list (middleware/samples/demo_values.json), per session."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT, cli_env as _env

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]
SAMPLES = ROOT / "middleware" / "samples"


def _values() -> dict[str, list[str]]:
    vals = json.loads((SAMPLES / "demo_values.json").read_text(encoding="utf-8"))
    return {k: v for k, v in vals.items() if not k.startswith("_")}


def _hits(values: list[str], text: str) -> list[str]:
    return [v for v in values if re.search(r"(?<!\w)" + re.escape(v) + r"(?!\w)", text, re.IGNORECASE)]


def test_value_list_covers_every_sample_session_and_every_value_is_in_its_chat():
    vals = _values()
    chats = {}
    for line in (SAMPLES / "demo_chats.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        chats[d["session_id"]] = " ".join(t["text"] for t in d["turns"])
    assert set(vals) == set(chats)
    for sid, values in vals.items():
        assert values and all(_hits([v], chats[sid]) for v in values), sid


def test_redact_on_the_bundled_samples_leaves_no_private_value(tmp_path):
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(PLAINSIGHT + ["redact", str(SAMPLES / "demo_chats.jsonl"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    vals = _values()
    seen = set()
    for line in out.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        seen.add(d["session_id"])
        for i, t in enumerate(d["turns"]):
            assert not _hits(vals[d["session_id"]], t["text"]), (d["session_id"], i, _hits(vals[d["session_id"]], t["text"]))
    assert seen == set(vals)
    # "btw my name's Diego" (issue #17): the contraction is a self-introduction
    assert "my name's Diego" not in out.read_text(encoding="utf-8")


def test_demo_deidentified_turns_leave_no_private_value():
    proc = subprocess.run(PLAINSIGHT + ["demo", "--rate", "200"], capture_output=True, text=True, timeout=180,
                          env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    vals = _values()
    lines = proc.stdout.splitlines()
    checked = 0
    sid = None
    in_replies = False
    for line in lines:
        if line.startswith("tutor replies"):
            in_replies = True
            continue
        m = re.match(r"\[([^\]]+)\] \w+: (.*)$", line)
        if m:
            sid = m.group(1)
            if in_replies:  # the de-identified side of a reply round trip
                assert not _hits(vals[sid], m.group(2)), (sid, m.group(2))
                checked += 1
            continue
        if line.strip().startswith("→") and not in_replies:
            text = line.strip()[1:].rsplit("(", 1)[0]
            assert not _hits(vals[sid], text), (sid, text)
            checked += 1
    assert checked >= 25
