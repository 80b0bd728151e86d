"""`plainsight eval`: the metric math against a hand-computed example, and a run on dev samples."""

from __future__ import annotations

import json
import math

import pytest

from plainsight.middleware.evaluation import (
    DialogueResult,
    Ent,
    default_data_dir,
    f_beta,
    leak_counts,
    match_spans,
    percentile,
    residual_risk,
    summarize,
    typed_kinds,
    typed_summary,
)

# --------------------------------------------------------------------------- tiny hand-computed example
#
# Dialogue A (meta gender F)
#   gold: t0 [3,8) NAME "Maria"; t0 [20,30) EMAIL "ma@x.co.uk"; t1 [0,5) NAME "maria"; t1 [10,15) ORG "Acme1"
#   pred: t0 [3,8) NAME            -> TP
#         t0 [20,28) EMAIL         -> FP (boundary) + the gold EMAIL is a FN; 8 of 10 chars covered
#         t1 [10,15) NAME          -> ignored (exactly a non-core gold span)
#         t1 [40,45) PHONE         -> FP
#   "maria" (t1) is missed -> the value maria (both occurrences, case-insensitive) is MISSED: 5
#   the email is partly covered -> ceil(4/2) = 2                        => risk(A) = 7
# Dialogue B (meta gender M): gold t0 [0,9) ADDRESS "12 Oak St" (7 non-space chars), t0 [20,30) URL
#   pred: t0 [20,30) URL -> TP; the address is missed: 4                 => risk(B) = 4
# Dialogue C: nothing                                                    => risk(C) = 0

A_GOLD = [
    Ent(0, 3, 8, "NAME", "Maria"),
    Ent(0, 20, 30, "EMAIL", "ma@x.co.uk"),
    Ent(1, 0, 5, "NAME", "maria"),
    Ent(1, 10, 15, "ORG", "Acme1"),
]
A_PRED = [Ent(0, 3, 8, "NAME"), Ent(0, 20, 28, "EMAIL"), Ent(1, 10, 15, "NAME"), Ent(1, 40, 45, "PHONE")]
B_GOLD = [Ent(0, 0, 9, "ADDRESS", "12 Oak St"), Ent(0, 20, 30, "URL", "x.co/anna1")]
B_PRED = [Ent(0, 20, 30, "URL")]


def _results() -> list[DialogueResult]:
    return [
        DialogueResult("A", {"gender": "F"}, A_GOLD, A_PRED, turns=2, detect_ms=[1.0, 3.0]),
        DialogueResult("B", {"gender": "M"}, B_GOLD, B_PRED, turns=1, detect_ms=[2.0]),
        DialogueResult("C", {}, [], [], turns=2, empty_turns=1, detect_ms=[6.0]),
    ]


def test_f_beta():
    assert f_beta(1.0, 0.5, 1) == pytest.approx(2 / 3)
    assert f_beta(1.0, 0.5, 5) == pytest.approx(26 * 0.5 / 25.5)
    assert f_beta(0.0, 0.0, 5) == 0.0
    assert f_beta(None, 0.5, 5) is None


def test_match_spans_hand_example():
    m = match_spans(A_GOLD, A_PRED)
    assert (m.per_label["NAME"].tp, m.per_label["NAME"].fp, m.per_label["NAME"].fn) == (1, 0, 1)
    assert (m.per_label["EMAIL"].tp, m.per_label["EMAIL"].fp, m.per_label["EMAIL"].fn) == (0, 1, 1)
    assert (m.per_label["PHONE"].tp, m.per_label["PHONE"].fp, m.per_label["PHONE"].fn) == (0, 1, 0)
    assert m.ignored == 1
    o = m.overall()
    assert (o.tp, o.fp, o.fn) == (1, 2, 2)
    assert "ORG" not in m.per_label


def test_duplicate_prediction_counts_once():
    m = match_spans([Ent(0, 0, 3, "NAME", "Ann")], [Ent(0, 0, 3, "NAME"), Ent(0, 0, 3, "NAME")])
    assert (m.overall().tp, m.overall().fp) == (1, 0)


def test_leak_counts_skip_whitespace_and_use_any_label():
    assert leak_counts(A_GOLD, A_PRED) == {"NAME": [10, 5], "EMAIL": [10, 2]}
    assert leak_counts(B_GOLD, B_PRED) == {"ADDRESS": [7, 7], "URL": [10, 0]}
    # a prediction of another label still covers the characters
    assert leak_counts([Ent(0, 0, 4, "NAME", "Anna")], [Ent(0, 0, 4, "USERNAME")]) == {"NAME": [4, 0]}


