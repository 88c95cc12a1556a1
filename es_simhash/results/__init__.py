"""Reading an index back: search with one hit per cluster, the HTML report, Kibana's saved objects, and evaluation
on labelled data."""
