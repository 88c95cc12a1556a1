"""What the command does before any command runs so that no secret leaves the process: the secrets on its command
line remembered (:func:`es_simhash.redact.remember`), stderr passed through :func:`~es_simhash.redact.redact`
(messages, warnings, log lines, progress bars, tracebacks) and stdout through
:func:`~es_simhash.redact.forget_known` (data: a URL-shaped string in a document stays as it is; a remembered
secret does not), and Python warnings shown as one line."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Callable, Sequence

from es_simhash.redact import forget_known, redact, remember, url_password

SECRET_OPTIONS = ("--es-url", "--password", "--api-key", "--kibana-url")
"""Options whose value is, or may hold, a secret."""


class RedactedStream:
    """A text stream whose writes go through ``mask`` first; everything else is the wrapped stream's."""

    def __init__(self, stream: Any, mask: Callable[[str], str]) -> None:
        self._stream, self._mask = stream, mask

    def write(self, text: str) -> int:
        self._stream.write(self._mask(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def remember_argv(args: Sequence[str]) -> None:
    """Remember the secrets given on the command line (``--password X``, ``--es-url=URL``, ...) before it is
    parsed: a parse error must not print them either."""
    for i, arg in enumerate(args):
        for option in SECRET_OPTIONS:
            if arg == option and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(option + "="):
                value = arg[len(option) + 1:]
            else:
                continue
            remember(url_password(value) if option.endswith("url") else value)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"es-simhash: warning: {' '.join(str(message).split())}", file=sys.stderr, flush=True)


def guard(args: Sequence[str]) -> None:
    """Install the guard for this process (once)."""
    remember_argv(args)
    if not isinstance(sys.stderr, RedactedStream) and sys.stderr is not None:
        sys.stderr = RedactedStream(sys.stderr, redact)  # type: ignore[assignment]
    if not isinstance(sys.stdout, RedactedStream) and sys.stdout is not None:
        sys.stdout = RedactedStream(sys.stdout, forget_known)  # type: ignore[assignment]
    warnings.showwarning = _one_line_warning
