"""The one parser of the URLs a user gives (:mod:`es_simhash.urls`): a password may hold any character, written as
it is or percent-encoded; nothing but a one-line ``BadURL`` comes out of it, and that never holds the password. The
real commands are checked against a secured node in test_security.py."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from es_simhash import urls


@pytest.mark.parametrize("url, user, password, base", [
    ("http://elastic:SecretPrefix99/tail@127.0.0.1:9200", "elastic", "SecretPrefix99/tail", "http://127.0.0.1:9200"),
    ("https://e:a#b?c/d@[::1]:9243/prefix/?x=1#f", "e", "a#b?c/d", "https://[::1]:9243/prefix"),
    ("http://u:p@ss:w@host:1", "u", "p@ss:w", "http://host:1"),
    ("http://u:%2F%3F%23%40%3A%25%5B%5D%20%E5%AF%86@h:9200", "u", "/?#@:%[] 密", "http://h:9200"),
    ("http://u:100%zz@h:9200", "u", "100%zz", "http://h:9200"),  # (a '%' that starts no escape is itself)
    ("http://u:has space@h:9200", "u", "has space", "http://h:9200"),
    ("https://user@es.example", "user", None, "https://es.example:443"),
    ("http://es.example", None, None, "http://es.example:80"),
    ("HTTP://Es.Example:9200/", None, None, "http://Es.Example:9200"),
    ("https://u:pw9@例え.jp:9200", "u", "pw9", "https://例え.jp:9200"),
])
def test_user_password_and_base(url, user, password, base):
    parsed = urls.parse(url)
    assert (parsed.username, parsed.password, parsed.base) == (user, password, base)
    assert "@" not in str(parsed) and (password is None or password not in repr(parsed))


@pytest.mark.parametrize("url, reason", [
    ("127.0.0.1:9200", "it needs the scheme"),
    ("elastic:pw-secret@127.0.0.1:9200", "it needs the scheme"),
    ("ftp://h:1", "the scheme 'ftp' is not http or https"),
    ("http://h:99999", "the port 99999 is not between 1 and 65535"),
    ("http://h:0", "the port 0 is not between 1 and 65535"),
    ("http://u:pw-secret@h:9x200", "the port is not a number"),
    ("http://h:", "':' with no port after it"),
    ("http://ho st:9200", "the host 'ho st' holds a space"),
    ("http://u:pw-secret@[::1:9200", "an IPv6 address needs its closing ']'"),
    ("http://u:pw-secret@", "it names no host"),
    ("http://u:pw-secret@/path", "it names no host"),
])
def test_what_names_no_host_is_one_reason_without_the_password(url, reason):
    with pytest.raises(urls.BadURL) as caught:
        urls.parse(url)
    assert reason in str(caught.value) and "pw-secret" not in str(caught.value) and "\n" not in str(caught.value)


@settings(max_examples=400, deadline=None)
@given(password=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=24),
       host=st.sampled_from(["127.0.0.1:9200", "[::1]:9200", "es.example", "es.example:9243/prefix"]))
def test_any_percent_encoded_password_comes_back_as_it_was(password, host):
    from urllib.parse import quote

    parsed = urls.parse(f"https://user:{quote(password, safe='')}@{host}")
    assert parsed.username == "user" and parsed.password == password and parsed.has_credentials


@settings(max_examples=400, deadline=None)
@given(password=st.text(string.printable + "密碼ü", min_size=1, max_size=24))
def test_any_url_either_parses_or_is_one_bad_url_without_the_password(password):
    for url in (f"https://user:{password}@127.0.0.1:9200", f"user:{password}@h", f"http://u:{password}@[::1:9",
                f"http://{password}"):
        try:
            urls.parse(url)
        except urls.BadURL as exc:
            assert "\n" not in str(exc)
            if "@" in url and len(password) >= 4:
                assert password not in str(exc)


@pytest.mark.parametrize("given, says", [
    ({"args": ["--es-url", "http://elastic:pw-secret#x@127.0 .0.1:9200"]}, "holds a space"),
    ({"env": {"ES_URL": "http://elastic:pw-secret/x@127.0.0.1:9x00"}}, "the port is not a number"),
    ({"config": 'url = 5'}, "url is 5, not a string"),
    ({"config": 'url = "https://u:pw-secret@h:9200"\npassword = 12345678'}, "password is of type int, not a string"),
    ({"config": 'request_timeout = "soon"'}, "not a number of seconds above 0"),
    ({"config": 'url = "elastic:pw-secret@h:9200"'}, "url in the config file"),
])
def test_a_setting_that_cannot_be_used_is_one_line_exit_1_naming_where_it_is_set(cli, tmp_path, given, says):
    env = {"ES_URL": None, "ES_SIMHASH_CONFIG": None, **given.get("env", {})}
    if "config" in given:
        config = tmp_path / "config.toml"
        config.write_text("[elasticsearch]\n" + given["config"] + "\n")
        config.chmod(0o600)
        env["ES_SIMHASH_CONFIG"] = str(config)
    res = cli("clusters", "--index", "x", *given.get("args", []), env=env, cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 1 and err.count("\n") == 1 and err.startswith("es-simhash: error: "), err
    assert says in err and "pw-secret" not in err and "unexpected" not in err, err
