"""Storage behind one interface (``base``: :class:`~es_simhash.index.base.FingerprintIndex` and
:class:`~es_simhash.index.base.MaintainedIndex`): the embedded index (``memory``) and Elasticsearch (``elastic``).
The engine and maintenance only ever see the interface."""
