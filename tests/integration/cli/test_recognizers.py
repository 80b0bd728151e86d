"""Recognizers added by configuration alone (issue #15): the contract, the registry, pattern
recognizers and deny lists, Presidio recognizers in (YAML files, predefined by name) and out
(PlainsightRecognizer inside a real AnalyzerEngine), and a new label end to end through
`plainsight serve` on its embedded broker."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest
import yaml

from plainsight.middleware.config import ConfigError, load_settings
from plainsight.middleware.detection.base import Span, TurnContext
from plainsight.middleware.detection.cascade import Cascade
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.detection.recognizer import Recognizer, luhn_valid, verhoeff_valid, mod11_valid, iban_valid
from plainsight.middleware.detection.registry import RecognizerRegistry
from plainsight.surrogate.pipeline import build_pipeline
from plainsight.middleware.schemas import InputTurn, OutputTurn

from tests.support import ROOT, TEST_SECRETS_ENV, free_port, produce, read_topic, secret_overrides, turn_bytes

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]

#: The configuration of the issue, as written.
ISSUE_YAML = r"""
detection:
  recognizers:
    - name: school_id
      label: STUDENT_ID
      patterns:
        - {regex: 'S-\d{4}-\d{5}', score: 0.9}
      context: [student id, id number]
"""
SHAPE = re.compile(r"S-\d{4}-\d{5}")


def _settings(tmp_path, text: str = ISSUE_YAML, **over):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    return load_settings(cfg, **secret_overrides(), **over)


def _turn(sid, i, text, role="student"):
    return InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=1.0)


# --------------------------------------------------------------------------- contract and registry

def test_issue_yaml_builds_a_registry_with_the_new_label(tmp_path):
    s = _settings(tmp_path)
    reg = RecognizerRegistry.from_settings(s.detection)
    assert reg.added_labels == ("STUDENT_ID",)
    assert "school_id" in reg.sources and "names" in reg.sources
    assert isinstance(reg.find("school_id"), Recognizer)
    assert all(isinstance(r, Recognizer) for r in reg.recognizers)
    # built-ins first, the configured one after them; name finding is held by the cascade
    assert [r.name for r in reg.recognizers][:3] == ["email", "email_obfuscated", "phone"]
    c = Cascade.from_settings(s)
    assert c.registry is reg and c.name_recognizer.name == "names"
    assert [r.name for r in c.fast_pass][-2:] == ["school_id", "names"]  # name finding: one recognizer, last
    spans = c.detect("Hi Maria, my student id is S-2024-00042", TurnContext(), SessionMemory())
    got = {(s.label, s.source) for s in spans}
    assert ("STUDENT_ID", "school_id") in got and ("NAME", "names") in got
    sid = next(s for s in spans if s.label == "STUDENT_ID")
    assert (sid.start, sid.end) == (27, 39) and sid.evidence.endswith("+context") and sid.score == 1.0


def test_a_configured_label_wins_over_the_generic_builtin_id(tmp_path):
    """"my student id is S-2024-00042" is also a generic ID_NUM to the built-in recognizer (0.96);
    the school's own STUDENT_ID wins whatever its score."""
    s = _settings(tmp_path, ISSUE_YAML.replace("score: 0.9", "score: 0.5"))
    c = Cascade.from_settings(s)
    spans = c.detect("my student id is S-2024-00042", TurnContext(), SessionMemory())
    assert [(x.label, x.source, x.score) for x in spans] == [("STUDENT_ID", "school_id", 0.85)]
    assert [x.label for x in Cascade().detect("my student id is S-2024-00042", TurnContext(), SessionMemory())] == [
        "ID_NUM"]