def test_residual_risk_rules():
    risk, vals = residual_risk(A_GOLD, A_PRED)
    assert risk == 7
    assert sorted((v.label, v.status, v.score, v.occurrences) for v in vals) == [
        ("EMAIL", "partial", 2, 1),
        ("NAME", "missed", 5, 2),
    ]
    assert residual_risk(B_GOLD, B_PRED)[0] == 4
    # every occurrence covered -> safe; one partly covered, none uncovered -> ceil(5/2) = 3
    gold = [Ent(0, 0, 11, "NAME", "Maria Lopez"), Ent(1, 0, 11, "NAME", "maria lopez")]
    assert residual_risk(gold, [Ent(0, 0, 11, "NAME"), Ent(1, 0, 11, "NAME")])[0] == 0
    assert residual_risk(gold, [Ent(0, 0, 11, "NAME"), Ent(1, 0, 5, "NAME")])[0] == 3
    # URL weight 2, partly covered -> 1; USERNAME 3 -> 2
    assert residual_risk([Ent(0, 0, 4, "URL", "a.io")], [Ent(0, 0, 2, "URL")])[0] == 1
    assert residual_risk([Ent(0, 0, 4, "USERNAME", "@ann")], [Ent(0, 1, 4, "USERNAME")])[0] == 2
    # possessive and case fold into one value (one NAME, counted once)
    gold = [Ent(0, 0, 4, "NAME", "Anna"), Ent(1, 0, 6, "NAME", "ANNA's")]
    assert residual_risk(gold, [])[0] == 5


def test_summarize_hand_example():
    s = summarize(_results())
    assert s["dialogues"] == 3 and s["turns"] == 5 and s["empty_turns"] == 1
    assert s["gold_spans"] == 5 and s["gold_spans_other_labels"] == 1 and s["predicted_spans"] == 5
    assert s["ignored_predictions"] == 1
    o = s["overall"]
    assert (o["tp"], o["fp"], o["fn"]) == (2, 2, 3)
    assert o["precision"] == pytest.approx(0.5)
    assert o["recall"] == pytest.approx(0.4)
    assert o["f1"] == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert o["f5"] == pytest.approx(26 * 0.5 * 0.4 / (25 * 0.5 + 0.4))
    assert s["per_label"]["NAME"]["recall"] == pytest.approx(0.5)
    assert s["per_label"]["PHONE"]["recall"] is None
    assert s["per_label"]["URL"]["f5"] == pytest.approx(1.0)
    assert s["fp_per_100_dialogues"] == pytest.approx(200 / 3)
    assert s["leak_rate"] == pytest.approx(14 / 37)
    rr = s["residual_risk"]
    assert rr["mean"] == pytest.approx(11 / 3)
    std = math.sqrt(((7 - 11 / 3) ** 2 + (4 - 11 / 3) ** 2 + (11 / 3) ** 2) / 3)
    assert rr["std"] == pytest.approx(std)
    assert rr["mean_plus_std"] == pytest.approx(11 / 3 + std)
    assert rr["dialogues_at_risk"] == 2
    # NAME recall by gender: only groups with gold names are listed
    assert s["name_recall_by_gender"] == {"F": {"recall": pytest.approx(0.5), "gold": 2}}
    assert s["name_recall_by_region"] == {}
    assert s["ms_per_turn"] == pytest.approx(3.0)
    assert s["ms_per_turn_p99"] == 6.0
    json.dumps(s)  # serialisable


def test_percentile_nearest_rank():
    assert percentile([], 99) == 0.0
    assert percentile([5.0], 99) == 5.0
    assert percentile(list(map(float, range(1, 101))), 99) == 99.0
    assert percentile(list(map(float, range(1, 101))), 50) == 50.0


# --------------------------------------------------------------------------- on dev samples (real pipeline)


def _data_file(name: str):
    path = default_data_dir() / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"dev data not found at {path} (set PLAINSIGHT_DATA_DIR to the dev data directory)")
    return path


@pytest.fixture(scope="module")
def pipeline():
    from plainsight.middleware.config import load_settings
    from plainsight.surrogate.pipeline import build_pipeline

    return build_pipeline(load_settings())


