"""Installs the dashboard on the app: sessions from an admin API key, CSRF on every form, template filters."""

from __future__ import annotations

from datetime import timedelta

from flask import Blueprint, Flask, Response, request, url_for
from flask_wtf.csrf import CSRFProtect
from werkzeug.exceptions import HTTPException

from api.admin import batch_pages, key_pages, pages, present  # noqa: F401 - their routes join the blueprint
from api.admin.views import bp, http_error
from api.errors import handle_http_exception
from api.extension import zolve
from core.config import Settings, secret_key_for
from kinds import KINDS, load_attribute

csrf = CSRFProtect()


#: the kinds' blueprints mounted so far (several kinds may share one)
_MOUNTED: set[str] = set()


def _kinds_pages() -> list[tuple[str, str]]:
    """Mount each kind's own pages (Kind.pages) under the dashboard's blueprint, once (a blueprint can
    gain no more once an app has registered it): they share its sign-in, error pages and submit budget.
    Returns each one's menu link: (title, endpoint)."""
    links = []
    for kind in KINDS.values():
        if kind.pages is None:
            continue
        child: Blueprint = load_attribute(kind.pages.blueprint)
        if child.name not in _MOUNTED:
            bp.register_blueprint(child)
            _MOUNTED.add(child.name)
        links.append((kind.pages.title, f"{bp.name}.{child.name}.{kind.pages.start}"))
    return list(dict.fromkeys(links))


KIND_PAGES = _kinds_pages()


@bp.context_processor
def _menu() -> dict[str, list[tuple[str, str]]]:
    return {"kind_pages": [(title, url_for(endpoint)) for title, endpoint in KIND_PAGES]}


def init_admin(app: Flask, settings: Settings) -> None:
    app.config.update(
        SECRET_KEY=secret_key_for(settings),
        SESSION_COOKIE_NAME="zolve_admin",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        # the idle lifetime: a cookie signed longer ago is refused (each request signs it anew); the
        # absolute one is views._session_holds
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=settings.session_idle_seconds),
        # the bearer-token API has no forms: the dashboard asks for the token itself (views.guard)
        WTF_CSRF_CHECK_DEFAULT=False,
        # a token lives as long as the session, so a page left open still submits
        WTF_CSRF_TIME_LIMIT=None,
    )
    csrf.init_app(app)
    zolve(app).csrf = csrf
    app.jinja_env.filters.update(
        when=present.when,
        duration=present.duration,
        pretty=present.pretty_json,
        percent=present.progress_percent,
        progress_label=present.progress_label,
        cell=present.cell_text,
        rate=present.rate,
        has_picture=present.has_picture,
        field_errors=present.field_errors,
    )
    app.register_blueprint(bp)
    app.register_error_handler(HTTPException, _pages_answer_under_the_dashboard)


def _pages_answer_under_the_dashboard(error: HTTPException) -> Response:
    """A URL under /admin that matches no page (a typo, a wrong method, an id out of range) is answered
    by the dashboard's error page, as its pages' own errors are; the rest of the app answers in JSON.
    (The blueprint's handler cannot see these: no page was matched, so no blueprint either.)"""
    if request.blueprint is None and (request.path + "/").startswith(f"{bp.url_prefix}/"):
        return http_error(error)
    return handle_http_exception(error)
