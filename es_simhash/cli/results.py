"""The commands that read an index and show it: ``search``, ``clusters``, ``report`` and ``kibana import`` /
``export``."""


import json
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from es_simhash.defaults import MAX_DISTANCE
from es_simhash.errors import InvalidKibanaCA, InvalidKibanaURL, KibanaError, ReportError

from es_simhash.cli.common import AsJson, IdField, Limit, UserError, refuse_unsafe_outputs, print_table, err
from es_simhash.cli.connection import (DEFAULT_INDEX, Connection, Elastic, IndexName, connection_options,
                                       require_managed_index)

Query = Annotated[str, typer.Argument(help="Words to search for in title and content.", show_default=False)]
ShowAll = Annotated[bool, typer.Option("--all", help="Show duplicates too (no collapsing).")]
ReportOutput = Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML page.")]
FromDedup = Annotated[Optional[Path], typer.Option(
    "--from-dedup", help="Report on a `dedup --report` file instead of an index (no server).", show_default=False)]
CrawlInputs = Annotated[Optional[List[str]], typer.Option(
    "--input", help="With --from-dedup: the crawl input it read, for titles, urls and crawl times.",
    show_default=False)]
ReportLimit = Annotated[int, typer.Option("--limit", "-n", min=0, max=1000,
                                          help="At most this many of the largest clusters listed.")]
RuleK = Annotated[int, typer.Option(
    "-k", "--max-distance", min=0, max=16,
    help="The -k the documents were decided with (the page states the rule's limits).")]
KibanaUrl = Annotated[Optional[str], typer.Option(
    "--kibana-url", envvar="KIBANA_URL", show_envvar=True, help="Kibana URL (default: http://localhost:5601).",
    show_default=False)]
Space = Annotated[Optional[str], typer.Option("--space", help="Kibana space id (default: the default space).",
                                              show_default=False)]
KibanaOutput = Annotated[Path, typer.Option("--output", "-o", help="Where to write the ndjson file (- for stdout).")]


@connection_options
def search_cmd(
    query: Query,
    index: IndexName = DEFAULT_INDEX,
    limit: Limit = 10,
    show_all: ShowAll = False,
    as_json: AsJson = False,
    *, connection: Connection,
) -> None:
    """Full-text search with one hit per duplicate cluster (and each cluster's size)."""
    from es_simhash.results.search import query_chars, search as search_index

    if not query.strip():
        raise UserError("no query: give the words to search for in titles and contents", code=2)
    with Elastic(connection, index) as es:
        require_managed_index(es, index)
        longest = query_chars(es.client, es.settings.safe_url)
        if len(query) > longest:
            err(f"note: the query is {len(query):,} characters long; searching with its first {longest:,}")
        hits = search_index(es.client, index, query, size=limit, collapse=not show_all,
                            url=es.settings.safe_url, max_chars=longest)
    if as_json:
        for h in hits:
            typer.echo(json.dumps(h.to_dict(), ensure_ascii=False))
        return
    print_table(("score", "id", "title", "cluster size", "duplicate of"),
                ((f"{h.score or 0:.2f}", h.id, (h.title or "")[:60], str(h.cluster_size), h.duplicate_of or "")
                 for h in hits))

@connection_options
def clusters(
    index: IndexName = DEFAULT_INDEX,
    limit: Limit = 10,
    as_json: AsJson = False,
    *, connection: Connection,
) -> None:
    """The largest duplicate clusters, with their canonical document's title and url."""
    from es_simhash.results.search import top_clusters

    with Elastic(connection, index) as es:
        require_managed_index(es, index)
        rows = top_clusters(es.client, index, top=limit, url=es.settings.safe_url)
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.to_dict(), ensure_ascii=False))
        return
    print_table(("size", "cluster", "title", "url"),
                ((str(r.size), r.cluster, (r.title or "")[:60], r.url or "") for r in rows))

@connection_options
def report_cmd(
    output: ReportOutput = Path("report.html"),
    index: IndexName = DEFAULT_INDEX,
    from_dedup: FromDedup = None,
    inputs: CrawlInputs = None,
    id_field: IdField = None,
    limit: ReportLimit = 20,
    k: RuleK = MAX_DISTANCE,
    *, connection: Connection,
) -> None:
    """Write a self-contained HTML report: cluster sizes, top clusters, duplicate rate over time, distances."""
    from es_simhash.decide.default import DefaultRule

    from es_simhash.results import report

    inputs = list(inputs or [])
    read = [*([str(from_dedup)] if from_dedup is not None else []), *inputs]
    refuse_unsafe_outputs(read, ("--output", output))
    try:
        if from_dedup is not None:
            data = report.from_dedup_report(str(from_dedup), inputs, top=limit, id_field=id_field)
        else:
            with Elastic(connection, index) as es:
                require_managed_index(es, index)
                data = report.from_index(es.client, index, top=limit, url=es.settings.safe_url)
        size = report.write_report(data, str(output), rule=DefaultRule(k=k))
    except ReportError as exc:
        raise UserError(str(exc)) from None
    warning = data.join_warning("that --input is the crawl input the dedup run read, with the same --id-field")
    if warning is not None:
        err(f"warning: {warning}")
    err(f"report written to {output} ({size / 1024:,.0f} KiB): {data.documents:,} documents, "
        f"{data.duplicates:,} duplicates in {data.clusters_with_duplicates:,} clusters")

KibanaPattern = Annotated[str, typer.Option("--index", "-i", envvar="ES_SIMHASH_INDEX", show_envvar=True,
                                            help="Index name or pattern the data view covers.")]


@connection_options(url=False)
def kibana_import(
    kibana_url: KibanaUrl = None,
    index: KibanaPattern = "es-simhash*",
    space: Space = None,
    *, connection: Connection,
) -> None:
    """Load the data view, saved searches and dashboard into Kibana (overwrites earlier imports)."""
    from es_simhash.results.kibana import import_saved_objects

    c = connection
    try:
        result = import_saved_objects(kibana_url, index_pattern=index, space=space, api_key=c.api_key,
                                      username=c.username, password=c.password, ca_certs=c.ca_certs)
    except InvalidKibanaURL as exc:
        raise UserError(f"{exc} or --kibana-url") from None
    except InvalidKibanaCA as exc:
        raise UserError(f"{exc} or --ca-certs") from None
    except ValueError as exc:  # an unreadable config file
        raise UserError(str(exc)) from None
    except KibanaError as exc:
        raise UserError(str(exc), code=3) from None
    err(result)

def kibana_export(
    index: KibanaPattern = "es-simhash*",
    output: KibanaOutput = Path("es-simhash-kibana.ndjson"),
) -> None:
    """Write the saved objects for any index pattern to a file, to import in Kibana by hand (Stack Management >
    Saved objects > Import) when no Kibana is at hand here."""
    from es_simhash.results.kibana import export_saved_objects

    refuse_unsafe_outputs([], ("--output", output))
    n = export_saved_objects(output, index)
    err(f"wrote {n} saved objects for {index!r} to {'stdout' if str(output) == '-' else output}")
