"""Every error es-simhash raises on purpose, in one room, under one base class.

A caller can catch :class:`EsSimhashError` for all of them, or one of its kinds; each message is one line that says
what to do, names a setting (never a command-line option: the command line adds those), and holds no secret. The
command line turns each kind into its exit code (``es_simhash.cli``).
"""

from __future__ import annotations

__all__ = ["EsSimhashError", "InvalidValue", "ElasticError", "IndexNotManaged", "InvalidSetting", "InvalidURL", "MaintenanceError", "DuplicateIdError",
           "IndexingError", "OutputError", "InputError", "LabelError", "IndexFileError", "SavedIndexError",
           "IndexFileNotFound", "NotAnIndexFile", "UnreadableIndexFile", "OldFingerprints", "OtherFingerprintSettings",
           "NoFingerprintSettings", "CheckpointInUse", "NoCheckpoint", "KibanaError", "InvalidKibanaURL",
           "InvalidKibanaCA", "ReportError", "UnservableContract"]


class EsSimhashError(Exception):
    """The base of es-simhash's own errors."""


class InvalidValue(EsSimhashError, ValueError):
    """A value a setting does not take (an unknown codec, markup mode or lookup-key spec); ``setting`` names it
    (``"encoding"``, ``"html"``, ``"lookup"``), and the message says what it takes."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


# -- Elasticsearch, Kibana -----------------------------------------------------------------------------------------
class ElasticError(EsSimhashError):
    """Elasticsearch could not be reached or refused a request; the message is one line and has no secrets.

    ``setting`` names the connection setting to look at (``"url"``, ``"ca_certs"``), if any; the message then ends
    with the environment variable that sets it, and a command line adds its own option."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class IndexNotManaged(ElasticError):
    """The index does not exist, or was not made by es-simhash (it has none of the fields es-simhash reads)."""


class InvalidSetting(EsSimhashError, ValueError):
    """A connection setting that cannot be used as given (a CA certificate file that is missing or not PEM, ...);
    ``setting`` names it (``"url"``, ``"ca_certs"``), and the message ends with its environment variable."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class InvalidURL(InvalidSetting):
    """A URL that names no http(s) host and port (e.g. ``127.0.0.1:9200`` without ``http://``, or port 99999)."""

    def __init__(self, message: str, setting: str | None = "url") -> None:
        super().__init__(message, setting)


class KibanaError(EsSimhashError):
    """Kibana could not be reached or refused the import; the message is one line without secrets."""


class InvalidKibanaURL(KibanaError, ValueError):
    """The Kibana URL names no http(s) host and port."""


class InvalidKibanaCA(KibanaError, ValueError):
    """The CA certificate to verify Kibana with is missing, unreadable or not PEM."""


# -- the engine and the index --------------------------------------------------------------------------------------
class UnservableContract(EsSimhashError, ValueError):
    """A decision rule's candidate contract (:class:`~es_simhash.lookup.candidates.CandidateContract`) asks a
    backend for candidates it cannot serve: the lookup fails rather than answer with other candidates."""


class MaintenanceError(EsSimhashError, RuntimeError):
    """A maintenance step could not finish (e.g. documents kept changing under it); running it again is safe."""


class DuplicateIdError(EsSimhashError, ValueError):
    """The same id appeared twice in one run."""


class IndexingError(EsSimhashError, RuntimeError):
    """The backend refused to store a document (e.g. a mapping error on one of its fields)."""


class IndexFileError(EsSimhashError, ValueError):
    """A file given to ``MemoryIndex.load`` is not an es-simhash memory index."""


class SavedIndexError(EsSimhashError):
    """A saved in-memory index that :meth:`MemoryIndex.open <es_simhash.index.memory.MemoryIndex.open>` cannot use;
    ``path`` is the file (None: an index that was never saved or loaded)."""

    def __init__(self, message: str, path: str | None) -> None:
        super().__init__(message)
        self.path = path


class IndexFileNotFound(SavedIndexError):
    """No file at the path (the message names the ``.npz`` file beside it, if there is one)."""


class NotAnIndexFile(SavedIndexError):
    """A file that is not an es-simhash memory index (one written by ``MemoryIndex.save`` is)."""


class UnreadableIndexFile(SavedIndexError):
    """An index file that cannot be read (damaged, unreadable)."""


class OldFingerprints(SavedIndexError):
    """An index holding fingerprints of another version (``versions``): they would never match new ones; the index
    must be built again from its input."""

    def __init__(self, message: str, path: str, versions: list[int]) -> None:
        super().__init__(message, path)
        self.versions = versions


class OtherFingerprintSettings(SavedIndexError, ValueError):
    """An embedded index holding fingerprints made with other settings (another IDF table, another fingerprint
    version or option) than the ones it is asked to look up or add: they are not comparable. ``stored`` and
    ``current`` are the two (:meth:`FingerprintSettings.meta <es_simhash.fingerprint.config.FingerprintSettings.meta>`);
    the message names each setting that differs with both values."""

    def __init__(self, message: str, path: str | None, stored: dict, current: dict) -> None:
        super().__init__(message, path)
        self.stored = stored
        self.current = current


class NoFingerprintSettings(SavedIndexError):
    """A saved index with documents but no record of the fingerprint settings they were made with (written before
    indexes recorded them, or filled without them): nothing says its fingerprints are comparable with new ones;
    it must be built again from its input."""


# -- files ---------------------------------------------------------------------------------------------------------
class InputError(EsSimhashError, ValueError):
    """An input that cannot be read as JSON Lines at all (missing, or a folder)."""


class OutputError(EsSimhashError, ValueError):
    """An output that would hurt an input or another output, or that cannot be written: the message names the
    output and says what to do."""


class CheckpointInUse(EsSimhashError, ValueError):
    """Another running process holds the checkpoint: two runs must never share one."""


class NoCheckpoint(EsSimhashError, ValueError):
    """There is no checkpoint to resume from (the run it belonged to finished, or stopped before its first batch
    was saved)."""


class LabelError(EsSimhashError, ValueError):
    """A labels file that cannot be read (the message names the line)."""


class ReportError(EsSimhashError):
    """A one-line problem with the report's input or environment (missing matplotlib, unreadable file)."""
