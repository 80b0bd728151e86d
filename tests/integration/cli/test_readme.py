"""Issue #22 items 11-14: the README a newcomer follows. Its first screen keeps the two quickstart
commands (the second is what CI runs, verbatim), the guided path's example file is what `redact`
really reads, and the documents it links to exist."""

from __future__ import annotations

import json
import re

from plainsight.middleware.cli import main
from tests.support import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DEMO = "python3 -m venv .venv-demo && . .venv-demo/bin/activate && pip install . && plainsight demo"
DEV = 'python3 -m venv .venv-dev && . .venv-dev/bin/activate && pip install -q -e ".[dev]" && python -m pytest -q'


def test_first_screen_keeps_the_two_quickstart_commands_and_ci_runs_the_second():
    first_screen = "\n".join(README.splitlines()[:30])
    assert DEMO in first_screen and DEV in first_screen
    assert README.index(DEMO) < README.index(DEV) < README.index("## A guided path")
    assert DEV in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()[-1]


def test_guided_path_example_file_is_what_redact_reads(tmp_path, capsys):
    m = re.search(r"cat > chats\.jsonl <<'EOF'\n(.*?)\nEOF\n", README, re.S)
    assert m, "the guided path shows the input format"
    src, out = tmp_path / "chats.jsonl", tmp_path / "out.jsonl"
    src.write_text(m.group(1) + "\n", encoding="utf-8")
    assert main(["redact", str(src), "-o", str(out)]) == 0
    dialogue, turn = (json.loads(l) for l in out.read_text().splitlines())
    assert [t["speaker"] for t in dialogue["turns"]] == ["student", "tutor"]
    assert all("degraded" in t and t["entities"] for t in dialogue["turns"])
    assert turn["session_id"] == "s-42" and turn["entities"][0]["label"] == "PHONE"
    for raw in ("Maria", "Lopez", "maria.lopez@gmail.com", "555-0134"):
        assert raw not in out.read_text()
    assert "redacted 3 turns" in capsys.readouterr().err


def test_guided_path_commands_exist_and_linked_documents_exist():
    for cmd in ("plainsight redact", "plainsight send", "plainsight tail", "plainsight serve", "plainsight eval sample"):
        assert cmd in README
    for link in set(re.findall(r"\]\(((?:docs|monitoring|surrogate|configs)/[^)#]+)", README)):
        assert (ROOT / link).exists(), link
    for doc in ("docs/performance.md", "docs/history.md"):
        assert f"]({doc}" in README
    # the figures moved out of the README are in docs/performance.md
    perf = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    for heading in ("## Throughput, latency and memory", "## Detection quality on the dev files", "## Faults",
                    "## The LLM stage with a perfect model"):
        assert heading in perf
    assert "| local (no LLM) | 1 | 1,000/s |" not in README and "| local (no LLM) | 1 | 1,000/s |" in perf
