"""The one ending of the table build scripts: the deterministic encoding of a table (compact JSON,
gzip with mtime 0 and no file name, so a rebuild is byte-identical), and writing the rebuilt table,
or with ``--check`` saying whether the shipped file equals a rebuild (exit 1 when it differs)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path


def encode(data, sort_keys: bool = True) -> bytes:
    raw = json.dumps(data, sort_keys=sort_keys, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(raw)
    return buf.getvalue()


def write_or_check(out: Path, blob: bytes, check: bool) -> int:
    if check:
        same = out.exists() and out.read_bytes() == blob
        print(f"{out.name} is up to date" if same else f"{out.name} differs from a rebuild")
        return 0 if same else 1
    out.write_bytes(blob)
    print(f"wrote {out} ({len(blob) / 1024:.0f} KiB)")
    return 0
