"""Promises the repository makes to its users: the two README commands, CI, and versions that agree."""

import re
from pathlib import Path

import yaml

import es_node

ROOT = Path(__file__).resolve().parents[1]


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_command():
    head = (ROOT / "README.md").read_text(encoding="utf-8").split("```")[1]
    lines = [ln.split("#")[0].strip() for ln in head.strip().splitlines()[1:]]
    main_job, test_cmd = lines[0], lines[1]
    assert "es-simhash dedup examples/crawl.jsonl.gz" in main_job and (ROOT / "examples/crawl.jsonl.gz").exists()
    assert test_cmd == "bash scripts/test.sh"
    ci = [ln.strip() for ln in (ROOT / ".ci/run").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert test_cmd in ci


def test_docker_compose_runs_the_version_the_tests_run():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    images = {name: svc["image"] for name, svc in compose["services"].items()}
    versions = {re.search(r":(\d+\.\d+\.\d+)$", img).group(1) for img in images.values()}
    assert versions == {es_node.ES_VERSION}
    assert all(p.startswith("127.0.0.1:") for svc in compose["services"].values() for p in svc.get("ports", []))


def test_the_wheel_ships_the_top_level_templates_unchanged(tmp_path):
    """templates/ is the source of the index template and the Kibana objects; the package ships it (through the
    es_simhash/templates link): the files in a built wheel equal the files in templates/, byte for byte."""
    import subprocess
    import sys
    import zipfile

    sources = sorted(p for p in (ROOT / "templates").rglob("*") if p.is_file())
    assert {p.relative_to(ROOT / "templates").as_posix() for p in sources} >= {
        "index-template.json", "kibana/es-simhash.ndjson"}
    # build from a copy without build leftovers; --no-build-isolation: setuptools is already installed here
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=300)
    wheel = next(tmp_path.glob("es_simhash-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        shipped = {n[len("es_simhash/templates/"):]: zf.read(n) for n in zf.namelist()
                   if n.startswith("es_simhash/templates/") and not n.endswith("/")}
    assert shipped == {p.relative_to(ROOT / "templates").as_posix(): p.read_bytes() for p in sources}


def test_the_8x_run_is_part_of_the_test_command_and_runs_the_8x_version_the_readme_names():
    script = (ROOT / "scripts/test_es8.sh").read_text()
    version = re.search(r'ES8_VERSION="\$\{ES_SIMHASH_ES8_VERSION:-(8\.\d+\.\d+)\}"', script).group(1)
    assert '"elasticsearch>=8.12,<9"' in script
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"\b8\.\d+\.\d+\b", readme)) == {version}
    assert "bash scripts/test_es8.sh" in (ROOT / "scripts/test.sh").read_text()
