"""Moved to :mod:`es_simhash.cluster` (settle, delete, recheck, repair) and :mod:`es_simhash.pipeline.migrate`;
this import path is kept for one release (0.2)."""

from es_simhash.cluster import Change, MaintenanceError, RepairReport, Settled, delete, iter_ids, recheck, repair, settle
from es_simhash.pipeline.migrate import migrate, migration_input

__all__ = ["settle", "delete", "iter_ids", "repair", "recheck", "migrate", "migration_input", "Change", "Settled",
           "RepairReport", "MaintenanceError"]
