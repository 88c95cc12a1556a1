"""The Elasticsearch backend, one class: :class:`ElasticIndex`, and the collaborators it delegates to."""

from __future__ import annotations

from typing import Any, Callable, Collection, Iterator, Mapping, Sequence

from es_simhash.defaults import MAX_SENTENCE_DF, RETRY_FOR
from es_simhash.index.base import Lookup, LookupResult
from es_simhash.records import StoredDoc
from es_simhash.errors import ElasticError
from es_simhash.index.elastic.admin import (age_seconds, check_index_config, detach, ensure_index,
                                            ensure_partitioned, index_exists, is_partition_of, record_partitions,
                                            recorded_partitions, require_index, roll_over)
from es_simhash.index.elastic.errors import elastic_errors
from es_simhash.index.elastic.handle import IndexHandle
from es_simhash.index.elastic.keyfilter import PartitionFilters
from es_simhash.index.elastic.planner import Boilerplate, LookupPlanner
from es_simhash.index.elastic.reads import MaintenanceReader
from es_simhash.index.elastic.writes import BulkWriter
from es_simhash.lookup.candidates import CandidateContract, served
from es_simhash.lookup.keys import DEFAULT as DEFAULT_KEYS
from es_simhash.lookup.keys import LookupKeys


class ElasticIndex:
    """A :class:`~es_simhash.index.base.MaintainedIndex` over one Elasticsearch index.

    Every method delegates to one of its collaborators: :attr:`handle` (:class:`IndexHandle`: client, index name,
    lookup keys, retried requests, refreshes and the visible mark), :attr:`planner` (:class:`LookupPlanner`,
    lookups), :attr:`writer` (:class:`BulkWriter`) and :attr:`reader` (:class:`MaintenanceReader`, what
    maintenance reads); :attr:`boilerplate` is what lookups learned of the hashes that bring no candidates.

    ``lookup_keys``: the index's lookup keys; by default read from its mapping (``_meta.lookup``, recorded by
    :func:`ensure_index`); an index with none recorded uses its four 16-bit segments. ``batch_page``: hits one
    batched lookup search may return before the batch is split (a bucket shared by many documents: boilerplate);
    ``page_size``: hits per page of a per-document search; ``max_candidates``: most candidates read for one
    document; ``chunk_size``, ``max_retries``: actions per bulk request and its retries on 429; ``retry_for``:
    seconds a request failing transiently is retried; ``url``: the cluster as messages name it.

    ``index`` may be an alias over partitions: every read covers them all, a stored document is written back in
    the partition holding it, a new one goes to the alias's write index (:class:`IndexHandle`). With
    ``rollover_docs`` or ``rollover_age`` (``30d``, ``12h``: days, hours, minutes or seconds), :meth:`prepare` makes
    a new ``index`` such an alias (its first partition ``index-000001``) and :meth:`add` rolls it over, before
    writing a batch, once its write index holds that many documents or is that old. The cluster may roll the alias
    over too (a lifecycle policy), between two batches or during a write: the new partition has es-simhash's
    mapping from the alias's partition template (installed by :meth:`prepare`:
    :func:`~es_simhash.index.elastic.admin.install_partition_template`), new documents go to whichever index is
    the write index, and :meth:`visible_mark` and :meth:`written_since` count a partition made since the mark
    whole. With a ``window`` of N partitions, lookups search only the newest N partitions of the alias (a dedup
    window: a document is compared with those written in them; every other read still covers every partition);
    with a ``window`` by age (``"30d"``, ``"12h"``), the partitions written into in that time: the write index and
    each partition whose next one was made since (a ``ValueError`` for another string). Through an alias, a batched
    lookup asks each partition but the newest only for the batch's terms its documents hold
    (:attr:`partition_filters`; ``filter_partitions=False``: every partition for every term).
    """

    overlapping_writes = True
    """The engine may look up batch N+1 while batch N is written (see :meth:`lookup`'s ``exclude``)."""
    shared_writers = True
    """Other processes may write into the index at the same time: the engine settles each batch after its write
    (:func:`es_simhash.clustering.settle`)."""

    def __init__(
        self,
        client,
        index: str,
        *,
        page_size: int = 500,
        batch_page: int = 10_000,
        max_candidates: int = 20_000,
        max_sentence_df: int = MAX_SENTENCE_DF,
        chunk_size: int = 500,
        max_retries: int = 8,
        retry_for: float = RETRY_FOR,
        url: str = "",
        lookup_keys: LookupKeys | None = None,
        rollover_docs: int | None = None,
        rollover_age: str | None = None,
        window: int | str | None = None,
        filter_partitions: bool = True,
    ) -> None:
        if rollover_docs is not None and rollover_docs < 1:
            raise ValueError(f"rollover_docs must be at least 1, not {rollover_docs}")
        if rollover_age is not None:
            age_seconds(rollover_age)  # (a ValueError for anything but an age)
        self.rollover_docs = rollover_docs
        """Documents after which the alias's write index is rolled over (before the next batch is written); ``None``:
        never by es-simhash."""
        self.rollover_age = rollover_age
        """The age (since it was created) after which the alias's write index is rolled over, as
        :attr:`rollover_docs`; ``None``: never by es-simhash."""
        self.handle = IndexHandle(client, index, url=url, retry_for=retry_for, lookup_keys=lookup_keys, window=window)
        self.boilerplate = Boilerplate(max_sentence_df)
        self.planner = LookupPlanner(self.handle, self.boilerplate, page_size=page_size, batch_page=batch_page,
                                     max_candidates=max_candidates)
        self.planner.batched.filters.enabled = filter_partitions
        self.writer = BulkWriter(self.handle, chunk_size=chunk_size, max_retries=max_retries)
        self.reader = MaintenanceReader(self.handle)
        self._settings_checked: dict[str, Any] | None = None

    @classmethod
    def existing(cls, client, index: str, **options: Any) -> "ElasticIndex":
        """An index es-simhash made, as ``check``, ``delete``, ``repair`` and ``migrate --from`` open theirs: an
        :class:`~es_simhash.errors.IndexNotManaged` (one line, what to do) when it does not exist or was not made by
        es-simhash (:func:`require_index`: its documents have none of the fields es-simhash reads). ``options``:
        as ``ElasticIndex(...)`` takes them."""
        require_index(client, index, options.get("url", ""))
        return cls(client, index, **options)

    # -- settings and counters, kept by the collaborators -----------------------------------------------------
    @property
    def client(self):
        """The Elasticsearch client every request goes through (settable: the collaborators share it)."""
        return self.handle.client

    @client.setter
    def client(self, client) -> None:
        self.handle.client = client

    @property
    def index(self) -> str:
        """The index's name."""
        return self.handle.index

    @property
    def url(self) -> str:
        """The cluster's URL as messages show it."""
        return self.handle.url

    @property
    def partition_filters(self) -> PartitionFilters:
        """The term filters of an alias's older partitions, through which batched lookups ask each partition only
        for the terms it holds (:mod:`~es_simhash.index.elastic.keyfilter`)."""
        return self.planner.batched.filters

    @property
    def lookup_keys(self) -> LookupKeys:
        """The keys recorded in the index's mapping (:attr:`IndexHandle.lookup_keys`)."""
        return self.handle.lookup_keys

    @property
    def max_sentence_df(self) -> int:
        """Sentences held by more documents than this are boilerplate: they bring no candidates."""
        return self.boilerplate.max_sentence_df

    @max_sentence_df.setter
    def max_sentence_df(self, value: int) -> None:
        """A new bound, from the next lookup on (hashes learned under the old one are counted again)."""
        self.boilerplate.max_sentence_df = value

    @property
    def max_terms_count(self) -> int:
        """Most values in one ``terms`` clause (:attr:`IndexHandle.max_terms_count`)."""
        return self.handle.max_terms_count

    @max_terms_count.setter
    def max_terms_count(self, value: int) -> None:
        self.handle.max_terms_count = value

    @property
    def max_sketch_clauses(self) -> int:
        """Most sketch-hash clauses in one batched search (:attr:`LookupPlanner.max_sketch_clauses`)."""
        return self.planner.max_sketch_clauses

    @max_sketch_clauses.setter
    def max_sketch_clauses(self, value: int) -> None:
        self.planner.max_sketch_clauses = value

    @property
    def max_candidates(self) -> int:
        """Most candidates read for one document before its lookup is marked truncated."""
        return self.planner.per_document.max_candidates

    @property
    def truncated_lookups(self) -> int:
        """Lookups whose candidates were cut at :attr:`max_candidates`."""
        return self.planner.per_document.truncated_lookups

    @property
    def crowded_batches(self) -> int:
        """Documents whose own lookup search was full, so they were read to the end one page at a time."""
        return self.planner.batched.crowded_batches

    @property
    def split_batches(self) -> int:
        """Batched searches that came back full and were split in two."""
        return self.planner.batched.split_batches

    @property
    def searches(self) -> int:
        """Searches sent by lookups (each search of an ``_msearch`` counts)."""
        return self.handle.searches

    @property
    def hits_read(self) -> int:
        """Hits those searches brought to the client (before the exact re-rank)."""
        return self.handle.hits_read

    # -- the index itself -------------------------------------------------------------------------------------
    def prepare(self, fingerprint_config: Mapping[str, Any], lookup_keys: LookupKeys = DEFAULT_KEYS, *,
                on_ready: Callable[[LookupKeys], None] | None = None) -> Callable[[], None] | None:
        """Make the index ready for a run that writes fingerprints made with ``fingerprint_config``
        (:attr:`Fingerprinter.config <es_simhash.fingerprint.Fingerprinter.config>`), as ``es-simhash index`` and
        ``migrate`` do: an existing index is checked now (:func:`ensure_index`: an
        :class:`~es_simhash.errors.ElasticError` naming each fingerprint setting that differs, before any input is
        read) and ``None`` is returned; a new one is created with ``lookup_keys`` by the function returned, for the
        run to call before its first record (:func:`~es_simhash.pipeline.run_dedup`'s ``start``: a run whose every
        record is a dead letter creates no index). ``on_ready(keys)`` is called once the index is ready, with the
        lookup keys it is looked up with (an existing index keeps the keys it was made with): the commands warn
        there when ``-k`` is beyond what those keys guarantee. With :attr:`rolls_over` the index is an alias
        over partitions (:func:`ensure_partitioned`: a new one gets its first partition; an existing index of
        that name is an :class:`~es_simhash.errors.ElasticError`). An existing alias over partitions, with
        :attr:`rolls_over` or not, gets its partition template again, made from its write index
        (:func:`~es_simhash.index.elastic.admin.install_partition_template`): every partition a rollover makes,
        es-simhash's or the cluster's, has its mapping."""
        def create() -> None:
            with elastic_errors(self.url):
                if self.rolls_over:
                    ensure_partitioned(self.client, self.index, dict(fingerprint_config), lookup_keys=lookup_keys)
                else:
                    ensure_index(self.client, self.index, dict(fingerprint_config), lookup_keys=lookup_keys)
            if on_ready is not None:
                on_ready(self.lookup_keys)

        if not index_exists(self.client, self.index, self.url):
            return create
        create()
        return None

    @property
    def rolls_over(self) -> bool:
        """Whether es-simhash rolls the alias over (:attr:`rollover_docs` or :attr:`rollover_age` given)."""
        return self.rollover_docs is not None or self.rollover_age is not None

    def _roll_over_if_full(self, docs: Sequence[StoredDoc]) -> None:
        """With :attr:`rollover_docs` or :attr:`rollover_age`, roll the alias over when its write index holds that
        many documents or is that old (:func:`roll_over`, one rollover request with those conditions). Called before
        a batch's new documents are written (:meth:`add`, :meth:`add_conditional`): the batch before is written,
        refreshed and settled, and this batch's documents go into one partition. Nothing without either, or without
        ``docs`` to write."""
        if not self.rolls_over or not docs:
            return
        with elastic_errors(self.url):
            self.handle.retrying(lambda: roll_over(self.client, self.index, self.rollover_docs, self.rollover_age),
                                 "rollover")

    # -- lookups ----------------------------------------------------------------------------------------------
    def require_settings(self, config: Mapping[str, Any]) -> None:
        """Fingerprints made with ``config`` (:attr:`Fingerprinter.config
        <es_simhash.fingerprint.Fingerprinter.config>`) are about to be looked up or added (the engine calls this
        before each batch and each check): an :class:`~es_simhash.errors.ElasticError` naming each setting that
        differs when the index records others (:func:`check_index_config`; read once per settings), nothing when
        the index does not exist yet (:func:`ensure_index` records them when it creates it)."""
        if self._settings_checked == config:
            return
        with elastic_errors(self.url):
            if not self.client.indices.exists(index=self.index):
                return
            check_index_config(self.client, self.index, dict(config))
        self._settings_checked = dict(config)

    def lookup(self, queries: Sequence[Lookup], contract: CandidateContract | int, exclude: Sequence[str] = ()
               ) -> list[LookupResult]:
        """Candidates for a batch of queries under ``contract``, in query order, as the embedded index answers (an
        int: the default contract with that ``max_distance``; :class:`~es_simhash.errors.UnservableContract` for
        one no index serves).

        With permutation-table keys: **one search for the whole batch** (short texts: after a search counting
        their sketch hashes' holders, on the same point in time), a ``bool``/``should`` over the batch's ids,
        content hashes, lookup keys and (non-boilerplate) sentence hashes, fetching doc values only; hits are
        mapped back to their queries here (a key both share, exact Hamming distance with numpy; same content; the
        shared long sentences, or sketch hashes, that the contract asks for, not boilerplate: a short text's
        sketch asks with ``minimum_should_match``). When that search is full
        (documents sharing keys or sentences with many stored ones), the batch is split in halves until each
        part's search fits; a single document whose own search is still full is read to the end with
        ``search_after``. An index with segments is looked up one search per document.

        ``exclude``: ids whose stored versions are left out of the answers (the engine passes the batch it is
        still writing, whose documents it holds in memory: so the answer does not depend on whether that write
        is visible yet)."""
        return self.planner.lookup(queries, served(contract, f"index {self.index!r}"), exclude)

    def __len__(self) -> int:
        return self.handle.count()

    # -- writes -----------------------------------------------------------------------------------------------
    def add(self, docs: Sequence[StoredDoc]) -> dict[str, str]:
        """Bulk-index ``docs`` and refresh (:meth:`BulkWriter.add`): the ids refused for good, with their reason.
        With :attr:`rollover_docs`, a full write index is rolled over first."""
        self._roll_over_if_full(docs)
        return self.writer.add(docs)

    def add_conditional(self, docs: Sequence[StoredDoc]) -> tuple[dict[str, str], list[str]]:
        """Bulk-index each document only over its stored version (:meth:`BulkWriter.add_conditional`):
        ``(refused, conflicts)``. With :attr:`rollover_docs`, a full write index is rolled over first."""
        self._roll_over_if_full(docs)
        return self.writer.add_conditional(docs)

    def replace(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Write each document whole over its stored version (:meth:`BulkWriter.replace`): the ids that changed."""
        return self.writer.replace(docs)

    def remove(self, docs: Sequence[StoredDoc]) -> list[str]:
        """Delete each document if it is still ``doc.version`` (:meth:`BulkWriter.remove`): the ids that changed.
        The known boilerplate is forgotten (document frequencies went down: lookups learn them again)."""
        conflicts = self.writer.remove(docs)
        self.boilerplate.clear()
        return conflicts

    # -- what maintenance reads -------------------------------------------------------------------------------
    def fetch(self, ids: Collection[str], whole: bool = True) -> dict[str, StoredDoc]:
        """The stored documents with these ids, with their versions (:meth:`MaintenanceReader.fetch`)."""
        return self.reader.fetch(ids, whole)

    def pointing_at(self, ids: Collection[str]) -> list[StoredDoc]:
        """The stored documents whose ``dup_cluster`` or ``dup_of`` is one of ``ids`` (without text or record)."""
        return self.reader.pointing_at(ids)

    def visible_mark(self) -> int | dict[str, int]:
        """A checkpoint up to which every write is visible, one per partition through an alias
        (:meth:`IndexHandle.visible_mark`)."""
        return self.handle.visible_mark()

    def written_since(self, mark: int | dict[str, int]) -> list[StoredDoc]:
        """The documents whose ``_seq_no`` is above ``mark`` (written or rewritten since it; without text; per
        partition through an alias, :meth:`MaintenanceReader.written_since`)."""
        return self.reader.written_since(mark)

    def first_holders(self, hashes: Collection[int], limit: int) -> dict[int, list[StoredDoc]]:
        """For each hash, the first ``limit`` documents holding it in arrival order
        (:meth:`MaintenanceReader.first_holders`)."""
        return self.reader.first_holders(hashes, limit)

    def records(self, page: int = 500) -> Iterator[tuple[str, str | None, dict[str, Any]]]:
        """``(id, text, record)`` of every stored document, the earliest first (:meth:`MaintenanceReader.records`)."""
        return self.reader.records(page)

    def partitions(self) -> list[str]:
        """The partitions behind the alias, read now (``[index]`` for an index)."""
        with elastic_errors(self.handle.url):
            return self.handle.partitions()

    def vanished_partitions(self) -> list[str]:
        """The partitions last recorded (:meth:`record_partitions`) that are gone: neither behind the alias nor
        taken out by :meth:`detach_partition` and not yet deleted (deleted by someone else: a lifecycle policy's
        delete phase, a user's ``DELETE``); ``[]`` for an index, or when nothing was recorded yet."""
        if not self.handle.is_alias():
            return []
        alias, client = self.handle.index, self.handle.client
        with elastic_errors(self.handle.url):
            known = recorded_partitions(client, alias)
            if not known:
                return []
            now = set(self.handle.partitions())
            return [p for p in known if p not in now and not client.indices.exists(index=p)]

    def record_partitions(self) -> None:
        """Record the partitions behind the alias now (in its partition template:
        :func:`~es_simhash.index.elastic.admin.record_partitions`), for :meth:`vanished_partitions` to compare
        with later; nothing for an index, or for an alias over indexes not named as its partitions (``migrate``'s)."""
        if self.handle.is_alias():
            with elastic_errors(self.handle.url):
                parts = self.handle.partitions()
                if all(is_partition_of(self.handle.index, p) for p in parts):  # (not an alias `migrate` switched)
                    record_partitions(self.handle.client, self.handle.index, parts)

    def dangling_targets(self) -> set[str]:
        """The ids a stored document's cluster fields name and no stored document holds
        (:meth:`MaintenanceReader.dangling_targets`)."""
        with elastic_errors(self.handle.url):
            return self.reader.dangling_targets()

    def detach_partition(self, partition: str) -> list[StoredDoc]:
        """Take ``partition`` (``ALIAS-NNNNNN``) out of the alias and return its documents as stored (without text
        or record; held in memory: about 2.5 KB each). A partition of the alias taken out before and not yet deleted
        gives its documents again; the partition written into is refused, as is a name that is no partition of the
        alias (:class:`~es_simhash.errors.ElasticError`, one line)."""
        alias, client = self.handle.index, self.handle.client
        with elastic_errors(self.handle.url):
            self._require_partition(partition)
            detach(client, alias, partition)
            return self._documents_of(partition)

    def partition_documents(self, partition: str) -> list[StoredDoc]:
        """The documents of ``partition`` as stored (without text or record), whether it is behind the alias or
        was taken out and not yet deleted; a name that is no partition of the alias is refused
        (:class:`~es_simhash.errors.ElasticError`, one line)."""
        with elastic_errors(self.handle.url):
            self._require_partition(partition)
            return self._documents_of(partition)

    def _documents_of(self, partition: str) -> list[StoredDoc]:
        """:meth:`partition_documents` of a name known to be a partition."""
        part = ElasticIndex(self.handle.client, partition, url=self.handle.url, retry_for=self.handle.retry_for)
        return [d for page in part.scan() for d in page]

    def _require_partition(self, partition: str) -> None:
        """Refuse a name that is no partition of the alias (behind it, or taken out and not yet deleted)."""
        alias, client = self.handle.index, self.handle.client
        if not self.handle.is_alias():
            raise ElasticError(f"{alias!r} is an index, not an alias over partitions: it has no partition to drop")
        behind = self.handle.partitions()
        if partition not in behind and not (is_partition_of(alias, partition) and client.indices.exists(index=partition)):
            raise ElasticError(f"{partition!r} is no partition of {alias!r} (its partitions: {', '.join(behind)})")

    def delete_partition(self, partition: str) -> None:
        """Delete ``partition``, once :meth:`detach_partition` took it out of the alias (refused while it is behind
        it)."""
        alias, client = self.handle.index, self.handle.client
        with elastic_errors(self.handle.url):
            if partition in self.handle.partitions():
                raise ElasticError(f"{partition!r} is still behind {alias!r}: take it out first (detach_partition)")
            client.options(ignore_status=404).indices.delete(index=partition)

    def scan(self, page: int = 1000, after: str | None = None, since: int | None = None
             ) -> Iterator[list[StoredDoc]]:
        """All stored documents (without text or record), with versions, in ``doc_id`` order
        (:meth:`MaintenanceReader.scan`)."""
        return self.reader.scan(page, after, since)
