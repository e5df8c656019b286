"""The app's security rules (crowdsafe.app.security), each shown to fail on a broken variant.

Every rule is tested twice: on the app as served ("guarded"), where the attack is refused, and on
a variant with that one check switched off ("broken": ``Checks(...=False)``, or no upload cap),
where the same attack gets through. A test that passes on both would prove nothing; these fail
on the broken app, so they can fail.
"""

from __future__ import annotations

import pytest
from app_helpers import BASE, PORT, log_in, make_client
from starlette.testclient import TestClient

from crowdsafe.app.security import PAGE_POLICY, Checks

VARIANTS = pytest.mark.parametrize("broken", [False, True], ids=["guarded", "broken"])
FORM = {"csrf": "test-csrf", "action": "save"}


@VARIANTS
def test_a_request_without_token_or_cookie_is_forbidden(tmp_path, broken):
    client, _ = make_client(tmp_path, checks=Checks(auth=not broken))
    for path in ("/", "/open", "/plan", "/static/app.css", "/release/1/file/release"):
        answer = client.get(path)
        if broken:
            assert answer.status_code != 403, path  # the broken app lets a stranger in
        else:
            assert answer.status_code == 403, path


@VARIANTS
def test_a_foreign_host_is_refused(tmp_path, broken):
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own Host."""
    client, _ = make_client(tmp_path, checks=Checks(host=not broken))
    log_in(client)
    for host in ("evil.example", f"evil.example:{PORT}", "127.0.0.1:1", f"127.0.0.2:{PORT}"):
        answer = client.get("/open", headers={"host": host})
        if broken:
            assert answer.status_code == 200, host
        else:
            assert answer.status_code == 400, host
    for host in (f"127.0.0.1:{PORT}", f"localhost:{PORT}"):
        assert client.get("/open", headers={"host": host}).status_code == 200


@VARIANTS
@pytest.mark.parametrize("headers", [{"origin": "http://evil.example"}, {"origin": "null"},
                                     {"origin": f"http://localhost:{PORT + 1}"}, {"sec-fetch-site": "cross-site"},
                                     {"sec-fetch-site": "same-site"}], ids=["origin", "null", "port", "cross", "site"])
def test_a_cross_origin_post_is_forbidden(tmp_path, broken, headers):
    """Even with the right CSRF token, a POST from another origin is refused."""
    client, _ = make_client(tmp_path, checks=Checks(origin=not broken))
    log_in(client)
    answer = client.post("/schema", data=FORM, headers=headers)
    if broken:
        assert answer.status_code == 303  # reached the page: the write would have happened
    else:
        assert answer.status_code == 403
        assert "another site" in answer.text


def test_a_same_origin_post_passes(app_client):
    client, _ = app_client
    for headers in ({"origin": BASE, "sec-fetch-site": "same-origin"}, {"origin": f"http://localhost:{PORT}"}, {}):
        assert client.post("/schema", data=FORM, headers=headers).status_code == 303


@VARIANTS
@pytest.mark.parametrize("form", [{"action": "save"}, {"action": "save", "csrf": "wrong"}, {"csrf": ""}],
                         ids=["missing", "wrong", "empty"])
def test_a_post_without_the_csrf_token_is_forbidden(tmp_path, broken, form):
    client, _ = make_client(tmp_path, checks=Checks(csrf=not broken))
    log_in(client)
    answer = client.post("/schema", data=form)
    if broken:
        assert answer.status_code == 303
    else:
        assert answer.status_code == 403
        assert "CSRF" in answer.text


def test_the_csrf_token_may_come_as_a_header_or_in_the_query(app_client):
    client, _ = app_client
    assert client.post("/schema", data={"action": "save"}, headers={"x-csrf-token": "test-csrf"}).status_code == 303
    assert client.post("/schema?csrf=test-csrf", data={"action": "save"}).status_code == 303


def _table(size: int) -> bytes:
    line = b"age,sex,zip\n"
    rows = [b"%d,%s,%05d\n" % (20 + i % 50, b"FM"[i % 2:i % 2 + 1], 10000 + i % 90) for i in range(size // 12 + 1)]
    return line + b"".join(rows)


@VARIANTS
def test_an_oversized_upload_is_refused(tmp_path, broken):
    """Past --max-upload (1 MiB here) the upload is refused with 413 and nothing is kept; the
    broken variant (no effective cap) takes the same file."""
    client, workspace = make_client(tmp_path, max_upload=(1 << 40) if broken else (1 << 20))
    log_in(client)
    data = _table(3 << 20)
    answer = client.post("/open/upload?csrf=test-csrf", files={"file": ("big.csv", data, "text/csv")})
    if broken:
        assert answer.status_code == 303 and answer.headers["location"] == "/schema"
        assert workspace.opened is not None and workspace.opened.label == "big.csv"
    else:
        assert answer.status_code == 413
        assert "larger than the upload limit" in answer.text
        assert workspace.opened is None
        assert not any(p.is_file() for p in (workspace.workdir / "uploads").rglob("*"))


def test_an_upload_without_length_is_cut_at_the_cap(app_client):
    """A chunked body (no Content-Length) is counted as it streams and refused past the cap."""
    client, workspace = app_client
    boundary = "cut"

    def body():
        yield (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.csv\"\r\n"
               "Content-Type: text/csv\r\n\r\n").encode()
        for _ in range(40):
            yield _table(64 << 10)
        yield f"\r\n--{boundary}--\r\n".encode()

    answer = client.post("/open/upload?csrf=test-csrf", content=body(),
                         headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    assert answer.status_code == 413
    assert not any(p.is_file() for p in (workspace.workdir / "uploads").rglob("*"))


def test_the_token_is_spent_once_for_a_strict_httponly_cookie(tmp_path):
    client, _ = make_client(tmp_path)
    assert client.get("/open?token=wrong").status_code == 403
    answer = client.get("/plan?token=test-token&x=1")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/plan?x=1"  # the same URL without the token
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"crowdsafe_app_{PORT}=test-session;")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert client.get("/open").status_code == 200
    again = client.get("/plan?token=test-token")  # the link reopened in the browser that used it
    assert again.status_code == 303 and again.headers["location"] == "/plan" and "set-cookie" not in again.headers
    stranger = TestClient(client.app, base_url=BASE, follow_redirects=False)  # the link, used again
    assert stranger.get("/?token=test-token").status_code == 403
    assert stranger.get("/open").status_code == 403


def test_every_answer_carries_the_security_headers_and_no_cors(app_client):
    client, _ = app_client
    for path in ("/open", "/static/app.css", "/static/htmx.min.js", "/nowhere", "/release/3"):
        answer = client.get(path, headers={"origin": "http://evil.example"})
        assert answer.headers["content-security-policy"] == PAGE_POLICY, path
        assert "default-src 'self'" in PAGE_POLICY and "frame-ancestors 'self'" in PAGE_POLICY
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "SAMEORIGIN"
        assert answer.headers["cache-control"] == "no-store"
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")], path
    refused = client.get("/open", headers={"host": "evil.example"})
    assert refused.headers["x-content-type-options"] == "nosniff"


def test_an_error_names_its_kind_only(tmp_path, capsys, monkeypatch):
    """An unexpected error answers 500 and reports its type on stderr, never its message."""
    client, workspace = make_client(tmp_path)
    log_in(client)

    def broken(*args, **kwargs):
        raise RuntimeError("a secret value 1234-SECRET")

    monkeypatch.setattr(workspace, "open_bundled", broken)
    monkeypatch.delenv("CROWDSAFE_DEBUG", raising=False)
    answer = client.post("/open/bundled", data={"name": "people", "csrf": "test-csrf"})
    assert answer.status_code == 500
    assert "SECRET" not in answer.text
    err = capsys.readouterr().err
    assert "RuntimeError" in err and "SECRET" not in err


def test_an_upload_of_two_files_is_refused_in_a_sentence(app_client):
    """Found by a sweep: two file parts of one name were an internal error (500) as the second
    collided with the first in the upload folder; nothing of either is kept."""
    client, workspace = app_client
    table = _table(1 << 10)
    answer = client.post("/open/upload?csrf=test-csrf",
                         files=[("file", ("a.csv", table, "text/csv")), ("file", ("a.csv", table, "text/csv"))])
    assert answer.status_code == 400 and "upload one file at a time" in answer.text
    assert not any(p.is_file() for p in (workspace.workdir / "uploads").rglob("*"))


def _raw_upload(client, file_name: str, content: bytes):
    """An upload as a browser sends it: the file name in the part's header as raw UTF-8."""
    boundary = "b0undary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    return client.post("/open/upload?csrf=test-csrf", content=body,
                       headers={"content-type": f"multipart/form-data; boundary={boundary}"})


@pytest.mark.parametrize(("file_name", "label"), [("患者.csv", "患者.csv"), ("مرضى.csv", "مرضى.csv"),
                                                  ("données.csv", "données.csv"), ("😀.csv", "_.csv"),
                                                  ("e\u0301tat.csv", "état.csv")])
def test_a_file_name_in_any_script_is_uploaded(app_client, file_name, label):
    """Found by a sweep: a name outside Latin-1 was a 500 (the header was re-encoded as Latin-1),
    and letters of other scripts were replaced by '_' in the table's label."""
    client, workspace = app_client
    answer = _raw_upload(client, file_name, _table(1 << 10))
    assert answer.status_code == 303 and answer.headers["location"] == "/schema"
    assert workspace.opened is not None and workspace.opened.label == label


def test_a_file_name_of_thousands_of_characters_is_refused_in_a_sentence(app_client):
    client, workspace = app_client
    answer = _raw_upload(client, "a" * 5000 + ".csv", _table(1 << 10))
    assert answer.status_code == 400 and "rename the file" in answer.text
    assert workspace.opened is None
    assert not any(p.is_file() for p in (workspace.workdir / "uploads").rglob("*"))
