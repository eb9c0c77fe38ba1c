"""HTTPS and the headers a browser needs: what a request's scheme and client are (behind trusted proxies
only), `Secure` session cookies and HSTS over HTTPS, and the dashboard's security headers.

Behind a TLS-terminating proxy the API sees plain HTTP from the proxy. With `ZOLVE_TRUSTED_PROXIES=N`, the
last N hops of X-Forwarded-For/-Proto/-Host/-Port/-Prefix are believed (werkzeug's ProxyFix), so an HTTPS
request counts as one, and rate limits count the real client; with 0 (the default) those headers are
ignored, whoever sends them: a client cannot pose as another address or claim HTTPS.
"""

from __future__ import annotations

import base64
import hashlib

from flask import Flask, Request, Response, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix

from core.config import Settings

#: the <style> htmx adds to the page for its request indicators (htmx 2.0.11, includeIndicatorStyles):
#: allowed by its hash, the only inline style or script the dashboard has
HTMX_INDICATOR_STYLE = (
    ".htmx-indicator{opacity:0;visibility: hidden} "
    ".htmx-request .htmx-indicator, .htmx-request.htmx-indicator"
    "{opacity:1;visibility: visible;transition: opacity 200ms ease-in}"
)


def _hash_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


#: what the dashboard loads: its own scripts (htmx), styles and forms, htmx's requests to itself; inline SVG
#: charts need nothing; no frames, plugins or <base>
DASHBOARD_CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        f"style-src 'self' {_hash_source(HTMX_INDICATOR_STYLE)}",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "object-src 'none'",
    ]
)

DASHBOARD_HEADERS = {
    "Content-Security-Policy": DASHBOARD_CSP,
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: over HTTPS, Flask-WTF's CSRF check wants the form's page as Referer
    "Referrer-Policy": "same-origin",
}


class HttpsAwareSessions(SecureCookieSessionInterface):
    """Session cookies (the dashboard's) are `Secure` on every HTTPS request, whatever the config says.
    A request without the cookie (every API client's) gets a new empty session without the cookie
    signer being made for it: Flask opens a session before every request."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if app.secret_key and self.get_cookie_name(app) not in request.cookies:
            return self.session_class()
        return super().open_session(app, request)

    def get_cookie_secure(self, app: Flask) -> bool:
        return super().get_cookie_secure(app) or request.is_secure


def init_security(app: Flask, settings: Settings) -> None:
    if settings.trusted_proxies > 0:
        hops = settings.trusted_proxies
        # Flask's documented way to put WSGI middleware around the app, which its stubs call a method
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops, x_prefix=hops
        )
    app.session_interface = HttpsAwareSessions()

    @app.after_request
    def security_headers(response: Response) -> Response:
        headers = response.headers
        headers.setdefault("X-Content-Type-Options", "nosniff")
        if request.is_secure and settings.hsts_seconds > 0:
            headers.setdefault("Strict-Transport-Security", f"max-age={settings.hsts_seconds}")
        if request.path == "/admin" or request.path.startswith("/admin/"):
            for name, value in DASHBOARD_HEADERS.items():
                headers.setdefault(name, value)
        return response
