"""`plainsight` command line.

Each subcommand lives in its own module under ``middleware/commands/`` exposing
``add_arguments(parser)`` and ``run(args) -> int``; modules are imported only when their
command runs, so ``plainsight --help`` stays fast and the core never imports Kafka.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: command → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("plainsight.middleware.commands.demo", "stream bundled sample chats through an embedded broker and show the result"),
    "serve": ("plainsight.middleware.commands.serve", "run the long-lived worker against Kafka (embedded broker if none configured)"),
    "redact": ("plainsight.middleware.commands.redact", "de-identify stored chat logs (JSONL) without Kafka"),
    "eval": ("plainsight.middleware.commands.eval", "score the detection cascade on a labelled dialogue file"),
    "bench": ("plainsight.middleware.commands.bench", "benchmarks: detect, stream, faults"),
    "forget": ("plainsight.middleware.commands.forget", "erase a session's stored state (right to erasure)"),
    "llm": ("plainsight.middleware.commands.llm", "LLM stage tools: export-finetune (OpenAI fine-tuning JSONL with the stage's prompts)"),
    "keys": ("plainsight.middleware.commands.keys", "make the surrogate secret and state keys; re-seal stored state (rotate)"),
    "proxy": ("plainsight.middleware.commands.proxy", "an OpenAI-compatible proxy: de-identifies requests, re-identifies (streamed) replies"),
    "recognizers": ("plainsight.middleware.commands.recognizers", "list the fast pass a configuration builds; --try TEXT shows what it finds"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="plainsight", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"plainsight {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_module_commands(
        sub, COMMANDS, "_module",
        lambda p: p.add_argument("--log-level", default=None, choices=["DEBUG", "INFO", "WARNING", "ERROR"]),
    )
    return parser


def add_module_commands(sub, table: dict[str, tuple[str, str]], module_attr: str, prepare=None) -> None:
    """One subparser per ``name -> (module, help)``; the module adds its own arguments and the
    parsed namespace carries the module's name in ``module_attr`` (imported again to run)."""
    for name, (module, help_) in table.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(**{module_attr: module})
        if prepare is not None:
            prepare(p)
        importlib.import_module(module).add_arguments(p)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("plainsight-privacy")
    except Exception:  # pragma: no cover
        return "0+unknown"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    from .logs import setup_logging

    setup_logging(args.log_level)
    mod = importlib.import_module(args._module)
    try:
        return int(mod.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a user's mistake: one line, exit 2, no traceback (and never a value)
        msg = _usage_error(exc)
        if msg is None:
            raise
        print(f"plainsight {args.command}: error: {msg}", file=sys.stderr)
        return 2


def _usage_error(exc: BaseException) -> str | None:
    """The one-line message for a user's mistake (bad configuration, a file that cannot be opened),
    None for anything else (a bug keeps its traceback)."""
    from .config import UsageError

    if isinstance(exc, UsageError):
        return str(exc)
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)) and exc.filename:
        return f"cannot open {exc.filename}: {exc.strerror or type(exc).__name__}"
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