def _eval(pipeline, path, limit):
    from plainsight.middleware.evaluation import read_dialogues, run_dialogue

    return summarize([run_dialogue(pipeline, d, i) for i, d in enumerate(read_dialogues(path, limit))])


def test_eval_presidio_synth_sample_contact_recall(pipeline):
    s = _eval(pipeline, _data_file("presidio_synth"), 400)
    for label in ("EMAIL", "PHONE"):
        assert s["per_label"][label]["recall"] >= 0.95, label
    assert s["per_label"]["URL"]["recall"] >= 0.9


def test_eval_ncte_uptake_sample_name_recall(pipeline):
    s = _eval(pipeline, _data_file("ncte_uptake"), 200)
    assert s["gold_spans"] > 0
    assert s["per_label"]["NAME"]["recall"] >= 0.5
    assert s["turns"] == 400 and s["ms_per_turn"] > 0


def test_eval_cli_json_and_predictions(tmp_path, capsys):
    from plainsight.middleware.cli import main

    src = _data_file("bridge")
    sample = tmp_path / "sample.jsonl"
    with open(src, encoding="utf-8") as fh, open(sample, "w", encoding="utf-8") as out:
        for _, line in zip(range(5), fh):
            out.write(line)
    preds = tmp_path / "pred.jsonl"
    assert main(["eval", str(sample), "--json", "--predictions", str(preds)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["dialogues"] == 5
    for key in ("overall", "per_label", "leak_rate", "residual_risk", "ms_per_turn", "fp_per_100_dialogues"):
        assert key in s
    rows = [json.loads(x) for x in preds.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5 and all(set(r) == {"id", "spans"} for r in rows)
    # the table form prints figures only, never dev-set text
    assert main(["eval", str(sample)]) == 0
    table = capsys.readouterr().out
    for r in rows:
        for sp in r["spans"]:
            assert sp["text"] not in table or len(sp["text"]) < 3


# --------------------------------------------------------------------------- typed files (wnut17, btc, gum)


def test_typed_kinds_and_summary_hand_example():
    # "Paris Hilton was in Paris with @bob, Lovely" -- gold: PERSON [0,12), LOCATION [20,25), HANDLE [31,35)
    gold = [Ent(0, 0, 12, "PERSON"), Ent(0, 20, 25, "LOCATION"), Ent(0, 31, 35, "HANDLE"), Ent(1, 0, 4, "NAME")]
    pred = [Ent(0, 0, 5, "NAME"),      # part of a person: neutral
            Ent(0, 20, 25, "NAME"),    # a place: type error
            Ent(0, 37, 43, "NAME"),    # no entity: word error
            Ent(0, 31, 35, "USERNAME"),  # not a NAME: not scored as one, but it masks the handle
            Ent(1, 0, 4, "NAME")]      # a gold NAME: scored by the exact match, not here
    kinds = typed_kinds(gold, pred)
    assert (kinds["neutral"], kinds["type"], kinds["word"], kinds["name"]) == (1, 1, 1, 1)
    r = DialogueResult("T", {}, gold, pred, turns=3, empty_turns=1)
    s = typed_summary([r])
    assert s["turns"] == 2 and s["type_errors"] == 1 and s["word_errors"] == 1 and s["neutral"] == 1
    assert s["type_errors_per_100_turns"] == 50.0 and s["false_names_per_100_turns"] == 100.0
    assert s["masked_share"]["LOCATION"] == {"gold": 1, "masked": 1, "share": 1.0}
    assert s["masked_share"]["HANDLE"]["share"] == 1.0 and s["masked_share"]["PERSON"]["share"] == 1.0
    assert "NAME" not in s["masked_share"]


def test_eval_cli_reports_typed_figures(tmp_path, capsys):
    from plainsight.middleware.cli import main

    sample = tmp_path / "typed.jsonl"
    sample.write_text(json.dumps({"id": "t1", "source": "typed", "turns": [
        {"speaker": "student", "text": "I speak Russian and we flew to Linz with Chelsea fans"}],
        "spans": [{"turn": 0, "start": 8, "end": 15, "label": "GROUP", "text": "Russian"},
                  {"turn": 0, "start": 31, "end": 35, "label": "LOCATION", "text": "Linz"},
                  {"turn": 0, "start": 41, "end": 48, "label": "GROUP", "text": "Chelsea"}]}) + "\n", encoding="utf-8")
    assert main(["eval", str(sample), "--json", "--by-source"]) == 0
    s = json.loads(capsys.readouterr().out)
    t = s["typed"]
    for key in ("type_errors_per_100_turns", "word_errors_per_100_turns", "neutral_per_100_turns", "masked_share"):
        assert key in t
    assert t["masked_share"]["GROUP"]["gold"] == 2 and t["turns"] == 1
    assert s["name_by_source"]["typed"]["typed"]["masked_share"]["LOCATION"]["gold"] == 1
    assert main(["eval", str(sample)]) == 0
    table = capsys.readouterr().out
    assert "type errors" in table and "masked share by type" in table


# --------------------------------------------------------------------------- one resolver for the data dirs


def test_scripts_resolve_dev_files_through_the_one_data_dir(tmp_path, monkeypatch):
    """scripts/name_data.py had its own ../shared/data/dev and ignored $PLAINSIGHT_DATA_DIR."""
    import importlib
    import sys

    from plainsight.middleware.evaluation import default_lexicon_dir, repo_root

    (tmp_path / "mine.jsonl").write_text('{"id": "d1", "turns": [{"speaker": "student", "text": "hi"}]}\n')
    monkeypatch.setenv("PLAINSIGHT_DATA_DIR", str(tmp_path))
    assert default_data_dir() == tmp_path
    monkeypatch.syspath_prepend(str(repo_root() / "scripts"))
    name_data = importlib.import_module("name_data")
    assert name_data.resolve("mine") == tmp_path / "mine.jsonl"
    assert [d["id"] for d in name_data.read("mine.jsonl")] == ["d1"]
    with pytest.raises(FileNotFoundError, match="also looked in"):
        name_data.resolve("not-there")
    monkeypatch.delenv("PLAINSIGHT_DATA_DIR")
    assert default_lexicon_dir() == default_data_dir().parent / "lexicons"
    assert importlib.import_module("build_public_tables").PANTHEON.parent == default_lexicon_dir()
    sys.modules.pop("name_data", None)
    sys.modules.pop("build_public_tables", None)


def test_no_other_hard_coded_shared_data_path():
    """plainsight.middleware.evaluation resolves ../shared/data (default_data_dir, default_lexicon_dir); no other
    code builds that path itself."""
    import re

    from plainsight.middleware.evaluation import repo_root

    root = repo_root()
    built = re.compile(r"""["']shared["']\s*/\s*["']data["']|["'][^"'\n]*shared/data/(?:dev|lexicons)/?["']\s*\)""")
    offenders = []
    for pkg in ("middleware", "surrogate", "consumers", "benchmarks", "scripts", "tests"):
        for path in (root / pkg).rglob("*.py"):
            if path.name == "evaluation.py" and path.parent.name == "middleware":
                continue
            if built.search(path.read_text(encoding="utf-8")):
                offenders.append(str(path.relative_to(root)))
    assert offenders == []


def test_eval_reports_name_figures_by_genre(tmp_path, capsys):
    """Dialogues that name their kind of English (``meta.genre``, as gum's do) are also scored per
    genre: NAME P / R / F5 and, for typed spans, the type and word errors."""
    from plainsight.middleware.cli import main

    sample = tmp_path / "genres.jsonl"
    rows = [
        {"id": "g1", "source": "gum", "meta": {"genre": "conversation"},
         "turns": [{"speaker": "A", "text": "Hi Marisol, did you call your brother Teodor yet?"}],
         "spans": [{"turn": 0, "start": 3, "end": 10, "label": "NAME", "text": "Marisol"},
                   {"turn": 0, "start": 38, "end": 44, "label": "NAME", "text": "Teodor"}]},
        {"id": "g2", "source": "gum", "meta": {"genre": "voyage"},
         "turns": [{"speaker": "A", "text": "The bus to Linz takes an hour."}],
         "spans": [{"turn": 0, "start": 11, "end": 15, "label": "LOCATION", "text": "Linz"}]},
    ]
    sample.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["eval", str(sample), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    g = s["name_by_genre"]
    assert set(g) == {"conversation", "voyage"}
    assert g["conversation"]["tp"] == 2 and g["conversation"]["recall"] == 1.0
    assert g["voyage"]["tp"] == 0 and g["voyage"]["typed"]["type_errors"] == 0
    assert main(["eval", str(sample)]) == 0
    assert "NAME by genre" in capsys.readouterr().out
