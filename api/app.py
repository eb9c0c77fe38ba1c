"""The Flask app factory: the thin web layer over services/ (use cases, and reads: services.reads) and
schemas/."""

from __future__ import annotations

import logging
from typing import Any

import swagger_ui_bundle
from flask import Flask, Response, send_from_directory
from flask_smorest import Api
from werkzeug.exceptions import HTTPException

from api import batches, errors, events, jobs, meta, metrics, openapi, rows
from api.admin.setup import init_admin
from api.extension import Zolve, install
from api.job_cache import JobCache
from api.keycache import new_auth_cache
from api.limits import init_limits
from api.security import init_security
from api.slots import Slots, Turns
from api.spools import Spools
from core import tracing
from core.config import Settings, replace
from kinds import KINDS
from schemas.jobs import Error as ErrorSchema
from services.context import Context
from services.reads.jobs import read_jobs
from store.db import Database
from store.listen import EventFeed
from workers.app import make_celery


class ZolveApi(Api):
    """flask-smorest with zolve's JSON error body."""

    ERROR_SCHEMA = ErrorSchema

    def handle_http_exception(self, error: HTTPException) -> Response:
        return errors.handle_http_exception(error)


#: seconds a browser or a proxy may keep the API docs' assets (they change only with the package)
ASSET_MAX_AGE = 7 * 86400

#: a "z" in the dashboard's accent colour, as an SVG icon (browsers take one at /favicon.ico by its type)
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" '
    'fill="#2f5fd0"/><path d="M4 4h8v2l-5 4h5v2H4v-2l5-4H4z" fill="#fff"/></svg>'
)


def create_app(settings: Settings | None = None) -> Flask:
    settings = settings or Settings.from_env()
    database_url, _ = settings.require_urls()
    tracer_provider = tracing.start("zolve-api")  # before the first SQL: its statements are traced
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        API_TITLE="zolve API",  # a generated client derives its package from it: zolve_api_client
        API_VERSION="1",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL="/docs/assets/",
        API_SPEC_OPTIONS={
            "info": {"description": "Board-game puzzles solved with Z3, as jobs: POST one, then poll it."},
            "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
            "security": [{"bearer": []}],
        },
    )
    # no pre-ping: a request that meets a connection dropped by a database restart answers 503 and
    # resets the pool; every other request saves a round trip
    db = Database(
        database_url,
        pool_size=10,
        pre_ping=False,
        statement_timeout=settings.api_statement_timeout,
        on_connect=errors.DATABASE_OUTAGE.succeeded,  # a new connection: the database is back, if it was away
    )
    celery = make_celery(settings)
    extension = install(
        app,
        Zolve(
            settings=settings,
            db=db,
            celery=celery,
            context=Context(db, settings, celery),
            events=EventFeed(db),
            waiting=Slots(settings.max_waiting, settings.max_waiting_per_key),
            exports=Slots(settings.max_exports, settings.max_exports_per_key),
            export_reads=Turns(settings.max_export_reads),
            spools=Spools(settings.export_spool_bytes),
            streams=Slots(settings.max_streams, settings.max_streams_per_key),
            status_cache=JobCache(load=read_jobs(db), unfinished_seconds=settings.status_cache_seconds),
            auth_cache=new_auth_cache(),
        ),
    )

    api = ZolveApi(app, spec_kwargs={"extra_plugins": [openapi.OperationsPlugin()]})
    for kind in KINDS.values():
        api.spec.components.schema(kind.params_schema.__name__, schema=kind.params_schema)
        api.spec.components.schema(kind.result_schema.__name__, schema=kind.result_schema)
    api.register_blueprint(meta.blp)
    api.register_blueprint(jobs.blp)
    for blueprint in rows.blueprints():  # one per kind's rows hook, e.g. Planet X's "boards"
        api.register_blueprint(blueprint)
    api.register_blueprint(batches.blp)
    api.register_blueprint(metrics.blp)
    api.register_blueprint(events.blp)
    openapi.complete(api.spec, settings.max_time_limit)
    errors.register_error_handlers(app)
    init_admin(app, settings)
    init_security(app, settings)
    extension.limiter = init_limits(app, settings)

    @app.route("/docs/assets/<path:filename>")
    def swagger_assets(filename: str) -> Response:
        """The API docs' scripts and styles: the same for every client and every release of the bundle."""
        answer = send_from_directory(swagger_ui_bundle.swagger_ui_path, filename, max_age=ASSET_MAX_AGE)
        answer.cache_control.public = True
        return answer

    @app.route("/favicon.ico")
    def favicon() -> Response:
        """What a browser asks for on every dashboard page (a 404 before: issue 50, item 8)."""
        return Response(FAVICON, mimetype="image/svg+xml", headers={"Cache-Control": "max-age=86400"})

    if tracer_provider is not None:
        tracing.instrument_flask(app, tracer_provider)
    logging.getLogger("zolve").setLevel(logging.INFO)
    return app


def openapi_document(settings: Settings) -> dict[str, Any]:
    """The OpenAPI document the API serves at /openapi.json, with no server: the app built with
    `settings` and unreachable server addresses (building it connects to nothing)."""
    nowhere = replace(
        settings,
        database_url="postgresql://nobody@127.0.0.1:9/none",
        redis_url="redis://127.0.0.1:9/0",
        rate_limit="",
        submit_rate_limit="",
        secret_key="unused",
    )
    served = create_app(nowhere).test_client().get("/openapi.json")
    if served.status_code != 200:
        raise RuntimeError(f"the app answered /openapi.json with {served.status}")
    document: dict[str, Any] = served.get_json()
    return document
