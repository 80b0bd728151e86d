"""The one ending of the table build scripts: write the rebuilt table, or with ``--check`` say
whether the shipped file equals a rebuild (exit 1 when it differs)."""

from __future__ import annotations

from pathlib import Path


def write_or_check(out: Path, blob: bytes, check: bool) -> int:
    if check:
        same = out.exists() and out.read_bytes() == blob
        print(f"{out.name} is up to date" if same else f"{out.name} differs from a rebuild")
        return 0 if same else 1
    out.write_bytes(blob)
    print(f"wrote {out} ({len(blob) / 1024:.0f} KiB)")
    return 0
