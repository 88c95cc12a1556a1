"""Write docs/cli.md, the command-line reference, from the ``--help`` of every command.

    python scripts/cli_reference.py          # regenerate docs/cli.md
    python scripts/cli_reference.py --check  # exit 1 if docs/cli.md differs from what --help says now
    python scripts/cli_reference.py --help   # this, and nothing written (any other argument: exit 2)

tests/test_cli_reference.py runs the check, so the reference cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "docs" / "cli.md"
WIDTH = 100


def _commands(group, path: tuple[str, ...] = ()):
    """``(path, command)`` of every command under a group (the Typer app's click group), depth first, in the order
    ``--help`` lists."""
    yield path, group
    if hasattr(group, "list_commands"):  # a group
        ctx = group.make_context(" ".join(("es-simhash", *path)), ["--help"], resilient_parsing=True)
        for name in group.list_commands(ctx):
            yield from _commands(group.get_command(ctx, name), (*path, name))


def _help(app, path: tuple[str, ...]) -> str:
    from typer.testing import CliRunner

    env = {"COLUMNS": str(WIDTH), "LINES": "50", "NO_COLOR": "1", "TERM": "dumb", "FORCE_COLOR": None,
           "ES_URL": None, "ES_API_KEY": None, "ES_USERNAME": None, "ES_PASSWORD": None, "ES_CA_CERTS": None,
           "ES_SIMHASH_INDEX": None, "KIBANA_URL": None}
    res = CliRunner().invoke(app, [*path, "--help"], prog_name="es-simhash", env=env, terminal_width=WIDTH)
    if res.exit_code != 0:
        raise RuntimeError(f"es-simhash {' '.join(path)} --help failed: {res.output}")
    return "\n".join(line.rstrip() for line in res.output.strip("\n").splitlines())


def render() -> str:
    """The reference as Markdown: one section per command, its ``--help`` verbatim."""
    from typer.main import get_command

    from es_simhash.cli import app

    parts = ["# Command-line reference", "",
             "Generated from `--help` by `python scripts/cli_reference.py`; do not edit by hand "
             "(`tests/test_cli_reference.py` fails when this file and the commands disagree).", ""]
    for path, _ in _commands(get_command(app)):
        title = " ".join(("es-simhash", *path))
        parts += [f"## `{title}`" if path else f"## `{title}` (overview)", "", "```text", _help(app, path), "```", ""]
    return "\n".join(parts)


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python scripts/cli_reference.py",
                                     description="Write docs/cli.md, the command-line reference, from the --help of "
                                                 "every es-simhash command.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing: exit 1 if docs/cli.md differs from what --help says now")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
