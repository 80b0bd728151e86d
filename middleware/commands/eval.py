"""`plainsight eval FILE.jsonl`: score the detector on a labelled dialogue file.

Runs exactly what the worker runs (``Pipeline.process_sync``, dialogue by dialogue, turn by
turn, one session per dialogue) and prints span-level exact-match scores on the core labels,
the leak rate, the residual risk, NAME recall by group and the detection time per turn.
Metric definitions: ``middleware/evaluation.py``. Only figures are printed, never dev-set text
(the ``--predictions`` file the user asks for holds the predicted spans with their text).
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.jsonl", nargs="+",
                   help="dialogue file(s) (a path, or a name in the data dir, e.g. 'bridge'); with several files each "
                        "is scored alone and an overall row follows")
    p.add_argument("--by-source", action="store_true",
                   help="also report NAME precision / recall / F5 and false names per 100 turns per dialogue 'source'")
    p.add_argument("--predictions", metavar="OUT.jsonl", help="write the predicted spans per dialogue here")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--engine", choices=["cascade", "presidio"], default=None, help="detector (default: from config)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="score only the first N dialogues")
    p.add_argument("--unlabelled-as-clean", action="store_true",
                   help="score a file without labels ('spans') as one with no private values (every prediction "
                        "a false positive); without it such a file is refused")
    p.add_argument("--config", default=None, help="YAML config file")
    from ..llm.cli_args import add_llm_arguments

    add_llm_arguments(p)
    p.add_argument(
        "--data-dir",
        default=None,
        help="where bare file names are looked up (default: $PLAINSIGHT_DATA_DIR or ../shared/data/dev)",
    )


def _has_labels(path, limit: int | None) -> bool:
    """Does any dialogue (of the first ``limit``) carry a ``spans`` list (an empty list counts: a
    dialogue labelled as holding no private values)?"""
    from ..evaluation import read_dialogues

    return any(isinstance(d.get("spans"), list) for d in read_dialogues(path, limit))


def run(args: argparse.Namespace) -> int:
    import json
    import logging
    import sys
    import time

    from ..config import load_settings
    from ..evaluation import CORE_LABELS, predictions_record, read_dialogues, resolve_data_file, run_dialogue, summarize
    from ..pipeline import detection_registry
    from plainsight.surrogate.pipeline import build_pipeline

    files = list(args.file) if isinstance(args.file, (list, tuple)) else [args.file]
    if len(files) > 1:
        return _run_many(args, files)
    try:
        path = resolve_data_file(files[0], args.data_dir)
    except FileNotFoundError as exc:
        print(f"plainsight eval: error: {exc}", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print("plainsight eval: error: --limit must be >= 1", file=sys.stderr)
        return 2
    try:
        labelled = _has_labels(path, args.limit)
    except ValueError as exc:
        print(f"plainsight eval: error: {exc}", file=sys.stderr)
        return 2
    if not labelled and not any(True for _ in read_dialogues(path, 1)):
        print(f"plainsight eval: error: {path} is empty (no dialogue lines); see 'Labelled format' in the README",
              file=sys.stderr)
        return 2
    if not labelled:
        if not args.unlabelled_as_clean:
            print(f"plainsight eval: error: {path} has no labels (no dialogue has a 'spans' list), so there is nothing to "
                  "score against; see 'Labelled format' in the README. --unlabelled-as-clean scores it as a file "
                  "with no private values (every prediction then counts as a false positive).", file=sys.stderr)
            return 2
        print(f"plainsight eval: {path} has no labels: scored as a file with no private values "
              "(--unlabelled-as-clean)", file=sys.stderr)
    from ..llm.cli_args import llm_overrides

    overrides = {"detection": {"engine": args.engine}} if args.engine else {}
    overrides.update(llm_overrides(args))
    settings = load_settings(args.config, **overrides)
    # Presidio warns once per unmapped spaCy entity; that is noise here (and slows its timing)
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    pipeline = build_pipeline(settings)

    t0 = time.perf_counter()
    results = []
    out = _private_open(args.predictions) if args.predictions else None
    use_llm = pipeline.llm is not None and pipeline.llm.enabled
    try:
        if use_llm:
            import asyncio

            from ..evaluation import arun_dialogue

            async def _all() -> None:
                try:
                    for i, d in enumerate(read_dialogues(path, args.limit)):
                        results.append(await arun_dialogue(pipeline, d, i))
                finally:
                    await pipeline.aclose()

            asyncio.run(_all())
        else:
            for i, d in enumerate(read_dialogues(path, args.limit)):
                results.append(run_dialogue(pipeline, d, i))
        if out is not None:
            for res in results:
                out.write(json.dumps(predictions_record(res), ensure_ascii=False) + "\n")
    finally:
        if out is not None:
            out.close()
    summary = {
        "file": str(path),
        "engine": settings.detection.engine,
        # the core labels, plus those of recognizers added by configuration (scored the same way)
        **summarize(results, (*CORE_LABELS, *(lab for lab in sorted(pipeline.labels) if lab not in CORE_LABELS
                                              and lab in detection_registry(settings).added_labels))),
        "wall_s": time.perf_counter() - t0,
    }
    if summary.get("degraded_turns") or summary.get("dead_lettered_turns"):
        print(f"plainsight eval: warning: {summary.get('degraded_turns', 0)} turns degraded (a stage failed: masked "
              f"fail-closed), {summary.get('dead_lettered_turns', 0)} dead-lettered (scored as predicting nothing)",
              file=sys.stderr)
    from ..evaluation import is_typed, typed_summary

    if is_typed(results):  # typed entities (wnut17, btc, gum): type / word errors, neutral names, masked shares
        summary["typed"] = typed_summary(results)
    from ..evaluation import by_genre

    genres = by_genre(results)
    if genres:  # dialogues that name their kind of English (gum): NAME and typed figures per genre
        summary["name_by_genre"] = genres
    if use_llm:
        summary["llm"] = _llm_summary(pipeline.llm, settings, _chat_chars(path, args.limit))
    if getattr(args, "by_source", False):
        from ..evaluation import by_source

        summary["name_by_source"] = by_source(results)
    summary["origin_fidelity"] = _origin_fidelity([path], args.limit)
    summary["_results"] = results
    if getattr(args, "_collect", None) is not None:
        args._collect.append(summary)
        return 0
    summary.pop("_results")
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=None))
    else:
        print(format_table(summary))
        print(_fidelity_text(summary["origin_fidelity"]))
    return 0


def _run_many(args: argparse.Namespace, files: list[str]) -> int:
    """Several files: each scored alone (its own summary), then the NAME figures over all of them
    (and per source with ``--by-source``)."""
    import json

    from ..evaluation import by_source, name_summary

    collected: list[dict] = []
    for f in files:
        one = argparse.Namespace(**{**vars(args), "file": [f], "_collect": collected, "predictions": None})
        rc = run(one)
        if rc:
            return rc
    results = [r for s in collected for r in s.pop("_results")]
    out = {"files": collected, "name_overall": name_summary(results)}
    if args.by_source:
        out["name_by_source"] = by_source(results)
    out["origin_fidelity"] = _origin_fidelity([s["file"] for s in collected], args.limit)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=None))
        return 0
    for s in collected:
        print(format_table(s))
        print()
    print(_name_rows("NAME over all files", {"all": out["name_overall"]}))
    if args.by_source:
        print(_name_rows("NAME by source", out["name_by_source"]))
    print(_fidelity_text(out["origin_fidelity"], "over all files"))
    return 0


def _origin_fidelity(paths, limit) -> dict:
    """Origin fidelity of the NAME surrogates of the gold names (``surrogate/labels/origin_fidelity.py``)."""
    from plainsight.surrogate.labels.origin_fidelity import measure

    from ..evaluation import read_dialogues

    return measure(d for p in paths for d in read_dialogues(p, limit))


def _fidelity_text(f: dict, where: str = "") -> str:
    from plainsight.surrogate.labels.origin_fidelity import format_fidelity

    return format_fidelity(f).replace("origin fidelity", f"origin fidelity {where}".rstrip(), 1)


def _name_rows(title: str, rows: dict) -> str:
    lines = [title, f"{'':<16}{'turns':>7}{'tp':>6}{'fp':>6}{'fn':>6}{'P':>8}{'R':>8}{'F5':>8}{'FP/100 turns':>14}"]
    for k, c in rows.items():
        lines.append(f"{k:<16}{c['turns']:>7}{c['tp']:>6}{c['fp']:>6}{c['fn']:>6}{_f(c['precision']):>8}"
                     f"{_f(c['recall']):>8}{_f(c['f5']):>8}{c['name_fp_per_100_turns']:>14.2f}")
        if c.get("typed"):
            lines.append(f"{'':<16}" + _typed_rows(c["typed"]).replace("\n", "\n" + " " * 16))
    return "\n".join(lines)


def _typed_rows(t: dict) -> str:
    """Typed entities: a NAME on a place / organisation / group / product / work is a type error, on
    no entity a word error, on a person (or @handle) neutral; and the share of each type masked."""
    lines = [f"typed entities (per 100 turns): type errors {t['type_errors_per_100_turns']:.2f} ({t['type_errors']})  "
             f"word errors {t['word_errors_per_100_turns']:.2f} ({t['word_errors']})  false names (type + word) "
             f"{t['false_names_per_100_turns']:.2f}  neutral {t['neutral_per_100_turns']:.2f} ({t['neutral']})",
             "masked share by type: " + "  ".join(f"{lab} {v['share']:.3f} (n={v['gold']})"
                                                  for lab, v in t["masked_share"].items())]
    return "\n".join(lines)


#: the research's fine-tuned GPT-4o-mini: USD per 1M tokens of the data de-identified (seed 000, cost table)
SEED_COST_PER_1M_CHAT_TOKENS = 0.92


def _chat_chars(path, limit) -> int:
    """Characters of the chat itself (every non-empty turn's text): the input the cost is spread over."""
    from ..evaluation import read_dialogues

    return sum(len(t.get("text") or "") for d in read_dialogues(path, limit) for t in d["turns"] if (t.get("text") or "").strip())


def _llm_summary(stage, settings, chat_chars: int = 0) -> dict:
    """Tokens, cost and the share of turns sent to the model, from the stage's counters.

    ``cost_per_1m_chat_tokens_usd``: everything the model cost (prompt + completion tokens of every
    call, at the configured list prices) per 1M tokens of the chat de-identified (characters / 4),
    the research's measure (its fine-tuned GPT-4o-mini: $0.92)."""
    snap = stage.stats.snapshot()
    prompt = sum(t["prompt"] for t in snap["tokens"].values())
    completion = sum(t["completion"] for t in snap["tokens"].values())
    sent = sum(snap["sent"].values())
    cost = snap["cost_usd"]["total"]
    return {
        "model": settings.llm.model_name,
        "mode": settings.llm.mode,
        "policy": settings.llm.policy,
        "turns": snap["turns"],
        "turns_sent": sent,
        "share_sent": round(sent / snap["turns"], 4) if snap["turns"] else 0.0,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tokens_per_sent_turn": round((prompt + completion) / sent, 1) if sent else 0.0,
        "cost_usd": round(cost, 6),
        "cost_per_1m_input_tokens_usd": round(cost / prompt * 1e6, 4) if prompt else None,
        "chat_tokens": chat_chars // 4,
        "cost_per_1m_chat_tokens_usd": round(cost / (chat_chars / 4) * 1e6, 4) if chat_chars >= 4 else None,
        "seed_cost_per_1m_chat_tokens_usd": SEED_COST_PER_1M_CHAT_TOKENS,
        "degraded": snap["degraded"],
        "stats": snap,
    }


def _f(x, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def format_table(s: dict) -> str:
    lines = [
        f"file: {s['file']}  engine: {s['engine']}",
        f"dialogues {s['dialogues']}  turns {s['turns']} (empty, skipped: {s['empty_turns']})  "
        f"gold core spans {s['gold_spans']} (+{s['gold_spans_other_labels']} other labels, not scored)  "
        f"predicted {s['predicted_spans']} (ignored, matching a non-core gold span: {s['ignored_predictions']})",
        "",
        f"{'label':<10}{'gold':>6}{'tp':>6}{'fp':>6}{'fn':>6}{'P':>8}{'R':>8}{'F1':>8}{'F5':>8}",
    ]
    rows = list(s["per_label"].items()) + [("overall", s["overall"])]
    for lab, c in rows:
        if lab == "overall":
            lines.append("-" * 66)
        lines.append(
            f"{lab:<10}{c['tp'] + c['fn']:>6}{c['tp']:>6}{c['fp']:>6}{c['fn']:>6}"
            f"{_f(c['precision']):>8}{_f(c['recall']):>8}{_f(c['f1']):>8}{_f(c['f5']):>8}"
        )
    rr = s["residual_risk"]
    lines += [
        "",
        f"FP per 100 dialogues: {s['fp_per_100_dialogues']:.2f}   false NAMEs per 100 turns: "
        f"{s.get('name_fp_per_100_turns', 0.0):.2f}",
        f"leak rate (gold core chars not covered): {_f(s['leak_rate'], 4)}",
        f"residual risk per dialogue: mean {rr['mean']:.3f}  std {rr['std']:.3f}  mean+std {rr['mean_plus_std']:.3f}"
        f"  max {rr['max']:.0f}  dialogues at risk {rr['dialogues_at_risk']}",
    ]
    for key in ("gender", "region"):
        groups = s[f"name_recall_by_{key}"]
        if groups:
            lines.append(
                f"NAME recall by {key}: " + "  ".join(f"{g} {_f(v['recall'])} (n={v['gold']})" for g, v in groups.items())
            )
    lines.append(
        f"detection ms/turn: mean {s['ms_per_turn']:.2f}  p50 {s['ms_per_turn_p50']:.2f}  p99 {s['ms_per_turn_p99']:.2f}"
        f"  (wall {s['wall_s']:.1f} s)"
    )
    lines.append(f"dead-lettered turns: {s.get('dead_lettered_turns', 0)}   degraded turns: {s.get('degraded_turns', 0)}")
    llm = s.get("llm")
    if llm:
        lines += [
            f"LLM {llm['model']} ({llm['mode']}, {llm['policy']}): sent {llm['turns_sent']} of {llm['turns']} turns "
            f"({100 * llm['share_sent']:.1f} %), degraded {sum(llm['degraded'].values())}",
            f"LLM tokens: prompt {llm['prompt_tokens']:,}  completion {llm['completion_tokens']:,}  cost ${llm['cost_usd']:.4f}"
            f"  = ${_f(llm['cost_per_1m_chat_tokens_usd'], 2)} per 1M chat tokens (research's fine-tuned GPT-4o-mini:"
            f" ${llm['seed_cost_per_1m_chat_tokens_usd']:.2f})",
        ]
    if s.get("typed"):
        lines += ["", _typed_rows(s["typed"])]
    if s.get("name_by_genre"):
        lines += ["", _name_rows("NAME by genre", s["name_by_genre"])]
    if s.get("name_by_source"):
        lines += ["", _name_rows("NAME by source", s["name_by_source"])]
    return "\n".join(lines)


def _private_open(path: str):
    """``path`` for writing, readable by its owner only (0600): predictions hold raw span text."""
    import os

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_TRUNC: tighten it
    return os.fdopen(fd, "w", encoding="utf-8")
