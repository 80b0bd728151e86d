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
    "send": ("plainsight.middleware.commands.send", "put a chat turn on the input topic of a running serve (trying it by hand)"),
    "tail": ("plainsight.middleware.commands.tail", "print the records of a plainsight topic (deid, logs, replies, dlq)"),
}


#: the arguments being parsed (for the hint of a mistyped flag in a "required" error)
_ARGV: list[str] = []


class _Parser(argparse.ArgumentParser):
    """Every usage mistake is one line naming the (sub)command, ``plainsight CMD: error: …``, with
    a suggestion for a mistyped choice, and exit status 2 (argparse prints the usage too)."""

    def error(self, message: str):  # type: ignore[override]
        import difflib
        import re

        m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(2))
            close = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.5)
            if close:
                message += f"; did you mean {close[0]!r}?"
        elif message.startswith("the following arguments are required"):
            # often a mistyped flag ("--outptu" for "--output"): name it first
            flags = [s for a in self._actions for s in a.option_strings]
            for word in _ARGV:
                flag = word.split("=", 1)[0]
                if flag.startswith("--") and flag not in flags and not any(f.startswith(flag) for f in flags):
                    close = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
                    message = f"unrecognized argument {flag}" + (f"; did you mean {close[0]}?" if close else "")
                    break
        self.exit(2, f"{self.prog}: error: {message}\n")


def _sub_parser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return None


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> None:
    """A mistyped flag: name the subcommand and suggest its closest flag (one line, exit 2)."""
    import difflib

    leaf = _sub_parser(parser, getattr(args, "command", None)) or parser
    for attr in ("bench", "llm_command", "keys_command"):  # nested subcommands
        deeper = _sub_parser(leaf, getattr(args, attr, None))
        if deeper is not None:
            leaf = deeper
    word = next((e for e in extra if e.startswith("-")), extra[0])
    flag = word.split("=", 1)[0]
    flags = [s for a in leaf._actions for s in a.option_strings]
    close = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6) if flag.startswith("-") else []
    what = "unrecognized argument" if flag.startswith("-") else "unexpected argument"
    hint = f"; did you mean {close[0]}?" if close else f" (see: {leaf.prog} --help)"
    leaf.error(f"{what} {flag}{hint}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="plainsight", description=__doc__.splitlines()[0])
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
    _ARGV[:] = list(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, args, extra)
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
