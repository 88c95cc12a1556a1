"""Importing the saved objects into Kibana and exporting them to a file (``es-simhash kibana import`` /
``export``): the Kibana URL checked, credentials from the settings, one-line errors."""

from __future__ import annotations

import base64
import json
import os
import ssl
import uuid
from typing import Any
from urllib import error as urlerror
from urllib import request as urlrequest
from urllib.parse import quote

from es_simhash import settings, urls
from es_simhash.errors import InvalidKibanaCA, InvalidKibanaURL, KibanaError
from es_simhash.redact import mask_url
from es_simhash.results.kibana.objects import NDJSON_NAME, load_saved_objects, ndjson


# -- import ------------------------------------------------------------------------------------------------
def import_saved_objects(kibana_url: str | None = None, *, index_pattern: str | None = None,
                         space: str | None = None, api_key: str | None = None, username: str | None = None,
                         password: str | None = None, ca_certs: str | None = None,
                         timeout: float = 60.0, config: str | os.PathLike[str] | None = None) -> str:
    """Import the saved objects (``overwrite=true``) and return a one-line summary.

    Credentials and CA default to those of the Elasticsearch connection (Kibana accepts Elasticsearch
    credentials): :meth:`~es_simhash.index.elastic.ConnectionSettings.from_env`'s config file (``config``) and
    environment (``ES_API_KEY``, or ``ES_USERNAME``/``ES_PASSWORD``; ``ES_CA_CERTS``); the URL to ``KIBANA_URL``
    or ``http://localhost:5601``. Raises :class:`InvalidKibanaURL` or :class:`KibanaError` with a one-line reason.
    """
    from es_simhash.index.elastic import ConnectionSettings

    conn = ConnectionSettings.values(config, api_key=api_key, username=username, password=password,
                                     ca_certs=ca_certs)  # ValueError: an unreadable config file
    url = settings.kibana_url(kibana_url)
    parsed = _check_kibana_url(url)
    safe, base = parsed.shown, parsed.base
    ca = conn.get("ca_certs") or None
    if ca and parsed.scheme == "https":
        from es_simhash.index.elastic.connection import check_ca_certs

        try:
            check_ca_certs(ca)
        except ValueError as exc:
            raise InvalidKibanaCA(str(exc)) from None
    username, password = conn.get("username") or None, conn.get("password")
    api_key = conn.get("api_key")
    check = "check ES_API_KEY, or ES_USERNAME and ES_PASSWORD"
    if parsed.has_credentials:  # user:password@host in the Kibana URL: Kibana's own, they win
        username, password, api_key = parsed.username, parsed.password or "", None
        check = "check the user and password written in the Kibana URL (KIBANA_URL)"
    prefix = f"/s/{quote(space, safe='')}" if space else ""
    endpoint = f"{base}{prefix}/api/saved_objects/_import?overwrite=true"

    objects = load_saved_objects(index_pattern)
    boundary = "es-simhash-" + uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{NDJSON_NAME}\"\r\n"
            f"Content-Type: application/ndjson\r\n\r\n").encode() + ndjson(objects).encode("utf-8") + \
        f"\r\n--{boundary}--\r\n".encode()
    headers = {"kbn-xsrf": "es-simhash", "Content-Type": f"multipart/form-data; boundary={boundary}",
               "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"ApiKey {api_key}"
    elif username:
        token = base64.b64encode(f"{username}:{password or ''}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    status, raw, ctype = _post(endpoint, body, headers, safe, parsed.scheme == "https", ca, timeout)
    answer = _answer(status, raw, ctype, safe, len(objects), check)
    where = f" (space {space})" if space else ""
    dashboard = next(o for o in objects if o["type"] == "dashboard")
    return (f"imported {answer.get('successCount', len(objects))} saved objects into Kibana at {safe}{where}: "
            f"data view {objects[0]['attributes']['title']!r}, dashboard {dashboard['attributes']['title']!r} "
            f"({safe}{prefix}/app/dashboards#/view/{dashboard['id']})")


def _check_kibana_url(url: str) -> urls.ServiceURL:
    """``url`` parsed (:func:`es_simhash.urls.parse`: a password may hold any character); :class:`InvalidKibanaURL`
    unless it names an ``http(s)://host[:port]`` (the message holds no byte of the password)."""
    try:
        return urls.parse(url)
    except urls.BadURL as exc:
        shown = mask_url(url)
        hint = "" if urls.SCHEME.match(url.strip()) else f", e.g. http://{shown.strip().lstrip('/')}"
        raise InvalidKibanaURL(f"invalid Kibana URL {shown!r}: {exc}{hint}; set it with KIBANA_URL") from None


def _post(endpoint: str, body: bytes, headers: dict[str, str], safe: str, https: bool, ca_certs: str | None,
          timeout: float) -> tuple[int, bytes, str]:
    """POST the import: ``(status, body, content type)`` of any HTTP answer; :class:`KibanaError` without one, or
    when the server is Elasticsearch (asked first with a small ``GET /api/status``: Elasticsearch may close the
    connection on a large upload before it answers)."""
    ctx = None
    if https:
        try:
            ctx = ssl.create_default_context(cafile=ca_certs) if ca_certs else ssl.create_default_context()
        except (OSError, ssl.SSLError) as exc:
            raise KibanaError(f"cannot read CA certificate {ca_certs}: {exc}") from None
    status_url = endpoint.split("/api/saved_objects/", 1)[0] + "/api/status"
    _request(urlrequest.Request(status_url, headers={k: v for k, v in headers.items() if k != "Content-Type"}),
             safe, ctx, timeout)
    return _request(urlrequest.Request(endpoint, data=body, headers=headers, method="POST"), safe, ctx, timeout)


def _request(req: urlrequest.Request, safe: str, ctx: ssl.SSLContext | None, timeout: float
             ) -> tuple[int, bytes, str]:
    """``(status, body, content type)`` of any HTTP answer from Kibana; :class:`KibanaError` without one, or from
    Elasticsearch or OpenSearch."""
    try:
        with urlrequest.urlopen(req, timeout=timeout, context=ctx) as resp:
            if resp.headers.get("X-Elastic-Product") == "Elasticsearch":
                raise _not_kibana(safe)
            return resp.status, resp.read(), resp.headers.get("Content-Type", "")
    except urlerror.HTTPError as exc:
        if exc.headers.get("X-Elastic-Product") == "Elasticsearch":
            raise _not_kibana(safe) from None
        body = exc.read()
        if exc.code == 400 and body.startswith(b'{"error":"no handler found for uri'):  # (a search node's answer)
            raise _not_kibana(safe, "OpenSearch") from None
        return exc.code, body, exc.headers.get("Content-Type", "")
    except urlerror.URLError as exc:
        if isinstance(exc.reason, ssl.SSLCertVerificationError):
            raise KibanaError(f"TLS verification failed for {safe}: pass Kibana's CA certificate (ca_certs, "
                              "ES_CA_CERTS)") from None
        if isinstance(exc.reason, ssl.SSLError):
            raise KibanaError(f"the TLS connection to {safe} broke before an answer ({exc.reason}): check the "
                              "Kibana URL (KIBANA_URL)") from None
        raise KibanaError(f"cannot reach Kibana at {safe}: is it running? Check the Kibana URL (KIBANA_URL) "
                          f"({exc.reason})") from None
    except (TimeoutError, OSError) as exc:
        raise KibanaError(f"Kibana at {safe} did not answer: {exc}") from None


def _not_kibana(safe: str, engine: str = "Elasticsearch") -> KibanaError:
    """The URL given for Kibana is a search node's (Elasticsearch's, which says so in a header; or OpenSearch's,
    whose answer to an unknown path is its own)."""
    return KibanaError(f"{safe} is {engine}, not Kibana: give Kibana's URL (its port is 5601 by default)")


def _answer(status: int, raw: bytes, ctype: str, safe: str, n_objects: int, check: str) -> dict[str, Any]:
    """The JSON answer of a successful import; :class:`KibanaError` with Kibana's reason otherwise."""
    try:
        answer = json.loads(raw or b"null")
    except ValueError:
        answer = None
    if answer is None and status not in (401, 403):
        raise KibanaError(f"the server at {safe} is not Kibana (HTTP {status}"
                          f"{', ' + ctype.split(';')[0] if ctype else ''}, not a JSON answer): check the Kibana URL")
    if status == 401:
        raise KibanaError(f"Kibana at {safe} rejected the credentials (401): {check}")
    if status == 403:
        raise KibanaError(f"Kibana at {safe} refused the import (403): the user lacks saved-object privileges")
    if status != 200 or not isinstance(answer, dict):
        msg = ((answer.get("message") or answer.get("error") or json.dumps(answer)[:200]) if isinstance(answer, dict)
               else raw[:200].decode("utf-8", "replace"))
        raise KibanaError(f"Kibana at {safe} refused the import ({status}): {' '.join(str(msg).split())[:300]}")
    if not answer.get("success"):
        errs = answer.get("errors") or []
        first = "; ".join(f"{e.get('type')} {e.get('id')}: {(e.get('error') or {}).get('type')}" for e in errs[:3])
        raise KibanaError(f"Kibana imported {answer.get('successCount', 0)} of {n_objects} objects; "
                          f"{len(errs)} failed: {first}")
    return answer


def export_saved_objects(path: str | os.PathLike[str], index_pattern: str | None = None) -> int:
    """Write the saved objects (data view, saved searches, dashboard) as an ndjson file for Kibana's *Stack
    Management > Saved objects > Import*, with the data view covering ``index_pattern`` (default ``es-simhash*``);
    ``-`` writes to standard output. Returns how many objects were written. The file is written beside its path and
    put in place at the end (:func:`~es_simhash.files.outputs.atomic_write`)."""
    from es_simhash.files.outputs import atomic_write

    objects = load_saved_objects(index_pattern)
    with atomic_write(path) as fh:
        fh.write(ndjson(objects))
    return len(objects)


