"""Issue #22 items 8-10 (and #28's redact items): every failure a user can cause ends in one line
``plainsight CMD: error: …`` with exit 2; one failing turn never ends a batch; redact follows one
size limit; redact keeps only the fields it knows."""

from __future__ import annotations

import json
import socket
import time

import pytest

from plainsight.middleware.cli import main
from plainsight.middleware.pipeline import Pipeline
from tests.support import TEST_SECRETS_ENV


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err
    return rc, cap.out, cap.err


def _one_error_line(err: str, cmd: str) -> str:
    lines = [l for l in err.strip().splitlines() if l.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"plainsight {cmd}: error: "), lines[0]
    return lines[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dialogue(*texts: str, id: str = "d1") -> str:
    return json.dumps({"id": id, "turns": [{"speaker": "student", "text": t} for t in texts]}) + "\n"


# ------------------------------------------------------------------ unreachable broker (item 9)
@pytest.mark.parametrize("argv", [["serve", "--no-metrics"], ["demo"], ["forget", "s-1"]],
                         ids=["serve", "demo", "forget"])
def test_unreachable_broker_is_one_line_within_the_connect_timeout(capsys, monkeypatch, argv):
    for k, v in TEST_SECRETS_ENV.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("PLAINSIGHT_KAFKA__CONNECT_TIMEOUT_S", "1.5")
    port = _free_port()  # nothing listens there
    t0 = time.monotonic()
    rc = main(argv + ["--bootstrap-servers", f"127.0.0.1:{port}"])
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    line = [l for l in err.splitlines() if l.startswith(f"plainsight {argv[0]}: error: ")]
    assert line and f"cannot reach the Kafka broker at 127.0.0.1:{port}" in line[0]
    assert "kafka.connect_timeout_s" in line[0]
    assert "Unable connect" not in err  # no aiokafka reconnect spam
    assert took < 15, took


def test_bad_bootstrap_address_is_one_line(capsys, monkeypatch):
    rc, _, err = _run(capsys, ["forget", "s-1", "--bootstrap-servers", "no-port-here"])
    assert rc == 2 and "is not HOST:PORT" in _one_error_line(err, "forget")


# ------------------------------------------------------------------ bad input files (item 9)
@pytest.mark.parametrize("content, expect", [
    (bytes(range(256)) * 4, "not a text file"),
    ("café\n".encode("latin-1"), "not UTF-8 text"),
    (b"", "is empty"),
    (b"\n  \n", "is empty"),
    (b"hello\nworld\n", "no line of"),
], ids=["binary", "latin-1", "empty", "blank", "plain-text"])
def test_redact_unreadable_input_is_one_line(capsys, tmp_path, content, expect):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_bytes(content)
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out)])
    assert rc == 2 and expect in _one_error_line(err, "redact")
    assert not out.exists()


@pytest.mark.parametrize("content, expect", [
    (bytes(range(256)) * 4, "not a text file"),
    ("café\n".encode("latin-1"), "not UTF-8 text"),
    (b"", "is empty"),
    (b"hello\n", "not JSON"),
], ids=["binary", "latin-1", "empty", "plain-text"])
def test_eval_unreadable_input_is_one_line(capsys, tmp_path, content, expect):
    src = tmp_path / "in.jsonl"
    src.write_bytes(content)
    rc, _, err = _run(capsys, ["eval", str(src), "--unlabelled-as-clean"])
    assert rc == 2 and expect in _one_error_line(err, "eval")


def test_redact_empty_stdin_is_one_line(capsys, monkeypatch, tmp_path):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(b""))))
    rc, _, err = _run(capsys, ["redact", "-", "-o", str(tmp_path / "o.jsonl")])
    assert rc == 2 and "stdin is empty" in _one_error_line(err, "redact")


# ------------------------------------------------------------------ mistyped flags (item 9)
@pytest.mark.parametrize("argv, cmd, suggestion", [
    (["redact", "in.jsonl", "--outptu", "o.jsonl"], "redact", "--output"),
    (["redact", "in.jsonl", "-o", "o.jsonl", "--strictt"], "redact", "--strict"),
    (["eval", "x.jsonl", "--by-sorce"], "eval", "--by-source"),
    (["bench", "detect", "--turnz", "3"], "bench detect", "--turns"),
    (["serve", "--bootstrap-servrs", "h:1"], "serve", "--bootstrap-servers"),
    (["demo", "--rat", "5", "--jsn"], "demo", "--json"),
])
def test_mistyped_flag_names_the_subcommand_and_suggests(capsys, argv, cmd, suggestion):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    line = _one_error_line(capsys.readouterr().err, cmd)
    assert f"did you mean {suggestion}?" in line


