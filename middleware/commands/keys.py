"""`plainsight keys generate|rotate`: make the surrogate secret and state keys, rotate state keys.

``generate`` prints a new secret and a new state key in the configuration (YAML) and environment
formats, or writes them to files (mode 0600) that ``--secret-file`` / ``--keys-file`` (or
``PLAINSIGHT_SURROGATE__SECRET_FILE`` / ``PLAINSIGHT_SURROGATE__KEYS_FILE``) then read.
``generate --key-only --keys-file F`` adds a new state key to an existing keys file and makes it
the active one (step 1 of a rotation; the secret stays: changing it changes every surrogate).

``rotate`` re-seals every stored session state in the compacted state topic under the active key
(consumers/rotate.py), prints the counts, and is safe to re-run. Rotation in full:

1. ``plainsight keys generate --key-only --keys-file keys.yaml`` (old key kept, new one active);
2. restart the workers with it (they read both keys, write with the new one);
3. ``plainsight keys rotate --keys-file keys.yaml --bootstrap-servers ...``;
4. remove the old key from the file, restart the workers.
"""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ._common import add_config_arguments

    sub = p.add_subparsers(dest="keys_command", metavar="ACTION")
    g = sub.add_parser("generate", help="print (or write to files) a new surrogate secret and state key",
                       description="print a new surrogate secret and state key in the config and env formats")
    g.add_argument("--format", choices=["config", "env", "both"], default="both", help="what to print (default both)")
    g.add_argument("--key-id", help="id of the new state key (default k-YYYYMMDD-xxxx)")
    g.add_argument("--key-only", action="store_true", help="a new state key only (the secret stays; rotation)")
    g.add_argument("--secret-file", metavar="FILE", help="write the secret to this new file (0600) instead of printing it")
    g.add_argument("--keys-file", metavar="FILE",
                   help="write the key to this file (0600); with --key-only an existing file gets the new key, made active")
    r = sub.add_parser("rotate", help="re-seal every stored session state under the active key",
                       description="re-seal every stored session state in the state topic under the active key")
    add_config_arguments(r, llm=False)
    r.add_argument("--keys-file", metavar="FILE", help="YAML/JSON file with the state keys (old and new, new active)")
    r.add_argument("--dry-run", action="store_true", help="count what would be re-sealed, write nothing")
    r.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    r.add_argument("--timeout", type=float, default=300.0, help="give up reading the topic after this many seconds")


def run(args: argparse.Namespace) -> int:
    cmd = getattr(args, "keys_command", None)
    if cmd == "generate":
        return generate(args)
    if cmd == "rotate":
        from ._common import run_async

        return run_async(rotate(args))
    print("plainsight keys: choose an action: generate, rotate", file=sys.stderr)
    return 2


# ------------------------------------------------------------------------------------ generate


def _yaml_str(v: str) -> str:
    import json

    return json.dumps(v)  # a JSON string is a valid YAML scalar


