"""``python -m es_simhash.readside.kibana``: regenerate the shipped saved objects (``templates/kibana/``)."""

from es_simhash.readside.kibana.objects import write_ndjson

print(write_ndjson())
