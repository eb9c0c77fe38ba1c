"""HTTPS and the admin cookie (api/security.py): `Secure` cookies and HSTS over HTTPS only, X-Forwarded-*
believed only from as many proxies as ZOLVE_TRUSTED_PROXIES says, the dashboard's security headers.

All but the last test need no server: an app with unreachable servers still serves /health, the login page
and a route that shows what it believes of the request."""

from __future__ import annotations

import re

import pytest
from flask import request

from api.security import DASHBOARD_CSP, HTMX_INDICATOR_STYLE, _hash_source
from core.config import Settings, replace
from tests.support import ROOT

NO_SERVERS = Settings(
    database_url="postgresql://nobody@127.0.0.1:9/none",
    redis_url="redis://127.0.0.1:9/0",
    rate_limit="",
    submit_rate_limit="",
    secret_key="test-secret",
)
PROXIED_HTTPS = {
    "X-Forwarded-Proto": "https",
    "X-Forwarded-For": "203.0.113.7",
    "X-Forwarded-Host": "zolve.example",
}


def app_without_servers(**changes):
    from api.app import create_app

    app = create_app(replace(NO_SERVERS, **changes))

    @app.get("/_seen")
    def seen() -> dict:
        return {"scheme": request.scheme, "addr": request.remote_addr, "host": request.host}

    return app


def session_cookie(response) -> str:
    [cookie] = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("zolve_admin=")]
    return cookie


def test_plain_http_has_no_hsts_and_no_secure_cookie() -> None:
    client = app_without_servers().test_client()
    response = client.get("/admin/login")
    assert response.status_code == 200
    assert "Strict-Transport-Security" not in response.headers
    assert "Secure" not in session_cookie(response)
    assert "HttpOnly" in session_cookie(response) and "SameSite=Lax" in session_cookie(response)


def test_https_gets_hsts_and_a_secure_cookie() -> None:
    client = app_without_servers().test_client()
    response = client.get("/admin/login", base_url="https://zolve.example")
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000"
    assert "; Secure" in session_cookie(response)
    assert client.get("/health", base_url="https://zolve.example").headers["Strict-Transport-Security"]
    assert (
        "Strict-Transport-Security"
        not in app_without_servers(hsts_seconds=0)
        .test_client()
        .get("/health", base_url="https://zolve.example")
        .headers
    )


def test_forwarded_headers_are_ignored_unless_proxies_are_trusted() -> None:
    client = app_without_servers().test_client()
    seen = client.get("/_seen", headers=PROXIED_HTTPS).get_json()
    assert seen == {"scheme": "http", "addr": "127.0.0.1", "host": "localhost"}, "a client cannot pose"
    response = client.get("/admin/login", headers=PROXIED_HTTPS)
    assert "Strict-Transport-Security" not in response.headers
    assert "Secure" not in session_cookie(response)


def test_behind_one_trusted_proxy_its_forwarded_headers_count() -> None:
    client = app_without_servers(trusted_proxies=1).test_client()
    seen = client.get("/_seen", headers=PROXIED_HTTPS).get_json()
    assert seen == {"scheme": "https", "addr": "203.0.113.7", "host": "zolve.example"}
    response = client.get("/admin/login", headers=PROXIED_HTTPS)
    assert response.headers["Strict-Transport-Security"] == "max-age=31536000"
    assert "; Secure" in session_cookie(response)
    # only the last hop is believed: an address the client put in front of the proxy's is not
    chained = client.get("/_seen", headers={**PROXIED_HTTPS, "X-Forwarded-For": "10.9.9.9, 203.0.113.7"})
    assert chained.get_json()["addr"] == "203.0.113.7"


def test_the_dashboard_sends_its_security_headers() -> None:
    client = app_without_servers().test_client()
    for path in ("/admin/login", "/admin/static/admin.css", "/admin/"):
        with client.get(path) as response:  # a static file's answer holds the file open until closed
            headers = response.headers
        assert headers["Content-Security-Policy"] == DASHBOARD_CSP, path
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "same-origin"
        assert headers["X-Content-Type-Options"] == "nosniff"
    assert "frame-ancestors 'none'" in DASHBOARD_CSP and "script-src 'self'" in DASHBOARD_CSP
    api = client.get("/health").headers
    assert api["X-Content-Type-Options"] == "nosniff" and "Content-Security-Policy" not in api
    # the Swagger UI page has an inline script of its own: the dashboard's policy is not applied there
    assert "Content-Security-Policy" not in client.get("/docs").headers


