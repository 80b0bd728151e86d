"""What a new user meets next (issue #17): `forget` says what it found, `eval` refuses a file
without labels unless asked, `demo --file` reads both input formats."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import produce, run_forget
from tests.support import cli_env as _env

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


async def test_forget_reports_what_was_found_and_erased(make_settings, capsys):
    from plainsight.consumers.kafka import ensure_topics

    s = make_settings()
    await ensure_topics(s, s.kafka.bootstrap_servers)
    await produce(s, [("sess-stored", b"PSE-sealed-state"), ("sess-gone", b"PSE-x"), ("sess-gone", None)],
                  topic=s.topics.state)

    assert await run_forget(s, ["sess-stored", "sess-gone", "never-existed"]) == 0
    err = capsys.readouterr().err
    assert "sess-stored: stored state found" in err
    assert "sess-gone: already erased" in err
    assert "never-existed: no stored state found" in err
    assert "erased 1 of 3 session(s)" in err


def test_eval_refuses_a_file_without_labels_unless_asked(tmp_path):
    f = tmp_path / "chats.jsonl"
    f.write_text(json.dumps({"id": "d1", "turns": [{"speaker": "student", "text": "I am Olga, hi"}]}) + "\n")
    proc = subprocess.run(PLAINSIGHT + ["eval", str(f), "--json"], capture_output=True, text=True, timeout=120,
                          env=_env())
    assert proc.returncode == 2 and "has no labels" in proc.stderr and not proc.stdout.strip()
    proc = subprocess.run(PLAINSIGHT + ["eval", str(f), "--json", "--unlabelled-as-clean"], capture_output=True,
                          text=True, timeout=120, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["overall"]["fp"] >= 1
    # a labelled file with no private values ("spans": []) is scored without the flag
    f.write_text(json.dumps({"id": "d1", "turns": [{"speaker": "student", "text": "2 + 2 = 4"}], "spans": []}) + "\n")
    proc = subprocess.run(PLAINSIGHT + ["eval", str(f), "--json"], capture_output=True, text=True, timeout=120,
                          env=_env())
    assert proc.returncode == 0, proc.stderr


def test_demo_file_reads_dialogues_and_turns(tmp_path):
    from plainsight.middleware.commands.demo import load_chats

    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join([
        json.dumps({"session_id": "s1", "turn_id": 1, "role": "student", "text": "hi I am Olga Petrova", "sent_at": 1}),
        json.dumps({"session_id": "s1", "turn_id": 2, "role": "tutor", "text": "Hi Olga!", "sent_at": 2}),
        json.dumps({"id": "d9", "turns": [{"speaker": "student", "text": "call me Bob"}, {"speaker": "tutor", "text": 3}]}),
        json.dumps({"session_id": "s2", "turns": [{"role": "student", "text": "hello"}]}),
        "[1, 2]",
    ]) + "\n")
    chats = load_chats(str(f))
    assert [c["session_id"] for c in chats] == ["s1", "d9", "s2"]
    assert chats[0]["turns"] == [{"role": "student", "text": "hi I am Olga Petrova"}, {"role": "tutor", "text": "Hi Olga!"}]
    assert chats[1]["turns"] == [{"role": "student", "text": "call me Bob"}]
    proc = subprocess.run(PLAINSIGHT + ["demo", "--file", str(f), "--rate", "200", "--json"], capture_output=True,
                          text=True, timeout=180, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["turns_received"] == summary["turns_sent"] == 4
    assert "turns[1].text" in proc.stderr and "Olga" not in proc.stderr
