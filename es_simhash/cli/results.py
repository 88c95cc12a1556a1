"""The commands that read an index and show it: ``search``, ``clusters``, ``report`` and ``kibana import`` /
``export``."""


import json
from pathlib import Path
from typing import Annotated, List, Optional

import typer

from es_simhash.defaults import MAX_DISTANCE

from es_simhash.cli.common import AsJson, IdField, Limit, UserError, refuse_unsafe_outputs, print_table, err
from es_simhash.cli.connection import ApiKey, CaCerts, EsUrl, IndexName, Password, Username, Elastic, require_managed_index


def search_cmd(
    query: Annotated[str, typer.Argument(help="Words to search for in title and content.", show_default=False)],
    index: IndexName = "es-simhash",
    limit: Limit = 10,
    show_all: Annotated[bool, typer.Option("--all", help="Show duplicates too (no collapsing).")] = False,
    as_json: AsJson = False,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Full-text search with one hit per duplicate cluster (and each cluster's size)."""
    from es_simhash.results.search import MAX_QUERY_CHARS, search

    if len(query) > MAX_QUERY_CHARS:
        err(f"note: the query is {len(query):,} characters long; "
            f"searching with its first {MAX_QUERY_CHARS:,}")
    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        require_managed_index(es, index)
        hits = search(es.client, index, query, size=limit, collapse=not show_all, url=es.settings.safe_url)
    if as_json:
        for h in hits:
            typer.echo(json.dumps(h.to_dict(), ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("score", "id", "title", "cluster size", "duplicate of")
    for h in hits:
        table.add_row(f"{h.score or 0:.2f}", h.id, (h.title or "")[:60], str(h.cluster_size), h.duplicate_of or "")
    print_table(table)

def clusters(
    index: IndexName = "es-simhash",
    limit: Limit = 10,
    as_json: AsJson = False,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """The largest duplicate clusters, with their canonical document's title and url."""
    from es_simhash.results.search import top_clusters

    with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
        require_managed_index(es, index)
        rows = top_clusters(es.client, index, top=limit, url=es.settings.safe_url)
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.to_dict(), ensure_ascii=False))
        return
    from rich.table import Table

    table = Table("size", "cluster", "title", "url")
    for r in rows:
        table.add_row(str(r.size), r.cluster, (r.title or "")[:60], r.url or "")
    print_table(table)

def report_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML page.")] = Path("report.html"),
    index: IndexName = "es-simhash",
    from_dedup: Annotated[Optional[Path], typer.Option(
        "--from-dedup", help="Report on a `dedup --report` file instead of an index (no server).",
        show_default=False)] = None,
    inputs: Annotated[Optional[List[str]], typer.Option(
        "--input", help="With --from-dedup: the crawl input it read, for titles, urls and crawl times.",
        show_default=False)] = None,
    id_field: IdField = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=0, max=1000,
                                       help="At most this many of the largest clusters listed.")] = 20,
    k: Annotated[int, typer.Option(
        "-k", "--max-distance", min=0, max=16,
        help="The -k the documents were decided with (the page states the rule's limits).")] = MAX_DISTANCE,
    es_url: EsUrl = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
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
            with Elastic(es_url, api_key, username, password, ca_certs, index) as es:
                require_managed_index(es, index)
                data = report.from_index(es.client, index, top=limit, url=es.settings.safe_url)
        size = report.write_report(data, str(output), rule=DefaultRule(k=k))
    except report.ReportError as exc:
        raise UserError(str(exc)) from None
    err(f"report written to {output} ({size / 1024:,.0f} KiB): {data.documents:,} documents, "
        f"{data.duplicates:,} duplicates in {data.clusters_with_duplicates:,} clusters")

KibanaPattern = Annotated[str, typer.Option("--index", "-i", envvar="ES_SIMHASH_INDEX", show_envvar=True,
                                            help="Index name or pattern the data view covers.")]


def kibana_import(
    kibana_url: Annotated[Optional[str], typer.Option(
        "--kibana-url", envvar="KIBANA_URL", show_envvar=True, help="Kibana URL (default: http://localhost:5601).",
        show_default=False)] = None,
    index: KibanaPattern = "es-simhash*",
    space: Annotated[Optional[str], typer.Option("--space", help="Kibana space id (default: the default space).",
                                                 show_default=False)] = None,
    api_key: ApiKey = None,
    username: Username = None,
    password: Password = None,
    ca_certs: CaCerts = None,
) -> None:
    """Load the data view, saved searches and dashboard into Kibana (overwrites earlier imports)."""
    from es_simhash.results.kibana import InvalidKibanaURL, KibanaError, import_saved_objects

    try:
        result = import_saved_objects(kibana_url, index_pattern=index, space=space, api_key=api_key,
                                      username=username, password=password, ca_certs=ca_certs)
    except InvalidKibanaURL as exc:
        raise UserError(f"{exc} or --kibana-url") from None
    except ValueError as exc:  # an unreadable config file
        raise UserError(str(exc)) from None
    except KibanaError as exc:
        raise UserError(str(exc), code=3) from None
    err(result)

def kibana_export(
    index: KibanaPattern = "es-simhash*",
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the ndjson file (- for stdout).")
                      ] = Path("es-simhash-kibana.ndjson"),
) -> None:
    """Write the saved objects for any index pattern to a file, to import in Kibana by hand (Stack Management >
    Saved objects > Import) when no Kibana is at hand here."""
    from es_simhash.results.kibana import export_saved_objects

    refuse_unsafe_outputs([], ("--output", output))
    n = export_saved_objects(output, index)
    err(f"wrote {n} saved objects for {index!r} to {'stdout' if str(output) == '-' else output}")