def generate(args: argparse.Namespace) -> int:
    import json
    import os

    from plainsight.middleware.keys import (SecretsError, new_key_b64, new_key_id, new_secret, read_keys_file,
                                 write_secret_file)

    kid = args.key_id or new_key_id()
    if not kid.isascii() or not kid or len(kid) > 255 or any(c.isspace() for c in kid):
        print("plainsight keys generate: --key-id must be 1-255 ASCII characters without spaces", file=sys.stderr)
        return 2
    key = new_key_b64()
    secret = None if args.key_only else new_secret()
    try:
        if args.keys_file:
            keys, active = {kid: key}, kid
            if args.key_only and os.path.exists(args.keys_file):
                old, _old_active = read_keys_file(args.keys_file)
                if kid in old:
                    raise SecretsError(f"key id {kid!r} is already in {args.keys_file}")
                keys = {**old, kid: key}
                _replace_file(args.keys_file, _keys_yaml(keys, kid))
                print(f"added state key {kid!r} to {args.keys_file} and made it active "
                      f"(kept: {', '.join(sorted(old))}); restart the workers, then run 'plainsight keys rotate'",
                      file=sys.stderr)
            else:
                write_secret_file(args.keys_file, _keys_yaml(keys, active))
                print(f"wrote state key {kid!r} to {args.keys_file} (mode 0600)", file=sys.stderr)
        if args.secret_file and secret is not None:
            write_secret_file(args.secret_file, secret + "\n")
            print(f"wrote the surrogate secret to {args.secret_file} (mode 0600)", file=sys.stderr)
    except SecretsError as exc:
        print(f"plainsight keys generate: {exc}", file=sys.stderr)
        return 2

    secret_shown = secret if not args.secret_file else None
    key_shown = key if not args.keys_file else None
    out: list[str] = []
    if args.format in ("config", "both"):
        out.append("# plainsight configuration (YAML); keep it out of version control")
        out.append("surrogate:")
        if args.secret_file:
            out.append(f"  secret_file: {_yaml_str(os.path.abspath(args.secret_file))}")
        elif secret_shown is not None:
            out.append(f"  secret: {_yaml_str(secret_shown)}")
        if args.keys_file:
            out.append(f"  keys_file: {_yaml_str(os.path.abspath(args.keys_file))}")
        else:
            out.append("  keys:")
            out.append(f"    {_yaml_str(kid)}: {_yaml_str(key_shown)}")
            out.append(f"  active_key_id: {_yaml_str(kid)}")
    if args.format in ("env", "both"):
        if out:
            out.append("")
        out.append("# environment")
        if args.secret_file:
            out.append(f"PLAINSIGHT_SURROGATE__SECRET_FILE={_sh(os.path.abspath(args.secret_file))}")
        elif secret_shown is not None:
            out.append(f"PLAINSIGHT_SURROGATE__SECRET={_sh(secret_shown)}")
        if args.keys_file:
            out.append(f"PLAINSIGHT_SURROGATE__KEYS_FILE={_sh(os.path.abspath(args.keys_file))}")
        else:
            out.append(f"PLAINSIGHT_SURROGATE__KEYS={_sh(json.dumps({kid: key_shown}))}")
            out.append(f"PLAINSIGHT_SURROGATE__ACTIVE_KEY_ID={_sh(kid)}")
    print("\n".join(out))
    if args.key_only and not args.keys_file:
        print("a new state key only: add it next to the current keys, make it active, restart the workers, "
              "then run 'plainsight keys rotate'", file=sys.stderr)
    return 0


def _sh(v: str) -> str:
    import shlex

    return shlex.quote(v)


def _keys_yaml(keys: dict[str, str], active: str) -> str:
    lines = ["# plainsight state keys (AES-256-GCM, base64); keep this file private", "keys:"]
    lines += [f"  {_yaml_str(k)}: {_yaml_str(v)}" for k, v in keys.items()]
    lines.append(f"active_key_id: {_yaml_str(active)}")
    return "\n".join(lines) + "\n"


def _replace_file(path: str, content: str) -> None:
    """Atomically replace ``path`` with ``content`` (mode 0600)."""
    import os
    import tempfile

    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".plainsight-keys-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# ------------------------------------------------------------------------------------ rotate


async def rotate(args: argparse.Namespace) -> int:
    import json

    from plainsight.consumers.rotate import rotate_state
    from plainsight.middleware.keys import SecretsError
    from plainsight.surrogate.crypto import StateCipher, StateCryptoError

    from ._common import settings_from_args

    settings = settings_from_args(args)
    bootstrap = settings.kafka.bootstrap_servers
    if not bootstrap:
        print("plainsight keys rotate: no Kafka configured (--bootstrap-servers or PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS); "
              "the embedded broker keeps nothing to rotate", file=sys.stderr)
        return 2
    try:
        cipher = StateCipher.from_settings(settings)
    except (SecretsError, StateCryptoError) as exc:
        print(f"plainsight keys rotate: {exc}", file=sys.stderr)
        return 2
    try:
        rep = await rotate_state(settings, bootstrap, cipher, dry_run=args.dry_run, timeout=args.timeout)
    except (LookupError, TimeoutError) as exc:
        print(f"plainsight keys rotate: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rep.to_dict()))
    else:
        print(rep.line())
    return 0
