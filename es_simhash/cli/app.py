"""The ``es-simhash`` command line (Typer): a thin layer over the public Python API.

Each command opens what it needs, makes one library call and turns the library's named errors into one line and
an exit code. Commands live by concern: :mod:`~es_simhash.cli.embedded` (no server),
:mod:`~es_simhash.cli.elastic` (writing an index, looking into it by document), :mod:`~es_simhash.cli.results`
(search, clusters, report, Kibana); the options several commands share are declared once
(:mod:`~es_simhash.cli.common`, :mod:`~es_simhash.cli.connection`: the connection options as one decorator).
Each command imports the library's modules it calls inside its own body (plain imports, read top-down), so
`--help` imports none of them. Help is plain text (Typer's, without rich markup: rich is imported only to draw a
progress bar or a table).

Exit codes: 0 success (duplicates and dead letters are results, not failures); 1 an error about the world the
user can fix (a missing or unreadable file, IDF table or CA file, a URL that does not parse, an output that is an
input); 2 a usage error: an unknown option or command, a missing argument, a value an option does not take (an
unknown choice or codec, a number out of range or not a number, a malformed --lookup spec or index name), `check`,
`fingerprint` or `search` without a text; 3 Elasticsearch or OpenSearch (or Kibana) could not be reached, refused
the request, is not what the URL should point at, or the index was not made by es-simhash; 4 an ingest gave up
after retrying and can be resumed (--resume); 5 nothing could be decided (an empty input, or every record a dead
letter: the line says why; no index is created, earlier outputs are kept); 130 interrupted (`index`/`migrate`:
with what was saved and how to resume). Every error is one line on stderr, ``es-simhash: error: ...``; the
parser's own usage errors are made one line too (:func:`main` runs the app outside click's standalone mode),
ending with the help to read.
"""


import gc
import re
import sys
from typing import Annotated, Any

import typer
from typer import Abort
from typer._click.exceptions import (BadParameter, ClickException, MissingParameter, NoArgsIsHelpError,
                                      UsageError)
from typer.core import TyperCommand, TyperGroup

from es_simhash import __version__
from es_simhash.cli import elastic, embedded, results
from es_simhash.cli.common import UserError, err
from es_simhash.cli.guard import guard
from es_simhash.errors import InputError


def _short_help(self: Any, limit: int = 45) -> str:
    """The first paragraph of the help in full (the list of commands wraps it), not cut at ``limit``."""
    return self.short_help or " ".join((self.help or "").split("\n\n")[0].split())


class Command(TyperCommand):
    """A command listed in its group with the first paragraph of its help in full."""

    get_short_help_str = _short_help


class Group(TyperGroup):
    """Commands listed in the order they were added (subgroups last); no arguments: the help and exit 2; an unknown
    command suggests the nearest; Ctrl-C is exit 130 (``main`` says so)."""

    get_short_help_str = _short_help

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:  # the help, on stdout, and exit 2
            typer.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: Any) -> list[str]:
        """The commands in the order they were added, and then the subgroups."""
        return sorted(self.commands, key=lambda name: isinstance(self.commands[name], TyperGroup))

    def resolve_command(self, ctx: Any, args: list[str]):
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            from difflib import get_close_matches

            matches = get_close_matches(args[0], list(self.commands))
            if matches:
                ctx.fail(f"no such command {args[0]!r}; did you mean {', '.join(map(repr, matches))}?")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: Any):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise typer.Exit(130) from None


_SETTINGS: dict[str, Any] = dict(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False,
                                 no_args_is_help=True, cls=Group,
                                 context_settings={"help_option_names": ["-h", "--help"], "show_default": True})

app = typer.Typer(
    name="es-simhash",
    help="Find near-duplicate documents in crawled Chinese and English text with SimHash fingerprints.\n\n"
         "Runs embedded (no server) with `dedup`; the same engine indexes into Elasticsearch or OpenSearch with "
         "`index` (the node's own answer tells which).",
    **_SETTINGS,
)
kibana_app = typer.Typer(name="kibana", help="Kibana saved objects: a data view, saved searches and a dashboard.",
                         **_SETTINGS)


def version() -> None:
    """Print the version (also: es-simhash --version)."""
    typer.echo(__version__)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                               help="Print the version and exit.")] = False,
) -> None:
    pass


