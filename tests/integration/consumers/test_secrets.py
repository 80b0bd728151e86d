"""Secrets that are not public (issue #16): no built-in surrogate secret or state key; serve
refuses to start without them; --insecure-dev-keys is reported; redact is unlinkable by default;
secrets from env and files, never logged; keys generate / rotate."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
import yaml

from plainsight.benchmarks.leak_scan import ValueSet, scan
from plainsight.consumers.worker import Worker
from plainsight.middleware.config import Settings, load_settings
from plainsight.middleware.keys import (DEV_SECRET, SecretsError, new_key_b64, public_dev_key, require_worker_secrets,
                             resolve_secrets)
from plainsight.surrogate import StateCipher, StateCryptoError, SurrogateReplacer
from plainsight.surrogate.crypto import MAGIC

from tests.support import free_port, produce, read_topic, start_worker, stop_worker, turn_bytes

PLAINSIGHT = [sys.executable, "-m", "plainsight.middleware.cli"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_") and k != "OPENAI_API_KEY"}
    env.update(extra)
    return env


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _cfg(s, tmp_path, name="c.yaml") -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"topics": s.topics.model_dump(), "kafka": {
        "group_id": s.kafka.group_id, "partitions": 4, "session_timeout_ms": 2000, "heartbeat_interval_ms": 400}}))
    return str(p)


def _write_secrets(tmp_path) -> tuple[str, str, str, str, str]:
    """(secret file, keys file, secret, key id, key) written by `plainsight keys generate`."""
    sf, kf = tmp_path / "secret", tmp_path / "keys.yaml"
    proc = subprocess.run(PLAINSIGHT + ["keys", "generate", "--secret-file", str(sf), "--keys-file", str(kf)],
                          capture_output=True, text=True, timeout=60, env=_env())
    assert proc.returncode == 0, proc.stderr
    doc = yaml.safe_load(kf.read_text())
    kid = doc["active_key_id"]
    return str(sf), str(kf), sf.read_text().strip(), kid, doc["keys"][kid]


# ------------------------------------------------------------------------------ policy (unit)


def test_no_public_default_and_resolution_policy():
    s = Settings()
    assert s.surrogate.secret is None and s.surrogate.keys == {}
    # serve against a broker: refused, one line saying how to make them
    with pytest.raises(SecretsError) as ei:
        resolve_secrets(s)
    msg = str(ei.value)
    assert "\n" not in msg and "plainsight keys generate" in msg and "--insecure-dev-keys" in msg
    # demo / embedded: random for the process, different each time
    s1, st1 = resolve_secrets(s, allow_ephemeral=True)
    s2, _ = resolve_secrets(s, allow_ephemeral=True)
    assert st1.ephemeral and not st1.insecure
    assert s1.surrogate.secret.get_secret_value() != s2.surrogate.secret.get_secret_value()
    assert StateCipher.from_settings(s1).active_key_id == st1.active_key_id
    # --insecure-dev-keys: the old public values, and the cipher accepts the public key only then
    s3, st3 = resolve_secrets(s, insecure_dev_keys=True)
    assert st3.insecure and s3.surrogate.secret.get_secret_value() == DEV_SECRET
    assert StateCipher.from_settings(s3).active_key_id == "dev"
    # the public dev secret configured explicitly counts as no secret
    with pytest.raises(SecretsError, match="public development value"):
        resolve_secrets(load_settings(surrogate={"secret": DEV_SECRET, "keys": {"k": new_key_b64()}}))
    with pytest.raises(SecretsError, match="public development value"):
        resolve_secrets(load_settings(surrogate={"secret": "x" * 32,
                                                 "keys": {"k": base64.b64encode(public_dev_key()).decode()}}))
    # redact: no key needed
    _s4, st4 = resolve_secrets(s, allow_ephemeral=True, need_keys=False)
    assert st4.keys_source == "none"
    with pytest.raises(SecretsError, match="shorter"):
        resolve_secrets(load_settings(surrogate={"secret": "short", "keys": {"k": new_key_b64()}}))


def test_workers_refuse_to_start_without_a_secret_and_key():
    with pytest.raises(SecretsError, match="plainsight keys generate"):
        Worker(Settings(), "127.0.0.1:1")
    with pytest.raises(SecretsError, match="state key"):
        require_worker_secrets(load_settings(surrogate={"secret": "s" * 32}))
    require_worker_secrets(load_settings(surrogate={"secret": "s" * 32}, session={"persist": False}))


def test_secrets_from_files_and_env_never_in_messages(tmp_path, monkeypatch):
    secret = "file-secret-" + "q" * 30
    key = new_key_b64()
    (tmp_path / "s").write_text(secret + "\n")
    (tmp_path / "k.json").write_text(json.dumps({"keys": {"k-file": key}, "active_key_id": "k-file"}))
    os.chmod(tmp_path / "s", 0o600)
    monkeypatch.setenv("PLAINSIGHT_SURROGATE__SECRET_FILE", str(tmp_path / "s"))
    monkeypatch.setenv("PLAINSIGHT_SURROGATE__KEYS_FILE", str(tmp_path / "k.json"))
    s = load_settings()
    resolved, st = resolve_secrets(s)
    assert resolved.surrogate.secret.get_secret_value() == secret and st.key_ids == ["k-file"]
    line = st.describe()
    assert "k-file (active)" in line and secret not in line and key not in line
    assert secret not in repr(resolved) and key not in repr(resolved)
    # the worker's pieces read the files themselves, too
    assert StateCipher.from_settings(s).key_ids == ["k-file"]
    a = SurrogateReplacer.from_settings(s).surrogate_for("Maria", "NAME", SurrogateReplacer(secret).new_state("x"))
    b = SurrogateReplacer(secret).surrogate_for("Maria", "NAME", SurrogateReplacer(secret).new_state("x"))
    assert a == b
    # both a secret value and a secret file: refused; bad files: clear errors without values
    monkeypatch.setenv("PLAINSIGHT_SURROGATE__SECRET", "another-secret-value-123456")
    with pytest.raises(SecretsError, match="both set"):
        resolve_secrets(load_settings())
    monkeypatch.delenv("PLAINSIGHT_SURROGATE__SECRET")
    (tmp_path / "k.json").write_text(json.dumps({"k-file": "bm90IGEga2V5"}))
    with pytest.raises(SecretsError) as ei:
        resolve_secrets(load_settings())
    assert "bm90IGEga2V5" not in str(ei.value) and "k-file" in str(ei.value)
    monkeypatch.setenv("PLAINSIGHT_SURROGATE__SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(SecretsError, match="not found"):
        resolve_secrets(load_settings())


def test_without_a_secret_surrogates_are_random_per_process_but_consistent_within_it():
    r1, r2 = SurrogateReplacer.from_settings(Settings()), SurrogateReplacer.from_settings(Settings())
    assert r1.surrogate_for("Maria", "NAME", r1.new_state("s")) == r2.surrogate_for("Maria", "NAME", r2.new_state("s"))
    dev = SurrogateReplacer(DEV_SECRET)
    # not the public secret's surrogates (a handful of names: one could coincide by chance)
    names = ["Maria", "Daniel", "Aisha", "Kevin", "Lucia", "Tomasz"]
    assert any(r1.surrogate_for(n, "NAME", r1.new_state("s")) != dev.surrogate_for(n, "NAME", dev.new_state("s"))
               for n in names)


# ------------------------------------------------------------------------------ serve


async def test_serve_against_a_broker_with_default_config_exits_2_and_produces_nothing(make_settings, tmp_path):
    s = make_settings()
    proc = subprocess.run(PLAINSIGHT + ["serve", "--config", _cfg(s, tmp_path), "--bootstrap-servers",
                                        s.kafka.bootstrap_servers, "--no-metrics", "--max-runtime", "30"],
                          capture_output=True, text=True, timeout=120, env=_env())
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and "plainsight keys generate" in lines[0] and "--insecure-dev-keys" in lines[0]
    # nothing produced: not even the topics were created
    from plainsight.consumers.kafka import make_consumer

    c = make_consumer(s, s.kafka.bootstrap_servers, group_id=None)
    await c.start()
    try:
        topics = await c.topics()
    finally:
        await c.stop()
    assert not {s.topics.output, s.topics.logs, s.topics.state, s.topics.input} & topics
    # the old public secret configured explicitly is refused the same way
    proc = subprocess.run(PLAINSIGHT + ["serve", "--config", _cfg(s, tmp_path), "--bootstrap-servers",
                                        s.kafka.bootstrap_servers, "--no-metrics", "--max-runtime", "30"],
                          capture_output=True, text=True, timeout=120,
                          env=_env(PLAINSIGHT_SURROGATE__SECRET=DEV_SECRET))
    assert proc.returncode == 2 and "public development value" in proc.stderr


def test_serve_on_the_in_memory_embedded_broker_uses_random_keys_and_says_so():
    proc = subprocess.run(PLAINSIGHT + ["serve", "--no-metrics", "--max-runtime", "2"], capture_output=True,
                          text=True, timeout=180, env=_env())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "surrogate secret: random for this process" in proc.stderr and "nothing stored outlives" in proc.stderr


async def test_serve_with_insecure_dev_keys_runs_and_readyz_reports_it(make_settings, tmp_path):
    s = make_settings()
    port = free_port()
    proc = subprocess.Popen(PLAINSIGHT + ["serve", "--config", _cfg(s, tmp_path), "--bootstrap-servers",
                                          s.kafka.bootstrap_servers, "--insecure-dev-keys", "--metrics-port", str(port),
                                          "--metrics-host", "127.0.0.1", "--max-runtime", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    try:
        await produce(s, [("s1", turn_bytes("s1", 0, "hi I'm Maria Lopez"))])
        outs = await read_topic(s, s.topics.output, 1, timeout=90)
        assert len(outs) == 1 and "Maria" not in outs[0].value.decode()
        deadline = time.monotonic() + 30
        while _get(f"http://127.0.0.1:{port}/readyz")[0] != 200 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        code, body = _get(f"http://127.0.0.1:{port}/readyz")
        assert code == 200 and "INSECURE" in body and "--insecure-dev-keys" in body
        _c, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert "plainsight_insecure_dev_keys 1.0" in metrics
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "INSECURE" in err and DEV_SECRET not in err


async def test_serve_with_secret_files_logs_key_ids_only_and_leaks_nothing(make_settings, tmp_path):
    """Secrets from files: the startup log names the key id, never a value; the leak scan finds
    neither PII nor secret material in outputs, state, logs or metrics."""
    s = make_settings()
    sf, kf, secret, kid, key = _write_secrets(tmp_path)
    port = free_port()
    proc = subprocess.Popen(PLAINSIGHT + ["serve", "--config", _cfg(s, tmp_path), "--bootstrap-servers",
                                          s.kafka.bootstrap_servers, "--secret-file", sf, "--keys-file", kf,
                                          "--metrics-port", str(port), "--metrics-host", "127.0.0.1",
                                          "--log-level", "DEBUG", "--max-runtime", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    canaries = [("c1", "Hi, my name is Zorvath Quellin, zorvath.quellin@canary-mail.org", ["Zorvath", "Quellin"])]
    try:
        await produce(s, [(sid, turn_bytes(sid, 0, text)) for sid, text, _v in canaries] + [("c1", b"\xff not json")])
        outs = await read_topic(s, s.topics.output, 1, timeout=90)
        state = await read_topic(s, s.topics.state, 1, timeout=30)
        dlq = await read_topic(s, s.topics.dlq, 1, timeout=30)
        _c, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        _c, ready = _get(f"http://127.0.0.1:{port}/readyz")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert f"{kid} (active)" in err and "INSECURE" not in ready
    assert "plainsight_insecure_dev_keys 0.0" in metrics
    vs = ValueSet()
    for sid, _t, vals in canaries:
        for v in vals:
            vs.add(sid, v, "canary")
    rep = scan(vs, outputs=[m.value for m in outs], state=[m.value for m in state], dlq=[m.value for m in dlq],
               logs=[err], metrics=[metrics], state_magic=MAGIC, secrets=[secret, key])
    assert rep.leaks == 0, rep.summary()
    # the scan does catch secret material where it must not be
    assert scan(vs, logs=[f"oops {key}"], secrets=[secret, key]).leaks == 1


# ------------------------------------------------------------------------------ redact


def test_redact_is_unlinkable_by_default_and_reproducible_with_a_secret_file(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(turn_bytes(f"s{i}", 0, "hi, I'm Maria Lopez and my friend is Daniel Chen").decode()
                             for i in range(4)) + "\n")

    def run(*extra):
        out = tmp_path / f"out-{time.monotonic_ns()}.jsonl"
        p = subprocess.run(PLAINSIGHT + ["redact", str(src), "-o", str(out), *extra], capture_output=True,
                           text=True, timeout=120, env=_env())
        assert p.returncode == 0, p.stderr[-2000:]
        return out.read_text(), p.stderr

    a, err_a = run()
    b, _ = run()
    assert "Maria" not in a and "Maria" not in b
    assert a != b, "two runs without a secret must not give the same surrogates"
    assert "random secret for this run" in err_a and "--secret-file" in err_a
    sf = tmp_path / "secret"
    sf.write_text("redact-secret-" + "z" * 30 + "\n")
    os.chmod(sf, 0o600)
    c, err_c = run("--secret-file", str(sf))
    d, _ = run("--secret-file", str(sf))
    assert c == d and "random secret" not in err_c and "redact-secret" not in err_c


# ------------------------------------------------------------------------------ keys generate


def test_keys_generate_prints_config_and_env_formats_and_writes_private_files(tmp_path):
    p = subprocess.run(PLAINSIGHT + ["keys", "generate", "--key-id", "k1"], capture_output=True, text=True,
                       timeout=60, env=_env())
    assert p.returncode == 0, p.stderr
    cfg_part, env_part = p.stdout.split("# environment")
    cfg = yaml.safe_load(cfg_part)["surrogate"]
    assert len(cfg["secret"]) >= 32 and len(base64.b64decode(cfg["keys"]["k1"])) == 32 and cfg["active_key_id"] == "k1"
    env = dict(l.split("=", 1) for l in env_part.strip().splitlines())
    assert env["PLAINSIGHT_SURROGATE__SECRET"] == cfg["secret"]
    assert json.loads(env["PLAINSIGHT_SURROGATE__KEYS"].strip("'")) == {"k1": cfg["keys"]["k1"]}
    # the printed config works
    cfgfile = tmp_path / "gen.yaml"
    cfgfile.write_text(cfg_part)
    _s, st = resolve_secrets(load_settings(cfgfile))
    assert st.key_ids == ["k1"] and not st.ephemeral
    # files: 0600, never overwritten; --key-only adds a key to a keys file and makes it active
    sf, kf, _secret, kid, _key = _write_secrets(tmp_path)
    assert os.stat(sf).st_mode & 0o777 == 0o600 and os.stat(kf).st_mode & 0o777 == 0o600
    again = subprocess.run(PLAINSIGHT + ["keys", "generate", "--secret-file", sf], capture_output=True, text=True,
                           timeout=60, env=_env())
    assert again.returncode == 2 and "not overwriting" in again.stderr
    add = subprocess.run(PLAINSIGHT + ["keys", "generate", "--key-only", "--keys-file", kf, "--key-id", "k2"],
                         capture_output=True, text=True, timeout=60, env=_env())
    assert add.returncode == 0, add.stderr
    doc = yaml.safe_load(open(kf))
    assert set(doc["keys"]) == {kid, "k2"} and doc["active_key_id"] == "k2"
    assert os.stat(kf).st_mode & 0o777 == 0o600


# ------------------------------------------------------------------------------ keys rotate


def _rotate(s, keys_file, *extra) -> dict:
    p = subprocess.run(PLAINSIGHT + ["keys", "rotate", "--bootstrap-servers", s.kafka.bootstrap_servers,
                                     "--keys-file", str(keys_file), "--json", *extra],
                       capture_output=True, text=True, timeout=120,
                       env=_env(PLAINSIGHT_TOPICS__STATE=s.topics.state))
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


async def test_keys_rotate_on_a_running_topic(make_settings, tmp_path):
    """States sealed with key A are readable after `keys rotate` with only key B configured;
    a state sealed with the public dev key is refused; re-running rotates nothing."""
    from plainsight.consumers.kafka import make_producer
    from plainsight.surrogate import SessionMapping

    key_a, key_b = new_key_b64(), new_key_b64()
    base = make_settings()
    secret = base.surrogate.secret.get_secret_value()
    only_a = make_settings(topics=base.topics.model_dump(), kafka={"group_id": base.kafka.group_id},
                           surrogate={"secret": secret, "keys": {"A": key_a}, "active_key_id": "A"})
    both = make_settings(topics=base.topics.model_dump(), kafka={"group_id": base.kafka.group_id},
                         surrogate={"secret": secret, "keys": {"A": key_a, "B": key_b}, "active_key_id": "B"})
    only_b = make_settings(topics=base.topics.model_dump(), kafka={"group_id": base.kafka.group_id},
                           surrogate={"secret": secret, "keys": {"B": key_b}, "active_key_id": "B"})
    sessions = [f"rot-{i}" for i in range(6)]

    # 1. a worker with key A writes the sessions' states
    w = Worker(only_a, only_a.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        await produce(only_a, [(sid, turn_bytes(sid, 0, "hi, I'm Maria Lopez")) for sid in sessions])
        first = await read_topic(only_a, only_a.topics.output, len(sessions), timeout=60)
        await asyncio.sleep(0.5)
    finally:
        await stop_worker(w, task)
    surrogate_of = {json.loads(m.value)["session_id"]: json.loads(m.value)["text"].split("I'm ")[1] for m in first}

    # a state sealed with the old public development key (as --insecure-dev-keys wrote them)
    dev = StateCipher({"dev": public_dev_key()}, "dev", allow_dev_key=True)
    p = make_producer(only_a, only_a.kafka.bootstrap_servers)
    await p.start()
    try:
        await p.send_and_wait(only_a.topics.state, key=b"rot-dev", value=dev.seal(SessionMapping(session_id="rot-dev")))
    finally:
        await p.stop()

    # 2. workers run with B active (A still configured) while the topic is rotated
    kf = tmp_path / "keys.yaml"
    kf.write_text(yaml.safe_dump({"keys": {"A": key_a, "B": key_b}, "active_key_id": "B"}))
    w = Worker(both, both.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        dry = _rotate(both, kf, "--dry-run")
        assert dry["resealed"] == len(sessions) and dry["dry_run"]
        rep = _rotate(both, kf)
        assert rep["resealed"] == len(sessions) and rep["refused_dev"] == 1 and rep["unreadable"] == 0
        again = _rotate(both, kf)  # safe to re-run
        assert again["resealed"] == 0 and again["current"] == len(sessions) and again["refused_dev"] == 1
    finally:
        await stop_worker(w, task)

    # 3. only key B: every rotated state opens, the sessions keep their surrogates
    w = Worker(only_b, only_b.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        await produce(only_b, [(sid, turn_bytes(sid, 1, "Maria Lopez again, hello")) for sid in sessions]
                      + [("rot-dev", turn_bytes("rot-dev", 0, "hello"))])
        outs = await read_topic(only_b, only_b.topics.output, 2 * len(sessions) + 1, timeout=60)
        await asyncio.sleep(0.3)
        undecodable = w.state_store.undecodable
    finally:
        await stop_worker(w, task)
    second = {json.loads(m.value)["session_id"]: json.loads(m.value)["text"] for m in outs
              if json.loads(m.value)["turn_id"] == 1}
    assert set(second) == set(sessions)
    for sid in sessions:
        assert second[sid].startswith(surrogate_of[sid]), (second[sid], surrogate_of[sid])
    assert undecodable == 1  # only the dev-sealed state: refused
    # every session's latest state is sealed under B; the dev-sealed one stays refused
    state = await read_topic(only_b, only_b.topics.state, 1, idle=0.5)
    cipher_b = StateCipher.from_settings(only_b)
    latest = {}
    for m in state:
        latest[m.key] = m.value
    for sid in sessions:
        blob = latest[sid.encode()]
        assert cipher_b.key_id_of(blob) == "B"
        cipher_b.decrypt(blob, sid)
    dev_blob = next(m.value for m in state if m.key == b"rot-dev")
    with pytest.raises(StateCryptoError, match="public development key"):
        cipher_b.decrypt(dev_blob, "rot-dev")


async def test_keys_rotate_never_sets_back_a_state_written_or_erased_during_the_rotation(make_settings):
    """A worker writes a session, `forget` erases another, between the rotation's snapshot and its
    rewrites: the newer record (re-sealed) and the tombstone end up last, not the rotated copy."""
    from plainsight.consumers.kafka import ensure_topics, make_producer
    from plainsight.consumers.rotate import rotate_state

    key_a, key_b = new_key_b64(), new_key_b64()
    s = make_settings(surrogate={"keys": {"A": key_a, "B": key_b}, "active_key_id": "B"})
    await ensure_topics(s, s.kafka.bootstrap_servers)
    ca = StateCipher.from_settings(make_settings(surrogate={"keys": {"A": key_a}, "active_key_id": "A"}))
    cb = StateCipher.from_settings(s)
    topic = s.topics.state
    p = make_producer(s, s.kafka.bootstrap_servers)
    await p.start()
    try:
        for sid in ("r1", "r2", "r3"):
            await p.send_and_wait(topic, key=sid.encode(), value=ca.encrypt(f"old {sid}".encode(), sid),
                                  headers=[("plainsight-writer", b"w-old")])

        async def concurrent_writes():
            await p.send_and_wait(topic, key=b"r1", value=ca.encrypt(b"newer r1", "r1"),
                                  headers=[("plainsight-writer", b"w-live")])
            await p.send_and_wait(topic, key=b"r2", value=None, headers=[("producer", b"plainsight-forget")])

        rep = await rotate_state(s, s.kafka.bootstrap_servers, cb, on_snapshot=concurrent_writes)
    finally:
        await p.stop()
    assert rep.resealed == 3 and rep.republished == 2, rep.to_dict()
    recs = await read_topic(s, topic, 3 + 2 + 3 + 2, idle=0.3)
    latest = {}
    for m in recs:
        latest[m.key] = m.value
    assert cb.key_id_of(latest[b"r1"]) == "B" and cb.decrypt(latest[b"r1"], "r1") == b"newer r1"
    assert latest[b"r2"] is None  # erased stays erased
    assert cb.decrypt(latest[b"r3"], "r3") == b"old r3"


def test_malformed_secret_settings_never_echo_the_value():
    for bad in ({"secret": ["topsecret-value"]}, {"keys": ["topsecret-key"]}, {"keys": {"a": ["topsecret-k"]}},
                {"keys": {"a": "topsecret-not-base64!"}}):
        with pytest.raises(ValueError) as ei:
            resolve_secrets(load_settings(surrogate={"secret": "s" * 32, **bad}))
        assert "topsecret" not in str(ei.value) and "topsecret" not in repr(ei.value)


def test_a_secret_file_readable_by_others_is_warned_about_by_path_only(tmp_path, caplog):
    import logging

    from plainsight.middleware.keys import read_secret_file

    f = tmp_path / "secret"
    f.write_text("open-secret-" + "w" * 30)
    os.chmod(f, 0o644)
    with caplog.at_level(logging.WARNING, logger="plainsight.middleware.keys"):
        assert read_secret_file(f).startswith("open-secret-")
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "readable by other users" in text and str(f) in text and "open-secret" not in text
    caplog.clear()
    os.chmod(f, 0o600)
    with caplog.at_level(logging.WARNING, logger="plainsight.middleware.keys"):
        read_secret_file(f)
    assert not caplog.records