def test_pattern_scores_context_validator_and_word_bounds(tmp_path):
    s = _settings(tmp_path, """
detection:
  recognizers:
    - name: district_card
      label: LIBRARY_CARD
      patterns: [{regex: '\\d{4} \\d{4} \\d{4} \\d{4}', score: 0.3}]
      context: [library card]
      validator: luhn
    - name: houses
      label: HOUSE
      deny_list: [Gryffindor, Hufflepuff House]
""")
    reg = RecognizerRegistry.from_settings(s.detection)
    card = reg.find("district_card")
    ok = "4111 1111 1111 1111"
    bad = "4111 1111 1111 1112"
    assert card.analyze(f"the code {ok} works") == []  # 0.3 < min_score 0.4 without context
    hit = card.analyze(f"my library card is {ok}")
    assert [(x.label, x.score) for x in hit] == [("LIBRARY_CARD", 0.65)]
    assert card.analyze(f"my library card is {bad}") == []  # fails Luhn
    assert card.analyze(f"my library card is 9{ok}") == []  # inside a longer number
    houses = reg.find("houses")
    assert [m.evidence for m in houses.analyze("i'm in GRYFFINDOR, she is in hufflepuff  house")] == ["deny-list"] * 2
    assert houses.analyze("Gryffindors") == []


def test_a_runaway_user_regex_cannot_stall_the_fast_pass(tmp_path, caplog):
    s = _settings(tmp_path, "detection:\n  recognizers:\n"
                            "    - {name: slow, label: SLOW_ID, timeout_ms: 50, patterns: [{regex: '(a{1,5}){1,20}b'}]}\n"
                            "    - {name: quick, label: QUICK_ID, patterns: [{regex: 'Q-\\d{4}'}]}\n")
    c = Cascade.from_settings(s)
    text = "a" * 40 + " then Q-1234"
    t0 = time.monotonic()
    with caplog.at_level("WARNING"):
        spans = c.detect(text, TurnContext(), SessionMemory())
    assert time.monotonic() - t0 < 5
    assert [(x.label, x.source) for x in spans] == [("QUICK_ID", "quick")]
    assert "recognizer slow: pattern pattern0 ran past its time limit" in caplog.text and "aaaa" not in caplog.text


