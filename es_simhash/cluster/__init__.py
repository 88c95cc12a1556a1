"""Keeping clusters true in a living index: settling concurrent writes, deletes, the recheck and repair."""
