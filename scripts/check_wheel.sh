#!/usr/bin/env bash
# The artifact a user installs, tested away from the source tree (issues #22, #26):
# build the wheel, install it into a fresh venv beside three unrelated registry projects whose
# import names plainsight's folders share (surrogate, middleware, consumers), then run the CLI
# from there and check that each of the other projects still imports its own code.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PY="${PYTHON:-python3}"

"$PY" -m pip wheel -q --no-deps -w "$WORK/dist" "$REPO"
WHEEL="$(ls "$WORK"/dist/*.whl)"
"$PY" - "$WHEEL" <<'PYEOF'
import sys, zipfile
tops = sorted({n.split("/")[0] for n in zipfile.ZipFile(sys.argv[1]).namelist()})
assert tops == ["plainsight", tops[1]] and tops[1].endswith(".dist-info"), f"wheel top level: {tops}"
print("wheel top level:", tops)
PYEOF

"$PY" -m venv "$WORK/venv"
V="$WORK/venv/bin"
"$V/pip" install -q "surrogate==0.1" "middleware==1.2.3" "consumers==0.6.1" 2>&1 | grep -v "^WARNING: Location" || true
"$V/pip" install -q "$WHEEL" 2>&1 | grep -v "^WARNING: Location" || true

cd "$WORK"   # nothing of the source tree on sys.path
"$V/plainsight" --version
"$V/python" -m plainsight --version
SAMPLE="$("$V/python" -c 'from importlib.resources import files; print(files("plainsight.middleware.samples") / "demo_chats.jsonl")')"
"$V/plainsight" redact "$SAMPLE" -o "$WORK/out.jsonl" --secret-file <(printf 'wheel-check-secret-0123456789abcdef\n') 2>&1 | tail -2
test -s "$WORK/out.jsonl"
# the shipped synthetic labelled sample (what bench detect and eval use without ../shared/data/dev)
"$V/plainsight" eval sample --json | "$V/python" -c 'import json,sys; s=json.load(sys.stdin); assert s["gold_spans"] == 14; print("eval sample:", s["overall"])'
"$V/plainsight" demo --json > "$WORK/demo.json"
"$V/python" - "$WORK/demo.json" <<'PYEOF'
import json, sys
summary = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print("demo:", {k: summary[k] for k in list(summary)[:6]})
PYEOF
"$V/python" - <<'PYEOF'
import importlib, os
for name in ("surrogate", "middleware", "consumers"):
    mod = importlib.import_module(name)
    where = getattr(mod, "__file__", None) or list(getattr(mod, "__path__", []))
    assert "plainsight" not in str(where), f"{name} resolves to plainsight: {where}"
    print(f"import {name} -> {where}")
import plainsight, plainsight.middleware.detection.naming  # the subpackage a hand-written list once lost
import plainsight.proxy.server  # the proxy folder (setup.py FOLDERS) is in the wheel
print("plainsight", plainsight.__version__, "from", os.path.dirname(plainsight.__file__))
PYEOF
echo "wheel check: OK"
