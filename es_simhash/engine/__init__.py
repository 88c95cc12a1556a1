"""The dedup engine: fingerprints, lookups, decisions and writes of batches of documents, on any backend."""
