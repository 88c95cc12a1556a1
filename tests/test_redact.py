"""No credential leaves the process: :func:`es_simhash.redact.mask_url` masks the password of a URL of any shape,
:func:`~es_simhash.redact.redact` every URL password and remembered secret in a message (the real commands are
checked against a secured node in test_security.py)."""

from __future__ import annotations

import string

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from es_simhash.redact import mask_url, redact, remember, url_password

SHAPES = ["https://{u}:{p}@127.0.0.1:9200", "{u}:{p}@127.0.0.1:9200", "{u}:{p}@localhost", "//{u}:{p}@host",
          "http://{u}:{p}@[::1:9200", "https://{u}:{p}@127.0.0.1:99999", "ftp://{u}:{p}@h:1",
          "https://:{p}@host/prefix/", "https://{u}:{p}@", "http://{u}:{p}@es.example/a@b"]


@settings(max_examples=300, deadline=None)
@given(user=st.text(string.ascii_letters, min_size=1, max_size=8),
       password=st.text(string.ascii_letters + string.digits + "@:/#?%!$&'()*+,;=[]~-._", min_size=8, max_size=24),
       shape=st.sampled_from(SHAPES))
def test_the_password_of_a_url_of_any_shape_is_masked(user, password, shape):
    url = shape.format(u=user, p=password)
    assume(password not in shape.format(u=user, p=""))  # (a password that is also the user name, say)
    assert url_password(url) is not None and password in url_password(url)
    masked = mask_url(url)
    assert password not in masked and ":***@" in masked
    # in a message, whatever the quotes around it (the words of the message are left as they are)
    for message in (f"invalid URL {url!r}: port", f"cannot reach {url}; set ES_URL", f"e.g. http://{url}"):
        shown = redact(message)
        assert password not in shown and "invalid URL" in redact(f"invalid URL {url!r}")


def test_a_url_without_a_password_and_plain_words_are_left_as_they_are():
    for url in ("http://127.0.0.1:9200", "https://user@host:9200/x", "127.0.0.1:9200", "a@b.c"):
        assert mask_url(url) == url and redact(f"at {url}: no") == f"at {url}: no"
    for text in ("the 3 records at 12:30 @ home", "mail a@b.c at 9:00", "id 'x:1' (line 3)"):
        assert redact(text) == text


def test_remembered_secrets_are_masked_wherever_they_appear():
    remember("s3cr3t-K3y", "ab", None, "", "p%40ss-word")
    assert redact("key s3cr3t-K3y, again s3cr3t-K3y") == "key ***, again ***"
    assert "p@ss-word" not in redact("as typed: p@ss-word") and "ab" in redact("ab")  # (too short to search for)
    import base64

    key = base64.b64encode(b"key-id:the-key-secret").decode()
    remember(key)
    assert "the-key-secret" not in redact("decoded: key-id:the-key-secret") and key not in redact(f"ApiKey {key}")
