"""Source -> fingerprint -> engine -> index: the run both ``dedup`` and ``index`` make (``run``: what it reads,
``source``; what it counts and reports, ``summary``; its checkpoint, ``checkpoint``; the outputs corrected after the
recheck, ``corrections``), and ``migrate``, an ingest job whose source is another index. What the commands call:
``embedded`` (a run over the in-memory index whose outputs are written when it ends well) and
``checkpointed`` (a run under a checkpoint, resumable, with its named ways to stop)."""

from es_simhash.errors import CheckpointInUse, NoCheckpoint
from es_simhash.pipeline.checkpoint import Checkpoint
from es_simhash.pipeline.checkpointed import (NothingDecided, RunGaveUp, RunInterrupted, open_checkpoint,
                                              run_checkpointed)
from es_simhash.pipeline.embedded import dedup_documents, dedup_files
from es_simhash.pipeline.precedence import repair_index
from es_simhash.pipeline.run import fit_idf, iter_texts, run_dedup
from es_simhash.pipeline.source import RecordSource
from es_simhash.pipeline.summary import Summary

__all__ = ["Summary", "Checkpoint", "CheckpointInUse", "NoCheckpoint", "RecordSource", "run_dedup", "iter_texts", "fit_idf",
           "open_checkpoint", "run_checkpointed", "NothingDecided", "RunInterrupted", "RunGaveUp",
           "dedup_files", "dedup_documents", "repair_index"]
