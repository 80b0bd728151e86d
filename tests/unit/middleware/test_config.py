"""configs/default.yaml documents the defaults; env and flags override them."""

from pathlib import Path

import yaml

from tests.support import ROOT
from plainsight.middleware.config import Settings, load_settings



def _plain(d):
    if isinstance(d, dict):
        return {k: _plain(v) for k, v in d.items()}
    if hasattr(d, "get_secret_value"):
        return d.get_secret_value()
    return d


def test_default_yaml_matches_builtin_defaults():
    documented = yaml.safe_load((ROOT / "configs" / "default.yaml").read_text())
    builtin = _plain(Settings().model_dump())
    # every documented key exists with the built-in value, and every built-in key is documented
    def walk(a, b, path=""):
        assert set(a) == set(b), f"keys differ under {path or '<root>'}: {set(a) ^ set(b)}"
        for k in a:
            if isinstance(a[k], dict):
                walk(a[k], b[k], f"{path}.{k}")
            else:
                assert a[k] == b[k], f"{path}.{k}: yaml {a[k]!r} != default {b[k]!r}"
    walk(documented, builtin)


def test_env_overrides_yaml_and_flags_override_env(tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kafka:\n  bootstrap_servers: yaml:9092\n  group_id: g-yaml\ntopics:\n  input: in.yaml\n")
    monkeypatch.setenv("PLAINSIGHT_KAFKA__GROUP_ID", "g-env")
    s = load_settings(cfg)
    assert s.kafka.bootstrap_servers == "yaml:9092"
    assert s.kafka.group_id == "g-env"
    assert s.topics.input == "in.yaml"
    s = load_settings(cfg, kafka={"group_id": "g-flag", "bootstrap_servers": None})
    assert s.kafka.group_id == "g-flag"
    assert s.kafka.bootstrap_servers == "yaml:9092"


def test_blank_bootstrap_means_embedded(monkeypatch):
    monkeypatch.setenv("PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS", "")
    assert load_settings().kafka.bootstrap_servers is None