# the commands, in the order the help lists them
for name, function in (
    ("fingerprint", embedded.fingerprint),
    ("dedup", embedded.dedup),
    ("fit-idf", embedded.fit_idf),
    ("init", elastic.init),
    ("index", elastic.index_cmd),
    ("check", elastic.check),
    ("search", results.search_cmd),
    ("clusters", results.clusters),
    ("report", results.report_cmd),
    ("explain", embedded.explain),
    ("evaluate", embedded.evaluate),
    ("delete", elastic.delete),
    ("drop-partition", elastic.drop_partition),
    ("repair", elastic.repair),
    ("migrate", elastic.migrate),
    ("version", version),
):
    app.command(name, cls=Command)(function)
kibana_app.command("import", cls=Command)(results.kibana_import)
kibana_app.command("export", cls=Command)(results.kibana_export)
app.add_typer(kibana_app)


def _what_it_takes(message: str, kind: Any) -> str:
    """The parser's message about a number out of its range, in words: ``'x' is not a whole number from 0 to 64``."""
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    if (low is None and high is None) or " is not " not in message:
        return message
    number = "a whole number" if kind.name == "int range" else "a number"
    bounds = (f"from {low} to {high}" if low is not None and high is not None
              else f"of {low} or more" if low is not None else f"of {high} or less")
    return f"{message.split(' is not ')[0]} is not {number} {bounds}"


def usage_error(exc: UsageError) -> str:
    """The parser's usage error as one line: what is wrong (a value an option does not take names the option), and
    the help to read (``(es-simhash dedup --help)``)."""
    param = getattr(exc, "param", None)
    if isinstance(exc, BadParameter) and not isinstance(exc, MissingParameter) and param is not None and param.opts \
            and param.param_type_name == "option":
        message = f"invalid value for {'/'.join(sorted(param.opts, key=len))}: {_what_it_takes(exc.message, param.type)}"
    else:
        message = exc.format_message()
        message = message[:1].lower() + re.sub(r"'(-{1,2}[\w-]+)'", r"\1", message[1:]).replace(" / -", "/-")
    message = " ".join(message.split()).rstrip(".")
    return f"{message} ({exc.ctx.command_path} --help)" if exc.ctx is not None else message


def main(argv: list[str] | None = None) -> int:
    """Runs the app, turning known errors into one line and an exit code (the ``es-simhash`` command is
    :func:`es_simhash.__main__.main`, which starts the native segmenter first for the commands that segment)."""
    from es_simhash.settings import debug

    # The objects of the imports (modules, classes, functions) live as long as the process: out of the garbage
    # collector's scans (a full collection walks every object), and young collections every 10,000 allocations
    # rather than 700: a run allocates a few objects per document, and almost none of them form cycles.
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    guard(sys.argv[1:] if argv is None else argv)
    try:
        # not standalone: the parser's usage errors come here, to be one line (standalone, it prints four)
        code = app(args=argv, prog_name="es-simhash", standalone_mode=False)
        if code == 130:  # Ctrl-C is a silent exit 130 (Group.invoke): say so
            err("es-simhash: interrupted")
        return code if isinstance(code, int) else 0
    except UsageError as exc:
        if isinstance(exc, NoArgsIsHelpError):  # (a group without a command: its help, as Group.parse_args does)
            typer.echo(exc.format_message())
            return 2
        err(f"es-simhash: error: {usage_error(exc)}")
        return 2
    except Abort:  # (end of input at a prompt)
        err("es-simhash: error: aborted")
        return 1
    except ClickException as exc:
        err(f"es-simhash: error: {exc.format_message()}")
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except UserError as exc:
        err(f"es-simhash: error: {exc}")
        return exc.code
    except InputError as exc:  # (an input found unreadable once read: a zstd-compressed stdin)
        err(f"es-simhash: error: {exc}")
        return 1
    except KeyboardInterrupt:
        err("es-simhash: interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        where = f": {exc.filename}" if exc.filename else ""
        err(f"es-simhash: error: {exc.strerror or exc}{where}")
        return 1
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if debug():
            raise
        err(f"es-simhash: unexpected error: {type(exc).__name__}: {exc} (set ES_SIMHASH_DEBUG=1 for a traceback)")
        return 1
    return 0
