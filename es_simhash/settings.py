"""Everything es-simhash reads from the environment and from its config file, in one room (no other module reads
``os.environ``). Standard library only: the command reads some of it before its heavy imports.

=========================  =============================================================================================
``ES_URL``, ``ES_API_KEY``, ``ES_USERNAME``, ``ES_PASSWORD``, ``ES_CA_CERTS``   how to reach Elasticsearch
``ES_SIMHASH_CONFIG``      a TOML config file (default ``~/.config/es-simhash/config.toml`` if it exists)
``ES_SIMHASH_INDEX``       the index name of the commands (read by the command line's options)
``KIBANA_URL``             Kibana's URL (default ``http://localhost:5601``)
``ES_SIMHASH_CACHE``       the cache folder (default ``~/.cache/es-simhash``)
``ES_SIMHASH_ENGINE``      ``python`` forces the pure-Python fingerprint engine
``ES_SIMHASH_SEGMENTER``   ``jieba`` forces the reference segmenter
``ES_SIMHASH_MEMORY_NATIVE``  ``0`` keeps the embedded index's lookups out of the native core
``ES_SIMHASH_DEBUG``       a traceback instead of the one line of an unexpected error
``TTY_COMPATIBLE``, ``FORCE_COLOR``  whether stderr takes a progress bar, as rich decides
=========================  =============================================================================================
"""

from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path
from typing import Any

from es_simhash.redact import remember, url_password

__all__ = ["cache_root", "python_engine_forced", "segmenter", "memory_native", "debug", "kibana_url",
           "elastic_env", "config_path", "read_config", "stderr_is_terminal", "ELASTIC_KEYS", "InsecureConfigWarning"]

ELASTIC_KEYS = ("url", "api_key", "username", "password", "ca_certs")
"""The connection settings the environment can give (``ES_URL``, ...)."""
_CONFIG_KEYS = {*ELASTIC_KEYS, "request_timeout"}
_SECRET_KEYS = ("api_key", "password")


class InsecureConfigWarning(UserWarning):
    """A config file that holds a secret can be read by other users (as ssh warns of a private key)."""


def _remember_secrets(values: dict[str, Any]) -> None:
    """The secrets among connection settings, to be masked in everything the process shows (:mod:`es_simhash.redact`)."""
    remember(*(str(values[k]) for k in _SECRET_KEYS if values.get(k)))
    if values.get("url"):
        remember(url_password(str(values["url"])))


def _flag(name: str) -> str:
    return os.environ.get(name, "").strip().lower()


def cache_root() -> Path:
    """Where es-simhash keeps what it computed once: ``ES_SIMHASH_CACHE``, else ``~/.cache/es-simhash``. Its parts:
    ``idf`` (parsed IDF tables) and ``segmenter`` (the native core's built dictionary); deleting it only costs
    time."""
    return Path(os.environ.get("ES_SIMHASH_CACHE") or Path.home() / ".cache" / "es-simhash")


def python_engine_forced() -> bool:
    """Whether ``ES_SIMHASH_ENGINE=python`` forces the pure-Python reference engine."""
    return _flag("ES_SIMHASH_ENGINE") == "python"


def segmenter(preferred: str) -> str:
    """The segmenter asked for: ``ES_SIMHASH_SEGMENTER`` when ``preferred`` is ``auto``, else ``preferred``."""
    return os.environ.get("ES_SIMHASH_SEGMENTER", preferred) if preferred == "auto" else preferred


def memory_native() -> bool:
    """Whether the embedded index may look up in the native core (``ES_SIMHASH_MEMORY_NATIVE=0`` says no)."""
    return _flag("ES_SIMHASH_MEMORY_NATIVE") not in ("0", "false", "no", "off")


def debug() -> bool:
    """``ES_SIMHASH_DEBUG``: a traceback instead of the one-line message of an unexpected error."""
    return bool(os.environ.get("ES_SIMHASH_DEBUG"))


def kibana_url(given: str | None) -> str:
    """Kibana's URL: ``given``, else ``KIBANA_URL``, else ``http://localhost:5601``."""
    url = (given or os.environ.get("KIBANA_URL") or "http://localhost:5601").rstrip("/")
    remember(url_password(url))
    return url


def elastic_env() -> dict[str, str]:
    """The connection settings the environment gives (``ES_URL``, ``ES_API_KEY``, ``ES_USERNAME``, ``ES_PASSWORD``,
    ``ES_CA_CERTS``), the empty ones left out."""
    env = {key: os.environ.get(f"ES_{key.upper()}") for key in ELASTIC_KEYS}
    found = {k: v for k, v in env.items() if v}
    _remember_secrets(found)
    return found


def config_path(given: str | os.PathLike[str] | None = None) -> tuple[str | None, bool]:
    """``(path, explicit)`` of the config file: ``given``, else ``ES_SIMHASH_CONFIG`` (both explicit: it must exist),
    else ``~/.config/es-simhash/config.toml`` when it exists; ``(None, False)`` when there is none."""
    path = given or os.environ.get("ES_SIMHASH_CONFIG")
    if path:
        return os.fspath(path), True
    default = os.path.join(os.path.expanduser("~"), ".config", "es-simhash", "config.toml")
    return (default, False) if os.path.exists(default) else (None, False)


def read_config(path: str | os.PathLike[str], explicit: bool) -> dict[str, Any]:
    """The ``[elasticsearch]`` table of a TOML config file (``ValueError``, one line, when it cannot be read or has
    unknown keys; a missing file is an error only when it was named). A file that holds a secret (a password, an
    API key, a URL with a password) and that other users can read gives an :class:`InsecureConfigWarning`."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        if explicit:
            raise ValueError(f"config file not found: {path}") from None
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"cannot read config file {path}: {exc}") from None
    section = data.get("elasticsearch", {})
    unknown = set(section) - _CONFIG_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown [elasticsearch] keys {sorted(unknown)}; expected {sorted(_CONFIG_KEYS)}")
    _remember_secrets(section)
    for key, value in section.items():
        _check_type(path, key, value)
    if any(section.get(k) for k in _SECRET_KEYS) or url_password(str(section.get("url") or "")):
        _warn_if_readable(path)
    return dict(section)


def _check_type(path: str | os.PathLike[str], key: str, value: Any) -> None:
    """``ValueError`` (one line, naming the file and key, never a secret's value) for a value of the wrong type."""
    if key == "request_timeout":
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return
        wanted, example = "a number of seconds above 0", "request_timeout = 60"
    elif isinstance(value, str):
        return
    else:
        wanted, example = "a string", f'{key} = "..."'
    shown = f"of type {type(value).__name__}" if key in _SECRET_KEYS else repr(value)
    raise ValueError(f"{path}: [elasticsearch] {key} is {shown}, not {wanted}: write e.g. {example}")


def _warn_if_readable(path: str | os.PathLike[str]) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        warnings.warn(f"config file {path} holds a secret and other users can read it (mode "
                      f"{stat.S_IMODE(mode):o}): chmod 600 {path}", InsecureConfigWarning, stacklevel=3)


def stderr_is_terminal(stream: Any) -> bool:
    """Whether ``stream`` (stderr) takes a progress bar: a terminal, or one by the environment's say
    (``TTY_COMPATIBLE``, ``FORCE_COLOR``), as rich decides."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # (no stream, or a closed one)
        return False
