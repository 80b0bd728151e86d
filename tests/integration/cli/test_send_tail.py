"""Issue #22 item 11: `plainsight send` / `plainsight tail`, the README's guided path ("send a
turn to serve and read the outputs"), against a real `serve` on the embedded broker."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from plainsight.middleware.cli import main
from tests.support import TEST_SECRETS_ENV, cli_env

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


def test_send_then_tail_reads_the_deidentified_turn(make_settings, tmp_path, capsys):
    s = make_settings()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"topics": s.topics.model_dump(), "kafka": {
        "group_id": s.kafka.group_id, "partitions": 4, "session_timeout_ms": 2000, "heartbeat_interval_ms": 400}}))
    bs = s.kafka.bootstrap_servers
    serve = subprocess.Popen(PLAINSIGHT + ["serve", "--config", str(cfg), "--bootstrap-servers", bs, "--no-metrics",
                                           "--max-runtime", "150"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env={**cli_env(), **TEST_SECRETS_ENV})
    try:
        common = ["--bootstrap-servers", bs, "--config", str(cfg)]
        assert main(["send", *common, "--session", "s-7", "--turn-id", "1", "hi", "I'm", "Maria", "Lopez,",
                     "maria.lopez@gmail.com"]) == 0
        turns = tmp_path / "turns.jsonl"
        turns.write_text(json.dumps({"session_id": "s-8", "turn_id": 1, "role": "student",
                                     "text": "call me at (415) 555-0134", "sent_at": 1.0}) + "\n")
        assert main(["send", *common, "--file", str(turns)]) == 0
        assert "sent 1 turn to" in capsys.readouterr().err
        # serve starts while we wait: tail stops after 2 records, or 90 s without one
        assert main(["tail", *common, "--max", "2", "--timeout", "90"]) == 0
        cap = capsys.readouterr()
        outs = {o["session_id"]: o for o in map(json.loads, cap.out.splitlines())}
        assert set(outs) == {"s-7", "s-8"}, cap.err
        assert outs["s-7"]["turn_id"] == 1 and {e["label"] for e in outs["s-7"]["entities"]} == {"NAME", "EMAIL"}
        for raw in ("Maria", "Lopez", "maria.lopez", "555-0134"):
            assert raw not in cap.out
        assert "2 records from" in cap.err
        assert main(["tail", *common, "--topic", "logs", "--session", "s-8", "--max", "1", "--timeout", "60"]) == 0
        logs = capsys.readouterr().out.splitlines()
        assert len(logs) == 1 and json.loads(logs[0])["entities"][0]["label"] == "PHONE"
    finally:
        serve.terminate()
        try:
            serve.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            serve.kill()


def test_send_and_tail_user_errors_are_one_line(capsys, tmp_path):
    for argv, expect in ((["send", "hi"], "no broker given"),
                         (["send", "--bootstrap-servers", "127.0.0.1:1"], "give either TEXT or --file"),
                         (["tail", "--bootstrap-servers", "127.0.0.1:1", "--max", "0"], "--max must be >= 1"),
                         (["send", "--bootstrap-servers", "127.0.0.1:1", "--file", str(tmp_path / "nope.jsonl")],
                          "cannot open")):
        rc = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        cmd = argv[0]
        assert rc == 2 and len(err) == 1 and err[0].startswith(f"plainsight {cmd}: error: ") and expect in err[0], err


def test_send_reply_token_is_carried_in_the_record(broker, tmp_path, capsys):
    import asyncio
    import uuid

    from plainsight.middleware.config import load_settings
    from tests.support import read_topic

    topic = f"replies-{uuid.uuid4().hex[:8]}"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"topics": {"replies_in": topic}}))
    assert main(["send", "--bootstrap-servers", broker.bootstrap_servers, "--config", str(cfg), "--reply",
                 "--session", "s-1", "--reply-token", "tok-123", "Great work Paula"]) == 0
    s = load_settings(str(cfg), kafka={"bootstrap_servers": broker.bootstrap_servers})
    msgs = asyncio.run(read_topic(s, topic, 1, timeout=30))
    rec = json.loads(msgs[0].value)
    assert rec["reply_token"] == "tok-123" and rec["role"] == "tutor" and msgs[0].key == b"s-1"