def test_mistyped_command_suggests_the_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["redcat", "x"])
    assert exc.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("plainsight: error: ") and "did you mean 'redact'?" in lines[0]


# ------------------------------------------------------------------ one failure never ends a batch (item 8)
@pytest.fixture
def failing_stage(monkeypatch):
    """The pipeline raises on any turn holding BOOM (a stand-in for a bug such as gen_id's IndexError)."""
    real = Pipeline.process_sync

    def process_sync(self, turn):
        if "BOOM" in turn.text:
            raise IndexError("string index out of range (maria.lopez@example.com)")
        return real(self, turn)

    monkeypatch.setattr(Pipeline, "process_sync", process_sync)


def test_redact_dead_letters_a_failing_turn_and_goes_on(capsys, tmp_path, failing_stage):
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    turn_line = json.dumps({"session_id": "s1", "turn_id": 1, "role": "student", "text": "BOOM maria.lopez@example.com",
                            "sent_at": 1.0})
    src.write_text(_dialogue("hi I'm Maria Lopez", "BOOM again", "bye Maria") + turn_line + "\n"
                   + _dialogue("hello from Tom", id="d2"))
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out), "--dlq", str(dlq)])
    assert rc == 0
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(lines) == 2 and [t["text"][:2] for t in lines[0]["turns"]] == ["hi", "by"]
    assert all("degraded" in t for d in lines for t in d["turns"])
    dls = [json.loads(l) for l in dlq.read_text().splitlines()]
    assert [d["reason"] for d in dls] == ["processing_error", "processing_error"]
    assert "IndexError" in dls[0]["detail"]
    for text in (out.read_text(), dlq.read_text(), err):
        assert "maria.lopez@example.com" not in text and "Maria" not in text
    assert "3 turns" in err and "2 dead-lettered" in err and "0 degraded" in err


def test_eval_dead_letters_a_failing_turn_and_goes_on(capsys, tmp_path, failing_stage):
    src = tmp_path / "in.jsonl"
    src.write_text(_dialogue("hi I'm Maria Lopez", "BOOM", "bye") + _dialogue("hello from Tom", id="d2"))
    rc, out, err = _run(capsys, ["eval", str(src), "--unlabelled-as-clean", "--json"])
    assert rc == 0
    s = json.loads(out)
    assert s["dead_lettered_turns"] == 1 and s["degraded_turns"] == 0 and s["turns"] == 4
    assert "Maria" not in err


# ------------------------------------------------------------------ LLM endpoint down (item 9)
def test_redact_with_llm_down_warns_once_and_counts_degraded(capsys, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(_dialogue("hi im Maria Lopez", "ask jake he sits next to me", "my friend june is here"))
    url = f"http://127.0.0.1:{_free_port()}/v1"
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out), "--llm-base-url", url, "--llm-model", "m",
                               "--llm-gate", "all"])
    assert rc == 0
    assert err.count("warning: the LLM stage failed") == 1
    assert "3 degraded" in err
    d = json.loads(out.read_text())
    assert [t["degraded"] for t in d["turns"]] == [True, True, True]
    assert "Maria" not in out.read_text() and "jake" not in out.read_text()


# ------------------------------------------------------------------ one size limit (item 10, #28)
def test_redact_dialogue_turns_follow_max_payload_bytes(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAINSIGHT_WORKER__MAX_PAYLOAD_BYTES", "1024")
    src, out, dlq = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "dlq.jsonl"
    big = "my email is maria.lopez@example.com " * 40  # 1.4 KB: over the limit
    turn_line = json.dumps({"session_id": "s1", "turn_id": 1, "role": "student", "text": big, "sent_at": 1.0})
    huge_line = _dialogue(*(["hi there"] * 20000))  # ~0.8 MB > 100 x 1 KB: refused before it is parsed
    src.write_text(_dialogue("hi I'm Maria", big, "bye") + turn_line + "\n" + huge_line)
    t0 = time.monotonic()
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out), "--dlq", str(dlq)])
    assert rc == 0 and time.monotonic() - t0 < 30
    d = json.loads(out.read_text().splitlines()[0])
    assert len(d["turns"]) == 2
    dls = [json.loads(l) for l in dlq.read_text().splitlines()]
    assert [x["reason"] for x in dls] == ["too_large"] * 3
    assert "turns[1].text" in dls[0]["detail"] and "limit 1024" in dls[0]["detail"]
    assert dls[2]["offset"] == 3 and dls[2]["payload_bytes"] > 100 * 1024
    assert "maria.lopez" not in out.read_text() + dlq.read_text() + err


