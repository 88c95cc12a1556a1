"""Two runs never share a checkpoint: the second stops with a clear error before it touches anything, and a lock
left by a killed run is taken over."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from es_simhash.pipeline import Checkpoint, CheckpointInUse


def test_a_held_checkpoint_refuses_a_second_run_until_released(tmp_path):
    path = tmp_path / "run.checkpoint.json"
    first, second = Checkpoint(path, ["a.jsonl"]), Checkpoint(path, ["a.jsonl"])
    with first.lock():
        with first.lock():  # re-entrant for the run that holds it
            pass
        assert os.path.exists(first.lock_path)
        with pytest.raises(CheckpointInUse, match=f"in use by process {os.getpid()}"):
            with second.lock():
                pass
    assert not os.path.exists(first.lock_path)
    with second.lock():
        pass


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    cp = Checkpoint(tmp_path / "c.json", ["a.jsonl"])
    with open(cp.lock_path, "w") as fh:
        json.dump({"pid": int(dead.stdout), "host": socket.gethostname(), "since": "earlier"}, fh)
    with cp.lock():
        assert json.load(open(cp.lock_path))["pid"] == os.getpid()


def _cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "es_simhash", *map(str, args)], **kw)


def test_a_second_index_process_with_the_same_checkpoint_stops_and_leaves_the_first_alone(es_url, es_index_name,
                                                                                         tmp_path):
    env = dict(os.environ, ES_URL=es_url)
    cp, report = tmp_path / "shared.checkpoint.json", tmp_path / "first.jsonl"
    first = _cli("index", "-", "--index", es_index_name, "--checkpoint", cp, "--report", report, "--no-progress",
                 "--batch-size", "2", stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        for i in range(3):
            first.stdin.write(json.dumps({"id": f"a{i}", "content": f"第{i}篇：今天的天气非常好，适合出去散步。"}).encode()
                              + b"\n")
        first.stdin.flush()
        deadline = time.monotonic() + 120
        while not os.path.exists(f"{cp}.lock") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert os.path.exists(f"{cp}.lock"), first.stderr.read().decode() if first.poll() is not None else ""
        second = subprocess.run([sys.executable, "-m", "es_simhash", "index", "-", "--index", es_index_name,
                                 "--checkpoint", cp, "--report", report, "--no-progress"],
                                input=b'{"id": "b", "content": "x"}\n', capture_output=True, env=env, cwd=tmp_path,
                                timeout=300)
        err = second.stderr.decode().strip()
        assert second.returncode == 1 and err.count("\n") == 0
        assert f"in use by process {first.pid}" in err and "its own checkpoint (option --checkpoint FILE)" in err
        first.stdin.close()
        assert first.wait(timeout=300) == 0, first.stderr.read().decode()
    finally:
        if first.poll() is None:
            first.kill()
    lines = [json.loads(x) for x in report.read_text().splitlines()]
    assert [x["id"] for x in lines] == ["a0", "a1", "a2"]  # the second run truncated nothing
    assert not os.path.exists(f"{cp}.lock") and not os.path.exists(cp)
