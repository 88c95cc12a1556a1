"""Source -> fingerprint -> engine -> index: the run both ``dedup`` and ``index`` make (``run``: what it reads,
``source``; what it counts and reports, ``summary``; its checkpoint, ``checkpoint``; the outputs corrected after the
recheck, ``corrections``), and ``migrate``, an ingest job whose source is another index."""

from es_simhash.errors import CheckpointInUse, NoCheckpoint
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.run import iter_texts, run_dedup
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary

__all__ = ["Summary", "Checkpoint", "CheckpointInUse", "NoCheckpoint", "RecordSource", "run_dedup", "iter_texts"]
