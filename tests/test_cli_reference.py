"""docs/cli.md is the `--help` of every command, regenerated here: the test fails when a command, option or help
text changed and the reference was not regenerated (python scripts/cli_reference.py)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_what_help_says_now():
    text = _script().render()
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == text, "docs/cli.md is out of date: run python scripts/cli_reference.py"


def test_the_reference_covers_every_command_and_option():
    from typer.main import get_command

    from es_simhash.cli import app

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in get_command(app).commands:
        assert f"## `es-simhash {name}`" in text
    assert "## `es-simhash kibana import`" in text
    assert "-k, --max-distance" in text and "--checkpoint" in text and "--from-dedup" in text


def test_the_check_mode_fails_on_a_stale_reference(tmp_path, monkeypatch):
    script = _script()
    stale = tmp_path / "cli.md"
    stale.write_text("# Command-line reference\n\nold\n", encoding="utf-8")
    monkeypatch.setattr(script, "TARGET", stale)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0 and script.main(["--check"]) == 0
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
                         capture_output=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr.decode()


def test_help_and_unknown_arguments_write_nothing(tmp_path, monkeypatch):
    script = _script()
    stale = tmp_path / "cli.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(script, "TARGET", stale)
    for args, code in ((["--help"], 0), (["-h"], 0), (["--chek"], 2), (["docs/other.md"], 2)):
        with pytest.raises(SystemExit) as exited:
            script.main(args)
        assert exited.value.code == code, args
        assert stale.read_text(encoding="utf-8") == "old\n", args
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--help"],
                         capture_output=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 0 and b"--check" in res.stdout and b"wrote" not in res.stdout
