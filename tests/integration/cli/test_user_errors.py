"""Issue #11.3 and #11.4: a user's mistake ends in one clear line and exit status 2 — no traceback,
no value (it may be PII or a secret) — and unknown configuration keys are refused with the
closest known key, in the YAML file and in PLAINSIGHT_* variables."""

from __future__ import annotations

import pytest

from plainsight.middleware.cli import main
from plainsight.middleware.config import ConfigError, check_env_keys, config_resource, load_settings, load_yaml, unknown_keys

SECRETISH = "maria.lopez@example.com"


def _run(capsys, argv: list[str]) -> tuple[int, str]:
    rc = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err.strip().splitlines()[-1] if err.strip() else ""


@pytest.fixture
def dialogue(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text('{"id": "d1", "turns": [{"speaker": "student", "text": "hi"}]}\n', encoding="utf-8")
    return p


@pytest.fixture
def broken_yaml(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text(f"surrogate:\n  secret: {SECRETISH}\nworker: [1,2\n", encoding="utf-8")
    return p


def _commands(tmp_path, dialogue) -> dict[str, list[str]]:
    return {
        "redact": ["redact", str(dialogue), "-o", str(tmp_path / "out.jsonl")],
        "eval": ["eval", str(dialogue), "--unlabelled-as-clean"],
        "serve": ["serve"],
        "forget": ["forget", "s-1", "--bootstrap-servers", "127.0.0.1:1"],
        "bench detect": ["bench", "detect", "--file", str(dialogue), "--turns", "1"],
        "demo": ["demo"],
    }


@pytest.mark.parametrize("command", ["redact", "eval", "serve", "forget", "bench detect", "demo"])
def test_broken_yaml_is_one_line_with_the_position(capsys, tmp_path, dialogue, broken_yaml, command):
    argv = _commands(tmp_path, dialogue)[command] + ["--config", str(broken_yaml)]
    rc, line = _run(capsys, argv)
    assert rc == 2
    assert str(broken_yaml) in line and "not valid YAML at line 4" in line and "expected ',' or ']'" in line
    assert SECRETISH not in line


@pytest.mark.parametrize("command", ["redact", "eval", "serve", "forget", "bench detect", "demo"])
def test_config_file_that_does_not_exist(capsys, tmp_path, dialogue, command):
    rc, line = _run(capsys, _commands(tmp_path, dialogue)[command] + ["--config", str(tmp_path / "nope.yaml")])
    assert rc == 2 and line.endswith(f"config file not found: {tmp_path / 'nope.yaml'}")


def test_missing_input_files(capsys, tmp_path):
    nope = str(tmp_path / "nope.jsonl")
    for argv in (["redact", nope, "-o", str(tmp_path / "o.jsonl")], ["eval", nope], ["bench", "detect", "--file", nope],
                 ["demo", "--file", nope]):
        rc, line = _run(capsys, argv)
        assert rc == 2 and nope in line, (argv, line)


def test_wrong_typed_environment_override(capsys, monkeypatch, tmp_path, dialogue):
    monkeypatch.setenv("PLAINSIGHT_WORKER__MAX_IN_FLIGHT", SECRETISH)
    rc, line = _run(capsys, ["redact", str(dialogue), "-o", str(tmp_path / "o.jsonl")])
    assert rc == 2
    assert "PLAINSIGHT_WORKER__MAX_IN_FLIGHT (worker.max_in_flight): expected a valid integer" in line
    assert SECRETISH not in line


def test_wrong_typed_yaml_value_names_file_and_key(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(f"worker:\n  max_in_flight: {SECRETISH}\noutput: {{deid_mode: tags}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        load_settings(p)
    msg = str(e.value)
    assert f"config file {p}, key worker.max_in_flight: expected a valid integer" in msg
    assert "key output.deid_mode: expected 'surrogate', 'tag' or 'redact'" in msg
    assert SECRETISH not in msg and "tags" not in msg


def test_unknown_yaml_keys_are_refused_with_the_closest_key(capsys, tmp_path, dialogue):
    p = tmp_path / "typo.yaml"
    p.write_text("worker: {max_in_flihgt: 5}\ndetection: {recognizerz: 1}\nworkr: {}\n", encoding="utf-8")
    rc, line = _run(capsys, ["redact", str(dialogue), "-o", str(tmp_path / "o.jsonl"), "--config", str(p)])
    assert rc == 2
    assert "unknown key 'worker.max_in_flihgt' (closest known key: 'worker.max_in_flight')" in line
    assert "unknown key 'detection.recognizerz' (closest known key: 'detection.recognizers')" in line
    assert "unknown key 'workr' (closest known key: 'worker')" in line


def test_unknown_environment_keys_are_refused_with_the_closest_variable(capsys, monkeypatch, tmp_path, dialogue):
    monkeypatch.setenv("PLAINSIGHT_WORKER__MAX_IN_FLIHGT", "5")
    rc, line = _run(capsys, ["redact", str(dialogue), "-o", str(tmp_path / "o.jsonl")])
    assert rc == 2
    assert "PLAINSIGHT_WORKER__MAX_IN_FLIHGT names no setting (closest known: PLAINSIGHT_WORKER__MAX_IN_FLIGHT)" in line
    with pytest.raises(ConfigError, match="closest known: PLAINSIGHT_OUTPUT__DEID_MODE"):
        check_env_keys({"PLAINSIGHT_OUTPT__DEID_MODE": "tag"})


def test_known_keys_come_from_the_models():
    # settings paths that are not keys of a model (mappings, variables without "__") are accepted
    check_env_keys({"PLAINSIGHT_CONFIG": "x", "PLAINSIGHT_DATA_DIR": "x", "PLAINSIGHT_SURROGATE__KEYS__K1": "x",
                    "PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS": "h:1", "OTHER__THING": "x"})
    assert unknown_keys({"surrogate": {"keys": {"any-id": "x"}}, "detection": {"recognizers": [{"whatever": 1}]}}) == []
    # every key of the shipped configuration is known
    assert unknown_keys(load_yaml(config_resource("default.yaml"))) == []
    # a key added to a model is known without touching the check
    from pydantic import BaseModel

    class Extra(BaseModel):
        brand_new_key: int = 1

    assert unknown_keys({"brand_new_key": 2}, Extra) == []
    assert unknown_keys({"brand_new_kye": 2}, Extra) == ["unknown key 'brand_new_kye' (closest known key: 'brand_new_key')"]


def test_output_in_a_missing_directory_names_the_output(capsys, tmp_path, dialogue):
    out = tmp_path / "missing_dir" / "x.jsonl"
    rc, line = _run(capsys, ["redact", str(dialogue), "-o", str(out)])
    assert rc == 2
    assert str(out) in line and ".part" not in line
    assert not (tmp_path / "missing_dir").exists()
