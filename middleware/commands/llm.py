"""`plainsight llm ...`: tools around the optional LLM stage.

``plainsight llm export-finetune FILE.jsonl -o train.jsonl [--mode marking|json] [--context N]
[--validation 0.1]`` writes OpenAI chat fine-tuning JSONL built with exactly the prompts the stage
sends (``middleware/llm/finetune.py``), split by dialogue, and prints the example count, tokens and
an estimated training cost. Only figures are printed, never dialogue text.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    ex = sub.add_parser(
        "export-finetune",
        help="labelled dialogues -> OpenAI chat fine-tuning JSONL with the stage's own prompts",
        description="Write OpenAI chat fine-tuning JSONL from a labelled dialogue file: one example per turn, "
        "built with exactly the prompts the LLM stage sends (system, few-shot examples, de-identified context, "
        "current turn) and the gold answer (marked echo or JSON), split into training and validation by dialogue.",
    )
    ex.add_argument("file", metavar="FILE.jsonl", help="labelled dialogue file (a path, or a name in the data dir)")
    ex.add_argument("-o", "--output", required=True, metavar="TRAIN.jsonl", help="training file to write")
    ex.add_argument("--mode", choices=["marking", "json"], default=None, help="answer format (default: llm.mode)")
    ex.add_argument("--context", type=int, default=None, metavar="N", help="context turns per example (default: llm.context_turns)")
    ex.add_argument("--validation", type=float, default=0.1, metavar="FRACTION",
                    help="share of dialogues written to the validation file (default 0.1; 0 = none)")
    ex.add_argument("--validation-output", default=None, metavar="VALID.jsonl",
                    help="validation file (default: TRAIN.validation.jsonl next to the training file)")
    ex.add_argument("--epochs", type=int, default=None, metavar="N", help="epochs assumed for the cost estimate (default 3)")
    ex.add_argument("--price-per-1m", type=float, default=None, metavar="USD",
                    help="training price per 1M tokens for the estimate (default 3.00, gpt-4o-mini)")
    ex.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N dialogues")
    ex.add_argument("--json", action="store_true", help="print the report as one JSON object")
    ex.add_argument("--config", default=None, help="YAML config file (prompts_dir, labels, context_turns)")
    ex.add_argument("--data-dir", default=None, help="where bare file names are looked up")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    if getattr(args, "llm_command", None) != "export-finetune":
        print("usage: plainsight llm export-finetune FILE.jsonl -o train.jsonl", file=sys.stderr)
        return 2
    from ..config import ConfigError, load_settings
    from ..evaluation import read_dialogues, resolve_data_file
    from ..llm.finetune import DEFAULT_EPOCHS, DEFAULT_TRAIN_PRICE_PER_1M, export_finetune

    try:
        path = resolve_data_file(args.file, args.data_dir)
    except FileNotFoundError as exc:
        print(f"plainsight llm export-finetune: {exc}", file=sys.stderr)
        return 2
    if not 0 <= args.validation < 1:
        print("plainsight llm export-finetune: --validation must be in [0, 1)", file=sys.stderr)
        return 2
    if args.context is not None and args.context < 0:
        print("plainsight llm export-finetune: --context must be >= 0", file=sys.stderr)
        return 2
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"plainsight llm export-finetune: {exc}", file=sys.stderr)
        return 2
    try:
        from plainsight.surrogate.pipeline import build_replacer

        rep = export_finetune(
            settings,
            read_dialogues(path, args.limit),
            args.output,
            replacer=build_replacer(settings),
            mode=args.mode or settings.llm.mode,
            context_turns=args.context,
            validation=args.validation,
            validation_path=args.validation_output,
            epochs=args.epochs or DEFAULT_EPOCHS,
            price_per_1m=DEFAULT_TRAIN_PRICE_PER_1M if args.price_per_1m is None else args.price_per_1m,
        )
    except (ValueError, OSError) as exc:
        print(f"plainsight llm export-finetune: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rep.as_dict()))
        return 0
    print(f"training:   {rep.train_examples} examples from {rep.train_dialogues} dialogues, ~{rep.train_tokens:,} tokens -> {rep.train_path}")
    if rep.validation_path:
        print(f"validation: {rep.validation_examples} examples from {rep.validation_dialogues} dialogues, "
              f"~{rep.validation_tokens:,} tokens -> {rep.validation_path}")
    if rep.json_fallback:
        print(f"{rep.json_fallback} turns hold marker strings: exported in JSON mode, as the stage sends them")
    if rep.skipped_too_long:
        print(f"{rep.skipped_too_long} turns over llm.max_turn_chars skipped (the stage never sends them)")
    print(f"estimated training cost: ${rep.estimated_cost_usd:.2f} "
          f"({rep.train_tokens:,} tokens x {rep.epochs} epochs x ${rep.price_per_1m:.2f} per 1M training tokens)")
    if rep.train_examples < 10:
        print("note: OpenAI fine-tuning needs at least 10 training examples", file=sys.stderr)
    return 0
