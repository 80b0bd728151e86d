"""Byte-identity check for refactors: the same input must give the same output bytes.

Runs ``redact``-style processing (the Python API, no Kafka) over a sample of every dev dialogue
file with a fixed secret, in three output configurations (surrogate/surrogate, tag/redact,
and a tutor-reply re-identification pass), and records per turn the JSON of both outputs,
the re-identified reply, and at the end of each dialogue the session's stored-state plaintext
(what the Kafka state store seals). ``--record F`` writes a digest file; ``--compare F``
compares against one and prints the first differences.

Usage (compare like with like: record from the commit before the change)::

    git worktree add /tmp/base <commit>
    export PLAINSIGHT_DATA_DIR=/work/shared/data/dev   # the base tree is not next to shared/
    (cd /tmp/base && PYTHONPATH=/tmp/base python /work/wt14/scripts/check_identical.py --record /tmp/base.txt)
    python scripts/check_identical.py --compare /tmp/base.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

SECRET = "check-identical-fixed-secret"


def _old_layout_alias() -> None:
    """A tree from before the one-namespace move (issue #26) has top-level ``middleware``,
    ``surrogate`` and ``consumers`` and no ``plainsight/`` folder: alias ``plainsight.<name>`` to
    the very module ``<name>`` (same objects, no second copy), so this script compares both layouts."""
    import importlib
    import importlib.abc
    import importlib.util
    import types

    root = Path.cwd()
    if (root / "plainsight").is_dir() or not (root / "middleware" / "__init__.py").exists():
        return

    class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.startswith("plainsight."):
                return importlib.util.spec_from_loader(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            module = importlib.import_module(spec.name[len("plainsight."):])
            self.original = getattr(module, "__spec__", None)
            return module

        def exec_module(self, module):
            module.__spec__ = self.original  # the import system set ours; resources need the real one

    top = types.ModuleType("plainsight")
    top.__path__ = []
    sys.modules["plainsight"] = top
    sys.meta_path.insert(0, _Alias())


_old_layout_alias()


def _data_dir() -> Path:
    from plainsight.middleware.evaluation import default_data_dir  # $PLAINSIGHT_DATA_DIR or ../shared/data/dev

    return default_data_dir()


def _compat() -> None:
    """Main mid-flight: a caller passing ``keeps=`` to a NameFinder that does not take it yet.
    Applied the same way to both sides of a comparison."""
    import inspect

    from plainsight.middleware.detection import names

    if "keeps" not in inspect.signature(names.NameFinder.find).parameters:
        orig = names.NameFinder.find

        def find(self, *a, keeps=None, **kw):
            return orig(self, *a, **kw)

        names.NameFinder.find = find


def _build(settings):
    try:  # after the architecture refactor: the composition root injects the replacer
        from plainsight.surrogate.pipeline import build_pipeline
    except ImportError:
        from plainsight.middleware.pipeline import Pipeline as build_pipeline
    return build_pipeline(settings)


def _codec(pipeline):
    from plainsight.middleware.state_codec import SessionCodec

    return SessionCodec(pipeline, cipher=None)


async def _run(every: int, limit: int | None) -> list[str]:
    from plainsight.middleware.config import Settings
    from plainsight.middleware.schemas import InputTurn

    _compat()
    lines: list[str] = []
    configs = [("surrogate", "surrogate"), ("tag", "redact")]
    files = sorted(_data_dir().glob("*.jsonl"))
    if not files:
        raise SystemExit(f"no dev dialogue files in {_data_dir()} (set PLAINSIGHT_DATA_DIR)")
    for deid_mode, logs_mode in configs:
        settings = Settings.model_validate(
            {"surrogate": {"secret": SECRET}, "output": {"deid_mode": deid_mode, "logs_mode": logs_mode}}
        )
        pipe = _build(settings)
        codec = _codec(pipe)
        for path in files:
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh):
                    if n % every or not line.strip():
                        continue
                    if limit is not None and n // every >= limit:
                        break
                    d = json.loads(line)
                    sid = f"{deid_mode}:{d['id']}"
                    meta = d.get("meta") if isinstance(d.get("meta"), dict) else {}
                    for i, t in enumerate(d["turns"]):
                        if not t["text"].strip():
                            continue
                        turn = InputTurn(session_id=sid, turn_id=i, role=str(t.get("speaker") or "student"),
                                         text=t["text"], sent_at=0.0, metadata=meta)
                        res = await pipe.process(turn)
                        lines.append(f"{sid}|{i}|deid|{res.deid.model_dump_json()}")
                        lines.append(f"{sid}|{i}|logs|{res.logs.model_dump_json()}")
                        if deid_mode == "surrogate":
                            reply = InputTurn(session_id=sid, turn_id=f"r{i}", role="tutor", text=res.deid.text,
                                              sent_at=0.0)
                            back = await pipe.reidentify(reply)
                            lines.append(f"{sid}|{i}|reid|{back.model_dump_json(exclude={'processed_at'})}")
                    state = pipe.sessions.peek(sid)
                    if state is not None:
                        lines.append(f"{sid}|state|{codec.to_plaintext(state).decode('utf-8')}")
                    pipe.sessions.drop(sid)
    return lines


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # the detector memory stores str hashes (problems_seen): fix the seed so runs compare
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--record", metavar="FILE")
    g.add_argument("--compare", metavar="FILE")
    ap.add_argument("--every", type=int, default=4, help="every N-th dialogue of each file (default 4)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many dialogues per file")
    args = ap.parse_args()
    lines = asyncio.run(_run(args.every, args.limit))
    digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
    if args.record:
        Path(args.record).write_text("\n".join([digest] + lines) + "\n", encoding="utf-8")
        print(f"recorded {len(lines)} outputs, sha256 {digest}")
        return 0
    ref = Path(args.compare).read_text(encoding="utf-8").splitlines()
    ref_digest, ref_lines = ref[0], ref[1:]
    if ref_digest == digest:
        print(f"IDENTICAL: {len(lines)} outputs, sha256 {digest}")
        return 0
    diffs = [(a, b) for a, b in zip(ref_lines, lines) if a != b]
    print(f"DIFFERENT: {len(diffs)} of {len(ref_lines)} lines differ (now {len(lines)} lines)")
    for a, b in diffs[:5]:
        print("  before:", a[:300])
        print("  after: ", b[:300])
    return 1


if __name__ == "__main__":
    sys.exit(main())