def test_checksums():
    assert luhn_valid("4111-1111-1111-1111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert mod11_valid("0-306-40615-2") and not mod11_valid("0-306-40615-3")
    assert verhoeff_valid("2363") and not verhoeff_valid("2364")


def test_bad_configuration_is_a_clear_error(tmp_path):
    with pytest.raises(Exception, match="regex does not compile"):
        _settings(tmp_path, "detection:\n  recognizers:\n    - {name: x, label: X_ID, patterns: [{regex: 'S-(', score: 0.9}]}\n")
    with pytest.raises(Exception, match="label"):
        _settings(tmp_path, "detection:\n  recognizers:\n    - {name: x, label: 'bad label', patterns: [{regex: 'a1'}]}\n")
    with pytest.raises(Exception, match="needs one of"):
        _settings(tmp_path, "detection:\n  recognizers:\n    - {name: x, label: X}\n")
    s = _settings(tmp_path, "detection:\n  presidio_recognizers: [NoSuchRecognizer]\n")
    with pytest.raises(ConfigError, match="NoSuchRecognizer"):
        RecognizerRegistry.build(s.detection)
    s = _settings(tmp_path, "detection:\n  presidio_recognizers: [SpacyRecognizer]\n")
    with pytest.raises(ConfigError, match="ner: true"):
        RecognizerRegistry.build(s.detection)
    s = _settings(tmp_path, "detection:\n  disabled_recognizers: [nope]\n")
    with pytest.raises(ConfigError, match="nope"):
        RecognizerRegistry.build(s.detection)


def test_disabled_builtin_recognizers(tmp_path):
    s = _settings(tmp_path, "detection:\n  disabled_recognizers: [url, names]\n")
    c = Cascade.from_settings(s)
    spans = c.detect("Hi Maria, see https://maria-lopez.blog/about", TurnContext(), SessionMemory())
    assert spans == []


class _GradeCode(Recognizer):
    """A plug-in recognizer that uses the session memory: a code is only PII once someone said so."""

    name = "grade_code"
    labels = ("GRADE_CODE",)
    descriptions = {"GRADE_CODE": "a student's grade code"}

    def __init__(self, prefix: str = "GC") -> None:
        self.rx = re.compile(re.escape(prefix) + r"\d{3}")

    def detect(self, text, ctx, memory, found=()):
        return [Span(m.start(), m.end(), "GRADE_CODE", self.name, 0.9, "plugin") for m in self.rx.finditer(text)]


def test_entry_point_plugin(tmp_path, monkeypatch):
    """A recognizer published by an installed package (entry point plainsight.recognizers)."""
    dist = tmp_path / "site" / "grade_plugin-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: grade-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[plainsight.recognizers]\ngrade_code = tests.integration.cli.test_recognizers:_GradeCode\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    s = _settings(tmp_path, "detection:\n  recognizers:\n    - {plugin: grade_code, options: {prefix: GX}}\n")
    reg = RecognizerRegistry.build(s.detection)
    assert reg.added_labels == ("GRADE_CODE",) and reg.descriptions["GRADE_CODE"] == "a student's grade code"
    c = Cascade(registry=reg)
    assert [(x.label, x.source) for x in c.detect("code GX123 GC123", TurnContext(), SessionMemory())] == [
        ("GRADE_CODE", "grade_code")]
    s = _settings(tmp_path, "detection:\n  recognizers:\n    - {plugin: not_installed}\n")
    with pytest.raises(ConfigError, match="not_installed"):
        RecognizerRegistry.build(s.detection)


# --------------------------------------------------------------------------- the new label, in process

def test_new_label_surrogate_shape_consistency_reidentification_and_tags(tmp_path):
    s = _settings(tmp_path)
    p = build_pipeline(s)
    assert "STUDENT_ID" in p.labels
    r1 = p.process_sync(_turn("a", 1, "my student id is S-2024-00042"))
    sur = r1.deid.text[len("my student id is "):]
    assert SHAPE.fullmatch(sur) and sur != "S-2024-00042"
    assert [(e.label, e.source) for e in r1.deid.entities] == [("STUDENT_ID", "school_id")]
    r2 = p.process_sync(_turn("a", 2, "S-2024-00042 or S-2023-11111?"))
    first, _, second = r2.deid.text.partition(" or ")
    assert first == sur and SHAPE.fullmatch(second.rstrip("?")) and second.rstrip("?") != sur
    # deterministic: another pipeline with the same secret gives the same surrogate
    assert build_pipeline(s).process_sync(_turn("a", 1, "my student id is S-2024-00042")).deid.text == r1.deid.text
    # another session: another surrogate
    other = p.process_sync(_turn("b", 1, "my student id is S-2024-00042")).deid.text
    assert other != r1.deid.text
    back = asyncio.run(p.reidentify(_turn("a", 3, f"Got it, {sur} is on the list.", role="tutor")))
    assert back.text == "Got it, S-2024-00042 is on the list."
    assert [e.label for e in back.entities] == ["STUDENT_ID"]
    tagged = build_pipeline(_settings(tmp_path, ISSUE_YAML.replace("score: 0.9}", "score: 0.9}\n      surrogate: tag")))
    assert tagged.process_sync(_turn("a", 1, "S-2024-00042")).deid.text == "[STUDENT_ID_1]"


def test_recognizers_command_lists_the_fast_pass_and_tries_a_turn(tmp_path, capsys):
    from plainsight.middleware.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(ISSUE_YAML)
    assert main(["recognizers", "--config", str(cfg), "--json", "--try", "my student id is S-2024-00042"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in out["recognizers"]][-2:] == ["school_id", "names"]
    assert out["recognizers"][-2] == {"name": "school_id", "kind": "pattern", "labels": ["STUDENT_ID"]}
    assert out["added_labels"][0]["label"] == "STUDENT_ID" and out["added_labels"][0]["surrogate"] == "shape"
    assert [(f["start"], f["end"], f["label"], f["source"]) for f in out["found"]] == [(17, 29, "STUDENT_ID", "school_id")]
    assert SHAPE.fullmatch(out["deidentified"][17:]) and "S-2024-00042" not in json.dumps(out)


def test_new_label_with_the_presidio_engine(tmp_path):
    s = _settings(tmp_path, ISSUE_YAML + "  engine: presidio\n")
    p = build_pipeline(s)
    out = p.process_sync(_turn("a", 1, "my student id is S-2024-00042")).deid
    assert [(e.label, e.source) for e in out.entities] == [("STUDENT_ID", "school_id")]
    assert SHAPE.fullmatch(out.text[len("my student id is "):])


def test_new_label_reaches_the_llm_prompt(tmp_path):
    from plainsight.middleware.llm.align import align_marked
    from plainsight.middleware.pipeline import build_llm_stage

    s = _settings(tmp_path, ISSUE_YAML.replace("      context:", "      description: a school student ID\n      context:"),
                  llm={"base_url": "http://127.0.0.1:9/v1", "api_key": "x"})
    stage = build_llm_stage(s)
    assert "STUDENT_ID" in stage.labels
    o, c = stage.prompts.markers["STUDENT_ID"]
    assert len({o, c}) == 2 and all(m not in {"@@@", "###"} for m in (o, c))
    system = stage.prompts.marking("S-2024-00042", "student", [])[0]["content"]
    assert "a school student ID" in system and o in system
    al = align_marked("id S-2024-00042 ok", f"id {o}S-2024-00042{c} ok", stage.prompts.markers)
    assert [(f.start, f.end, f.label) for f in al.spans] == [(3, 15, "STUDENT_ID")]


def test_eval_scores_the_new_label(tmp_path):
    data = tmp_path / "ids.jsonl"
    text = "my student id is S-2024-00042"
    data.write_text(json.dumps({"id": "d1", "turns": [{"speaker": "student", "text": text}], "spans": [
        {"turn": 0, "start": 17, "end": 29, "label": "STUDENT_ID", "text": "S-2024-00042"}]}) + "\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(ISSUE_YAML)
    proc = subprocess.run(PLAINSIGHT + ["eval", str(data), "--config", str(cfg), "--json"], capture_output=True,
                          text=True, timeout=180, env={**os.environ, **TEST_SECRETS_ENV})
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    per = out["per_label"]["STUDENT_ID"]
    assert per["tp"] == 1 and per["fp"] == 0 and per["fn"] == 0, per


# --------------------------------------------------------------------------- Presidio in

PRESIDIO_YAML = """
recognizers:
  - name: "District login recognizer"
    supported_language: "en"
    supported_entity: "DISTRICT_LOGIN"
    patterns:
      - name: "district login"
        regex: "\\\\bdl-[a-z]{3}\\\\d{4}\\\\b"
        score: 0.6
    context:
      - login
"""


async def test_presidio_yaml_file_and_predefined_recognizer_in_the_worker(make_settings, tmp_path):
    from plainsight.consumers.worker import Worker

    yml = tmp_path / "presidio_recognizers.yaml"
    yml.write_text(PRESIDIO_YAML)
    s = make_settings(detection={"recognizers": [{"presidio_yaml": str(yml)}],
                                 "presidio_recognizers": ["CreditCardRecognizer"]})
    reg = RecognizerRegistry.from_settings(s.detection)
    assert {"District_login_recognizer", "CreditCardRecognizer"} <= set(reg.sources)
    w = Worker(s, s.kafka.bootstrap_servers)
    await w.start()
    task = asyncio.create_task(w.run())
    await w.wait_ready(30)
    card = "4012 8888 8888 1881"
    try:
        await produce(s, [("s1", turn_bytes("s1", 1, f"my login is dl-abc1234 and I paid with {card} yesterday"))])
        outs = await read_topic(s, s.topics.output, 1)
    finally:
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    out = OutputTurn.model_validate_json(outs[0].value)
    got = {(e.label, e.source) for e in out.entities}
    assert ("DISTRICT_LOGIN", "District_login_recognizer") in got
    assert ("ID_NUM", "CreditCardRecognizer") in got
    assert "dl-abc1234" not in out.text and card not in out.text
    login = next(e for e in out.entities if e.label == "DISTRICT_LOGIN")
    assert re.fullmatch(r"[a-z]{2}-[a-z]{3}\d{4}", out.text[login.start:login.end])


def test_presidio_yaml_path_is_relative_to_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "recs.yaml").write_text(PRESIDIO_YAML)
    cfg = tmp_path / "conf" / "plainsight.yaml"
    cfg.write_text("detection:\n  recognizers:\n    - {presidio_yaml: recs.yaml, labels: {DISTRICT_LOGIN: USERNAME}}\n")
    monkeypatch.chdir(tmp_path)
    s = load_settings(cfg, **secret_overrides())
    reg = RecognizerRegistry.from_settings(s.detection)
    rec = reg.find("District_login_recognizer")
    assert rec.labels == ("USERNAME",) and reg.added_labels == ()
    hit = rec.analyze("my login: dl-xyz0042")
    assert [(h.label, h.evidence) for h in hit] == [("USERNAME", "district login+context")]
    assert hit[0].score == 0.95


def test_presidio_registry_configuration_file(tmp_path, caplog):
    """The other documented Presidio format (a registry configuration: supported_languages and
    recognizers typed predefined/custom), loaded with RecognizerRegistryProvider; NLP-backed
    recognizers are skipped unless the entry accepts the cost."""
    yml = tmp_path / "registry.yaml"
    yml.write_text("""
supported_languages: [en]
global_regex_flags: 26
recognizers:
  - name: IbanRecognizer
    type: predefined
  - name: SpacyRecognizer
    type: predefined
  - name: Badge recognizer
    type: custom
    supported_entity: BADGE
    patterns:
      - {name: badge, regex: '\\bBDG-\\d{6}\\b', score: 0.8}
""")
    s = _settings(tmp_path, f"detection:\n  recognizers:\n    - {{presidio_yaml: {yml}}}\n")
    with caplog.at_level("WARNING"):
        reg = RecognizerRegistry.build(s.detection)
    assert [r.name for r in reg.recognizers][-2:] == ["IbanRecognizer", "Badge_recognizer"]
    assert "SpacyRecognizer skipped" in caplog.text
    p = build_pipeline(s, detector=Cascade(registry=reg))
    out = p.process_sync(_turn("a", 1, "my badge is bdg-123456 ok")).deid
    assert [(e.label, e.source) for e in out.entities] == [("BADGE", "Badge_recognizer")]
    assert re.fullmatch(r"my badge is [a-z]{3}-\d{6} ok", out.text) and "123456" not in out.text


def test_presidio_predefined_by_name_detects_what_the_builtins_do_not(tmp_path):
    s = _settings(tmp_path, "detection:\n  presidio_recognizers: [CreditCardRecognizer, IpRecognizer, "
                            "{name: UsSsnRecognizer, label: SSN}]\n")
    reg = RecognizerRegistry.from_settings(s.detection)
    assert set(reg.added_labels) == {"IP_ADDRESS", "SSN"}
    p = build_pipeline(s)
    out = p.process_sync(_turn("a", 1, "the server is at 192.168.10.23, ok?")).deid
    assert [(e.label, e.source) for e in out.entities] == [("IP_ADDRESS", "IpRecognizer")]
    ip = out.text[out.entities[0].start:out.entities[0].end]
    assert ip != "192.168.10.23" and re.fullmatch(r"\d{3}\.\d{3}\.\d{2}\.\d{2}", ip)
    assert all(0 <= int(x) <= 255 for x in ip.split("."))  # still fits Presidio's IPv4 pattern


def test_presidio_ner_recognizer_only_when_asked_and_only_the_entities_asked(tmp_path):
    s = _settings(tmp_path, "detection:\n  presidio_recognizers:\n"
                            "    - {name: SpacyRecognizer, ner: true, entities: [PERSON], label: NAME}\n")
    reg = RecognizerRegistry.from_settings(s.detection)
    rec = reg.find("SpacyRecognizer")
    assert rec.labels == ("NAME",) and reg.added_labels == ()
    spans = rec.detect("John Smith visited Paris on Monday.", TurnContext(), SessionMemory())
    assert [(x.start, x.end, x.label) for x in spans] == [(0, 10, "NAME")]
    s = _settings(tmp_path, "detection:\n  presidio_recognizers: [{name: SpacyRecognizer, ner: true, entities: [ZIP]}]\n")
    with pytest.raises(ConfigError, match="ZIP"):
        RecognizerRegistry.build(s.detection)


# --------------------------------------------------------------------------- Presidio out

def test_plainsight_recognizer_inside_a_real_analyzer_engine():
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry as PresidioRegistry

    from plainsight.middleware.detection.presidio_engine import pinned_nlp_engine
    from plainsight.middleware.detection.presidio_out import PlainsightRecognizer

    engine = pinned_nlp_engine()
    default = PresidioRegistry(supported_languages=["en"])
    default.load_predefined_recognizers(nlp_engine=engine, languages=["en"])
    baseline = AnalyzerEngine(registry=default, nlp_engine=engine, supported_languages=["en"])
    texts = {"ok so my name is amara and i dont get fractions": "amara",
             "thx priya i get it now": "priya",
             "bye mateo see u tmrw": "mateo",
             "good job aisha, next one": "aisha",
             "hi im jildau, can u help with q3": "jildau"}

    def persons(analyzer, text, **kw):
        return [text[r.start:r.end] for r in analyzer.analyze(text=text, language="en", entities=["PERSON"], **kw)]

    missed = [name for text, name in texts.items() if name not in persons(baseline, text)]
    assert len(missed) >= 3, "the default Presidio set is expected to miss lowercase chat names"

    with_ps = PresidioRegistry(supported_languages=["en"])
    with_ps.load_predefined_recognizers(nlp_engine=engine, languages=["en"])
    names = PlainsightRecognizer()
    with_ps.add_recognizer(names)
    analyzer = AnalyzerEngine(registry=with_ps, nlp_engine=engine, supported_languages=["en"])
    for text, name in texts.items():
        assert name in persons(analyzer, text), text
    res = analyzer.analyze(text="ok so my name is amara", language="en", entities=["PERSON"], return_decision_process=True)
    mine = [r for r in res if r.recognition_metadata.get("recognizer_name") == "PlainsightRecognizer"]
    assert mine and "self-introduction" in mine[0].analysis_explanation.textual_explanation

    # names in other scripts, introduced in the turn
    res = analyzer.analyze(text="привет, меня зовут Дима", language="en", entities=["PERSON"])
    assert [(r.start, r.end) for r in res if r.recognition_metadata.get("recognizer_name") == "PlainsightRecognizer"] == [(19, 23)]

    # session memory: a person introduced in turn 1 is found by a lone lowercase mention later
    memory = names.new_memory()
    with names.session(memory, role="student"):
        analyzer.analyze(text="my name is jildau", language="en")
    assert "jildau" not in persons(analyzer, "jildau got 5")
    with names.session(memory, role="tutor"):
        res = analyzer.analyze(text="jildau got 5", language="en", entities=["PERSON"], return_decision_process=True)
    assert [(r.start, r.end) for r in res] == [(0, 6)]
    assert "confirmed in this conversation" in res[0].analysis_explanation.textual_explanation


def test_the_readme_presidio_example_runs():
    from pathlib import Path

    example = ROOT / "examples" / "presidio_names.py"
    proc = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("PERSON 17 22") and "self-introduction" in lines[0]
    assert lines[1:] == ["student ['jildau']", "tutor ['jildau']"]


# --------------------------------------------------------------------------- serve, end to end

def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, r.read().decode()
    except Exception as exc:  # noqa: BLE001 - not up yet
        return getattr(exc, "code", 0) or 0, ""


@pytest.mark.slow
async def test_serve_with_a_student_id_from_yaml_only(tmp_path):
    """`plainsight serve --config` with the issue's YAML exactly as written, on the embedded broker:
    detected, same-shape surrogate, consistent in the session, restored in a tutor reply, counted
    in /metrics, and the raw values nowhere in outputs, logs (DEBUG), DLQ or state."""
    import threading

    mport = free_port()
    cfg = tmp_path / "school.yaml"
    cfg.write_text(ISSUE_YAML)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_")}
    proc = subprocess.Popen(PLAINSIGHT + ["serve", "--config", str(cfg), "--metrics-port", str(mport),
                                          "--max-runtime", "150"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**env, **TEST_SECRETS_ENV, "PLAINSIGHT_LOGGING__LEVEL": "DEBUG"})
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    raw = ["S-2024-00042", "S-2023-11111"]
    try:
        deadline = time.monotonic() + 90
        while _get(f"http://127.0.0.1:{mport}/readyz")[0] != 200:
            assert proc.poll() is None, "".join(lines)[-3000:]
            assert time.monotonic() < deadline, "serve did not become ready"
            await asyncio.sleep(0.3)
        bootstrap = next(m.group(1) for l in list(lines)
                         if (m := re.search(r"embedded in-memory broker on (\S+:\d+)", l)))
        s = load_settings(kafka={"bootstrap_servers": bootstrap}, **secret_overrides())
        await produce(s, [
            ("sess-1", turn_bytes("sess-1", 1, f"hi, my student id is {raw[0]}")),
            ("sess-1", turn_bytes("sess-1", 2, f"sorry, it's {raw[0]} not {raw[1]}")),
            ("sess-1", f'{{"session_id": "sess-1", "text": "{raw[0]}"'.encode()),  # broken JSON → DLQ
        ])
        outs = await read_topic(s, s.topics.output, 2)
        logs = await read_topic(s, s.topics.logs, 2)
        dlq = await read_topic(s, s.topics.dlq, 1)
        deid = sorted((OutputTurn.model_validate_json(m.value) for m in outs), key=lambda o: str(o.turn_id))
        sur = deid[0].text[len("hi, my student id is "):]
        assert SHAPE.fullmatch(sur) and sur not in raw
        assert [(e.label, e.source) for e in deid[0].entities] == [("STUDENT_ID", "school_id")]
        m = re.fullmatch(r"sorry, it's (\S+) not (\S+)", deid[1].text)
        assert m and m.group(1) == sur and SHAPE.fullmatch(m.group(2)) and m.group(2) not in raw + [sur]
        await produce(s, [("sess-1", turn_bytes("sess-1", 3, f"Thanks! I updated {sur}.", role="tutor",
                                                reply_token=json.loads(outs[0].value)["reply_token"]))],
                      topic=s.topics.replies_in)
        replies = await read_topic(s, s.topics.replies_out, 1)
        assert OutputTurn.model_validate_json(replies[0].value).text == f"Thanks! I updated {raw[0]}."
        state = await read_topic(s, s.topics.state, 1, timeout=10, idle=1.0)
        _, metrics = _get(f"http://127.0.0.1:{mport}/metrics")
        line = next(l for l in metrics.splitlines()
                    if l.startswith("plainsight_entities_total{") and 'label="STUDENT_ID"' in l and 'source="school_id"' in l)
        assert float(line.rsplit(" ", 1)[1]) >= 3
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(10)
    log_text = "".join(lines)
    assert proc.returncode == 0, log_text[-3000:]
    assert dlq and json.loads(dlq[0].value)["reason"] == "not_json"
    assert state, "the session's state was persisted"
    written = [m.value for m in outs + logs + dlq + state] + [log_text.encode(), metrics.encode()]
    for value in raw:
        for variant in (value, value[2:], value.replace("-", "")):
            assert not any(variant.encode() in w for w in written), f"raw value {variant!r} leaked"
