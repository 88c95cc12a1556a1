"""``python -m es_simhash.results.kibana``: regenerate the shipped saved objects (``templates/kibana/``)."""

from es_simhash.results.kibana.objects import write_ndjson

print(write_ndjson())