def test_the_dashboard_pages_load_nothing_the_policy_forbids() -> None:
    """Every script and stylesheet the pages name is the dashboard's own; no inline script, style or
    handler (the policy would block it)."""
    templates = ROOT / "api" / "admin" / "templates" / "admin"
    for page in templates.glob("*.html"):
        text = page.read_text()
        for tag in re.findall(r"<(?:script|link)\b[^>]*>", text):
            assert "url_for('admin.static'" in tag, f"{page.name}: {tag}"
        assert "<style" not in text and " style=" not in text and not re.search(r"\son[a-z]+=", text), (
            page.name
        )
        assert "hx-on" not in text, f"{page.name}: hx-on needs eval, which script-src forbids"


def test_the_style_htmx_injects_is_the_one_the_policy_allows() -> None:
    """htmx adds one <style> for its indicators; the policy allows exactly that text by its hash. A new htmx
    that changes it makes this test fail (then update HTMX_INDICATOR_STYLE)."""
    [script] = (ROOT / "api" / "admin" / "static").glob("htmx-*.min.js")
    source = script.read_text()
    template = re.search(r"`<style\$\{e\}>`\+(`[^`]*`\+`[^`]*`)\+\"</style>\"", source).group(1)
    indicator = re.search(r'indicatorClass:"([^"]+)"', source).group(1)
    request_class = re.search(r'requestClass:"([^"]+)"', source).group(1)
    injected = (
        template.replace("`+`", "").strip("`").replace("${t}", indicator).replace("${n}", request_class)
    )
    assert injected == HTMX_INDICATOR_STYLE
    assert _hash_source(injected) in DASHBOARD_CSP


def test_several_api_processes_need_a_shared_secret_key(tmp_path, monkeypatch) -> None:
    from click.testing import CliRunner

    from core.config import unshared_secret_key
    from zolve.cli import main

    missing = tmp_path / "none"
    assert unshared_secret_key(Settings(data_dir=missing), 1) is None, "one process: its own key is fine"
    assert unshared_secret_key(Settings(data_dir=missing, secret_key="k"), 4) is None
    assert unshared_secret_key(Settings(data_dir=tmp_path), 4) is None, "`zolve up`: kept in the data dir"
    assert "ZOLVE_SECRET_KEY" in unshared_secret_key(Settings(data_dir=missing), 4)

    monkeypatch.setenv("DATABASE_URL", NO_SERVERS.database_url)
    monkeypatch.setenv("REDIS_URL", NO_SERVERS.redis_url)
    monkeypatch.setenv("ZOLVE_DATA_DIR", str(missing))
    monkeypatch.delenv("ZOLVE_SECRET_KEY", raising=False)
    result = CliRunner().invoke(main, ["api", "--workers", "4"])
    assert result.exit_code == 1
    assert "ZOLVE_SECRET_KEY is not set" in result.output and "--workers 1" in result.output


def test_the_server_believes_no_forwarded_header_itself() -> None:
    """granian hands the app the peer's address; only the app's ProxyFix reads X-Forwarded-*, and only
    from ZOLVE_TRUSTED_PROXIES (the edge's fair turns read it the same way: tests/test_edge.py)."""
    from zolve.edge import wsgi_environ

    scope = {
        "method": "GET", "path": "/", "raw_path": b"/", "query_string": b"", "http_version": "1.1",
        "headers": [(b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-proto", b"https")],
        "client": ("10.0.0.1", 1), "scheme": "http",
    }  # fmt: skip
    environ = wsgi_environ(scope, b"")
    assert environ["REMOTE_ADDR"] == "10.0.0.1" and environ["wsgi.url_scheme"] == "http"


@pytest.mark.integration
def test_an_admin_logs_in_over_https_behind_a_trusted_proxy(make_app, make_key) -> None:
    """The whole login over HTTPS, as a browser behind the proxy does it: Flask-WTF then also checks that
    the form came from this site (Referer), which Referrer-Policy: same-origin lets the browser send."""
    client = make_app(trusted_proxies=1).test_client()
    proxy = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "zolve.example"}
    page = client.get("/admin/login", headers=proxy)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True)).group(1)
    key = make_key(admin=True)["Authorization"].split()[1]
    form = {"key": key, "csrf_token": token}
    no_referer = client.post("/admin/login", data=form, headers=proxy)
    assert no_referer.status_code == 400, "over HTTPS a form needs its Referer"
    login = client.post(
        "/admin/login", data=form, headers={**proxy, "Referer": "https://zolve.example/admin/login"}
    )
    assert login.status_code == 302, login.get_data(as_text=True)
    assert "; Secure" in session_cookie(login) and login.headers["Strict-Transport-Security"]
    assert client.get("/admin/", headers=proxy).status_code == 200