# ------------------------------------------------------------------ #28: redact keeps only known fields
def test_redact_drops_unknown_fields_and_digests_an_id_holding_pii(capsys, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rec = {"id": "dlg-maria.lopez@gmail.com", "source": "forum", "student_name": "Maria Lopez",
           "notes": "call 415-555-0134", "turns": [{"speaker": "student", "text": "hi, it's Maria"}]}
    src.write_text(json.dumps(rec) + "\n" + json.dumps({**rec, "turns": [{"speaker": "student", "text": "again"}]}) + "\n")
    secret = tmp_path / "secret"
    secret.write_text("a-test-secret-of-enough-length-0123456789abcdef\n")
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out), "--secret-file", str(secret)])
    assert rc == 0
    a, b = (json.loads(l) for l in out.read_text().splitlines())
    assert set(a) == {"id", "source", "turns"} and a["source"] == "forum"
    assert a["id"].startswith("id-") and a["id"] == b["id"]  # a keyed digest: stable, linkable within the file
    for raw in ("maria", "Maria", "Lopez", "415-555-0134"):
        assert raw not in out.read_text()
    assert err.count("dropped unknown field 'student_name'") == 1 and "dropped unknown field 'notes'" in err
    assert "Maria" not in err and "415" not in err
    # the same secret, the same digest (reproducible runs)
    out2 = tmp_path / "out2.jsonl"
    assert main(["redact", str(src), "-o", str(out2), "--secret-file", str(secret)]) == 0
    assert json.loads(out2.read_text().splitlines()[0])["id"] == a["id"]


def test_redact_unknown_fields_deidentify_setting(capsys, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rec = {"id": "d7", "student_name": "Maria Lopez", "notes": {"call": "call 415-555-0134", "n": 3},
           "turns": [{"speaker": "student", "text": "hi, it's Maria Lopez"}]}
    src.write_text(json.dumps(rec) + "\n")
    rc, _, err = _run(capsys, ["redact", str(src), "-o", str(out), "--unknown-fields", "deidentify"])
    assert rc == 0 and "dropped" not in err
    d = json.loads(out.read_text())
    assert d["id"] == "d7" and d["notes"]["n"] == 3
    assert "Maria" not in out.read_text() and "415-555-0134" not in out.read_text()
    # the same session: the field's surrogate is the turn's
    assert d["student_name"] in d["turns"][0]["text"]


def test_redact_turn_line_session_id_holding_pii_is_digested(capsys, tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps({"session_id": "maria.lopez@gmail.com", "turn_id": i, "role": "student",
                                       "text": f"hello {i}", "sent_at": 1.0, "extra": "Maria Lopez"}) + "\n"
                           for i in range(2)))
    rc, _, _ = _run(capsys, ["redact", str(src), "-o", str(out)])
    assert rc == 0
    a, b = (json.loads(l) for l in out.read_text().splitlines())
    assert a["session_id"].startswith("id-") and a["session_id"] == b["session_id"]
    assert "maria" not in out.read_text().lower()


@pytest.mark.parametrize("content, expect", [
    (bytes(range(256)) * 4, "not a text file"),
    ("café\n".encode("latin-1"), "not UTF-8 text"),
    (b"", "is empty"),
], ids=["binary", "latin-1", "empty"])
def test_demo_file_unreadable_is_one_line_before_any_broker(capsys, tmp_path, content, expect):
    src = tmp_path / "in.jsonl"
    src.write_bytes(content)
    rc, _, err = _run(capsys, ["demo", "--file", str(src)])
    assert rc == 2 and expect in _one_error_line(err, "demo")


def test_eval_with_llm_down_warns_once_and_counts_degraded(capsys, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(_dialogue("hi im Maria Lopez", "ask jake he sits next to me"))
    url = f"http://127.0.0.1:{_free_port()}/v1"
    rc, out, err = _run(capsys, ["eval", str(src), "--unlabelled-as-clean", "--json", "--llm-base-url", url,
                                 "--llm-model", "m", "--llm-gate", "all"])
    assert rc == 0
    s = json.loads(out)
    assert s["degraded_turns"] == 2 and sum(s["llm"]["degraded"].values()) == 2
    assert err.count("warning: 2 turns degraded") == 1
