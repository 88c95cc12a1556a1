"""Source -> fingerprint -> engine -> index: the run both ``dedup`` and ``index`` make (``run``), its checkpoint, and
``migrate``, an ingest job whose source is another index."""

from es_simhash.pipeline.run import Checkpoint, CheckpointInUse, NoCheckpoint, RecordSource, Summary, run_dedup

__all__ = ["Summary", "Checkpoint", "CheckpointInUse", "NoCheckpoint", "RecordSource", "run_dedup"]
