"""Where the surrogate secret and the state keys come from, and when plainsight refuses to run.

Two secrets protect a deployment:

* ``surrogate.secret``: the HMAC key every surrogate derives from. Whoever knows it can test
  candidate names against a surrogate offline (a first-name list is enough).
* ``surrogate.keys`` (+ ``active_key_id``): the AES-256-GCM keys that seal each session's
  real-value ↔ surrogate mapping in the compacted state topic.

Neither has a usable built-in value. They come from the configuration, the environment
(``PLAINSIGHT_SURROGATE__SECRET``, ``PLAINSIGHT_SURROGATE__KEYS``) or files
(``surrogate.secret_file`` / ``surrogate.keys_file``, also ``PLAINSIGHT_SURROGATE__SECRET_FILE``,
``PLAINSIGHT_SURROGATE__KEYS_FILE`` and ``--secret-file`` / ``--keys-file``), never from a
command-line value. :func:`resolve_secrets` loads them and decides, per command:

* ``serve`` against a broker (state meant to last): both must be configured, else
  :class:`SecretsError` (the command prints its one-line message and exits 2);
* ``demo`` and ``serve`` on the in-memory embedded broker: missing ones are random for this
  process (nothing they protect outlives it);
* ``redact``: a missing secret is random for this run (unlinkable output; no key needed);
* ``--insecure-dev-keys``: the old public development values, reported by ``/readyz`` and the
  ``plainsight_insecure_dev_keys`` metric.

Values are never logged and never appear in error messages; :meth:`SecretsStatus.describe` names
key ids and where the secret came from, nothing else.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import secrets as _random
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

#: The public development secret of earlier versions (in the source, so it protects nothing).
#: Only ``--insecure-dev-keys`` uses it.
DEV_SECRET = "plainsight-dev-secret-change-me"
DEV_KEY_ID = "dev"

HOW_TO = (
    "make them with 'plainsight keys generate --secret-file FILE --keys-file FILE' and pass "
    "--secret-file/--keys-file (or set PLAINSIGHT_SURROGATE__SECRET_FILE and PLAINSIGHT_SURROGATE__KEYS_FILE); "
    "--insecure-dev-keys runs with the public development keys (local experiments only)"
)

MIN_SECRET_BYTES = 16


from .config import UsageError


class SecretsError(UsageError):
    """Secrets missing, unreadable or malformed (a user's mistake: one line, exit 2). The message
    never holds secret material."""


@dataclass
class SecretsStatus:
    #: "configured" | "ephemeral" (random for this process) | "insecure-dev" (public values)
    secret_source: str = "configured"
    secret_origin: str = "configuration"  # "file PATH", "configuration", "random", "public development value"
    #: state keys: "configured" | "ephemeral" | "insecure-dev" | "none" (not needed: no stored state)
    keys_source: str = "configured"
    key_ids: list[str] = field(default_factory=list)
    active_key_id: str | None = None

    @property
    def insecure(self) -> bool:
        return "insecure-dev" in (self.secret_source, self.keys_source)

    @property
    def ephemeral(self) -> bool:
        return "ephemeral" in (self.secret_source, self.keys_source)

    def describe(self) -> str:
        """One log line: where the secret came from and which key ids are loaded (never values)."""
        origin = {"configuration": "from the configuration or environment"}.get(self.secret_origin, self.secret_origin)
        if self.secret_origin.startswith("file "):
            origin = "from " + self.secret_origin
        if self.keys_source == "none":
            keys = "no state key (no state stored)"
        else:
            ids = ", ".join(f"{k} (active)" if k == self.active_key_id else k for k in self.key_ids)
            how = {"configured": "loaded", "ephemeral": "random for this process",
                   "insecure-dev": "PUBLIC development key"}[self.keys_source]
            keys = f"state keys ({how}): {ids}"
        return f"surrogate secret: {origin}; {keys}"


# ------------------------------------------------------------------------------------ files


def read_secret_file(path: str | os.PathLike[str], what: str = "surrogate secret") -> str:
    """The secret in ``path`` (surrounding whitespace and a trailing newline stripped)."""
    p = Path(path).expanduser()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SecretsError(f"{what} file not found: {p}") from None
    except OSError as exc:
        raise SecretsError(f"{what} file {p} cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        value = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise SecretsError(f"{what} file {p} is not UTF-8 text") from None
    if not value:
        raise SecretsError(f"{what} file {p} is empty")
    _warn_if_readable_by_others(p, what)
    return value


def read_keys_file(path: str | os.PathLike[str]) -> tuple[dict[str, str], str | None]:
    """``(key id → base64 key, active key id or None)`` from a YAML/JSON file.

    Accepted shapes: ``{"keys": {id: b64, ...}, "active_key_id": id}`` (what ``plainsight keys
    generate --keys-file`` writes) or a bare mapping ``{id: b64, ...}``.
    """
    import yaml

    p = Path(path).expanduser()
    text = read_secret_file(p, "state keys")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise SecretsError(f"state keys file {p} is not valid YAML/JSON") from None
    active = None
    if isinstance(data, dict) and isinstance(data.get("keys"), dict):
        active = data.get("active_key_id")
        extra = set(data) - {"keys", "active_key_id"}
        if extra:
            raise SecretsError(f"state keys file {p}: unknown entries {sorted(map(str, extra))}")
        data = data["keys"]
    if not isinstance(data, dict) or not data:
        raise SecretsError(f"state keys file {p} must map key ids to base64 keys")
    keys: dict[str, str] = {}
    for kid, v in data.items():
        if not isinstance(kid, str) or not isinstance(v, str):
            raise SecretsError(f"state keys file {p}: key ids and keys must be strings")
        keys[kid] = v
    if active is not None and not isinstance(active, str):
        raise SecretsError(f"state keys file {p}: active_key_id must be a string")
    return keys, active


def _warn_if_readable_by_others(p: Path, what: str) -> None:
    try:
        mode = p.stat().st_mode
    except OSError:  # pragma: no cover
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO) and not _is_container_secret(p):
        log.warning("%s file %s is readable by other users (chmod 600 it)", what, p)


def _is_container_secret(p: Path) -> bool:
    # Docker/Kubernetes mount secrets 0444/0644 on a private tmpfs; don't nag about those.
    s = str(p)
    return s.startswith(("/run/secrets/", "/var/run/secrets/", "/etc/secrets/"))


def write_secret_file(path: str | os.PathLike[str], content: str) -> None:
    """Create ``path`` with mode 0600; refuse to overwrite an existing file."""
    p = Path(path).expanduser()
    try:
        p.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise SecretsError(f"{p} exists; not overwriting it") from None
    except OSError as exc:
        raise SecretsError(f"cannot create {p} ({exc.strerror or type(exc).__name__})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(content)


# ------------------------------------------------------------------------------------ generating


def new_secret() -> str:
    """A fresh surrogate secret: 32 random bytes, URL-safe base64."""
    return _random.token_urlsafe(32)


def new_key_b64() -> str:
    """A fresh AES-256 state key, base64 of 32 random bytes."""
    return base64.b64encode(os.urandom(32)).decode("ascii")


def new_key_id() -> str:
    """``k-YYYYMMDD-xxxx``: sortable by creation date, unique enough to add next to old ones."""
    return f"k-{time.strftime('%Y%m%d', time.gmtime())}-{_random.token_hex(2)}"


def decode_key(key_id: str, b64: str) -> bytes:
    """32 key bytes from base64; errors name the key id, never the value."""
    try:
        raw = base64.b64decode(b64.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise SecretsError(f"state key {key_id!r} is not valid base64") from None
    if len(raw) != 32:
        raise SecretsError(f"state key {key_id!r} must be 32 bytes of base64 (got {len(raw)})")
    return raw


def active_key_id(key_ids, active: str | None) -> str:
    """The active state key id: the configured one, which must be among ``key_ids``, or the only
    key when just one is configured. Raises :class:`SecretsError`."""
    ids = list(key_ids)
    if active is None:
        if len(ids) != 1:
            raise SecretsError("surrogate.active_key_id must be set when several state keys are configured")
        active = ids[0]
    if active not in ids:
        raise SecretsError(f"surrogate.active_key_id {active!r} is not among the configured state keys")
    return active


def derive_dev_key(secret: bytes) -> bytes:
    """The state key derived from a secret (``--insecure-dev-keys``; public when the secret is)."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"plainsight-state-dev-key", info=b"v1").derive(secret)


def public_dev_key() -> bytes:
    """The state key earlier versions derived from :data:`DEV_SECRET` (public: in the source)."""
    return derive_dev_key(DEV_SECRET.encode("utf-8"))


# ------------------------------------------------------------------------------------ resolving


def _value(v) -> str | None:
    if v is None:
        return None
    return v.get_secret_value() if hasattr(v, "get_secret_value") else str(v)


def load_configured(settings) -> tuple[str | None, str, dict[str, str], str | None]:
    """``(secret or None, where it came from, keys id → b64, active key id)`` from settings,
    reading ``secret_file`` / ``keys_file``. Raises :class:`SecretsError` on conflicts."""
    s = settings.surrogate
    secret = _value(s.secret)
    origin = "configuration"
    secret_file = getattr(s, "secret_file", None)
    if secret_file:
        if secret:
            raise SecretsError("surrogate.secret and surrogate.secret_file are both set; keep one")
        secret = read_secret_file(secret_file)
        origin = f"file {secret_file}"
    if secret is not None and not secret.strip():
        secret = None
    keys = {kid: _value(v) or "" for kid, v in (s.keys or {}).items()}
    active = s.active_key_id
    keys_file = getattr(s, "keys_file", None)
    if keys_file:
        fkeys, factive = read_keys_file(keys_file)
        for kid, v in fkeys.items():
            if kid in keys and keys[kid].strip() != v.strip():
                raise SecretsError(f"state key {kid!r} is set differently in surrogate.keys and {keys_file}")
            keys[kid] = v
        if active is None:
            active = factive
    return secret, origin, keys, active


def resolve_secrets(
    settings,
    *,
    allow_ephemeral: bool = False,
    insecure_dev_keys: bool = False,
    need_keys: bool | None = None,
):
    """``(settings with surrogate.secret and surrogate.keys filled in, SecretsStatus)``.

    ``need_keys`` defaults to ``settings.session.persist``. Missing values become random for this
    process with ``allow_ephemeral``, the public development values with ``insecure_dev_keys``,
    and a :class:`SecretsError` otherwise. A configured value equal to the public development
    secret or key counts as missing.
    """
    from pydantic import SecretStr

    if need_keys is None:
        need_keys = bool(settings.session.persist)
    secret, origin, keys, active = load_configured(settings)
    status = SecretsStatus(secret_origin=origin)
    dev_key = public_dev_key()
    decoded = {kid: decode_key(kid, v) for kid, v in keys.items()}
    public = [kid for kid, k in decoded.items() if k == dev_key]
    if secret == DEV_SECRET or public:
        if not insecure_dev_keys:
            what = "surrogate.secret" if secret == DEV_SECRET else f"state key {public[0]!r}"
            raise SecretsError(f"{what} is the public development value from plainsight's source; {HOW_TO}")
    missing = []
    if secret is None:
        missing.append("surrogate secret")
    if need_keys and not keys:
        missing.append("state key")
    if missing and not (allow_ephemeral or insecure_dev_keys):
        raise SecretsError(f"no {' and no '.join(missing)} configured; {HOW_TO}")

    if secret is None:
        if insecure_dev_keys:
            secret, status.secret_source, status.secret_origin = DEV_SECRET, "insecure-dev", "PUBLIC development value"
        else:
            secret, status.secret_source, status.secret_origin = new_secret(), "ephemeral", "random for this process"
    elif secret == DEV_SECRET:
        status.secret_source, status.secret_origin = "insecure-dev", "PUBLIC development value"
    elif len(secret.encode("utf-8")) < MIN_SECRET_BYTES:
        raise SecretsError(f"the surrogate secret is shorter than {MIN_SECRET_BYTES} bytes; {HOW_TO}")

    if keys:
        status.keys_source = "insecure-dev" if public else "configured"
    elif not need_keys:
        status.keys_source = "none"
    elif insecure_dev_keys:
        # the old behaviour: a key derived from the secret (public when the secret is)
        keys = {DEV_KEY_ID: base64.b64encode(derive_dev_key(secret.encode("utf-8"))).decode("ascii")}
        active = DEV_KEY_ID
        status.keys_source = "insecure-dev"
    else:
        kid = f"ephemeral-{_random.token_hex(3)}"
        keys, active = {kid: new_key_b64()}, kid
        status.keys_source = "ephemeral"
    if keys:
        active = active_key_id(keys, active)
    status.key_ids = sorted(keys)
    status.active_key_id = active

    sur = settings.surrogate.model_copy(update={
        "secret": SecretStr(secret),
        "secret_file": None,
        "keys": {kid: SecretStr(v) for kid, v in keys.items()},
        "keys_file": None,
        "active_key_id": active,
    })
    sur._insecure_dev_keys = status.insecure
    return settings.model_copy(update={"surrogate": sur}), status


def secrets_env(secret: str | None = None, keys: dict[str, str] | None = None, active: str | None = None) -> dict[str, str]:
    """``PLAINSIGHT_SURROGATE__*`` environment variables for a secret and keys (fresh ones by
    default): for test and benchmark harnesses that start ``plainsight serve`` processes which
    must share them."""
    secret = secret or new_secret()
    if keys is None:
        kid = new_key_id()
        keys, active = {kid: new_key_b64()}, kid
    return {
        "PLAINSIGHT_SURROGATE__SECRET": secret,
        "PLAINSIGHT_SURROGATE__KEYS": json.dumps(keys),
        "PLAINSIGHT_SURROGATE__ACTIVE_KEY_ID": active or next(iter(keys)),
    }


def secrets_overrides(env: dict[str, str]) -> dict:
    """The same secrets as ``load_settings`` overrides (``{"surrogate": {...}}``)."""
    return {"surrogate": {
        "secret": env["PLAINSIGHT_SURROGATE__SECRET"],
        "keys": json.loads(env["PLAINSIGHT_SURROGATE__KEYS"]),
        "active_key_id": env["PLAINSIGHT_SURROGATE__ACTIVE_KEY_ID"],
    }}


def require_worker_secrets(settings) -> None:
    """A worker needs a configured secret (deterministic replays, several workers agreeing) and,
    when it stores state, a state key. Raises :class:`SecretsError` (with how to make them)."""
    secret, _origin, keys, _active = load_configured(settings)  # reads (and checks) the files too
    missing = []
    if secret is None:
        missing.append("surrogate secret")
    if settings.session.persist and not keys:
        missing.append("state key")
    if missing:
        raise SecretsError(f"no {' and no '.join(missing)} configured; {HOW_TO}")
