"""Entry points for the long-running processes: the API under gunicorn, and a Celery worker."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from core.config import Settings, secret_key_for, unshared_secret_key


class ConfigurationError(RuntimeError):
    """The settings would make a server that misbehaves: it is not started."""


def gunicorn_options(
    settings: Settings, *, host: str, port: int, workers: int, threads: int
) -> dict[str, Any]:
    return {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        # event streams hold a thread each, at most max_streams: on top of the threads everything else
        # (probes above all) is served by
        "threads": threads + settings.max_streams,
        # long-polls (`?wait=`) hold a thread for up to max_wait_seconds
        "timeout": int(settings.max_wait_seconds) + 30,
        "graceful_timeout": 10,
        "accesslog": "-",
        # gunicorn would believe X-Forwarded-Proto from 127.0.0.1 by itself: the app's ProxyFix decides
        # alone, from ZOLVE_TRUSTED_PROXIES (api.security)
        "forwarded_allow_ips": "",
    }


def serve_api(settings: Settings, *, host: str, port: int, workers: int, threads: int) -> None:
    from gunicorn.app.base import BaseApplication

    from api.app import create_app

    problem = unshared_secret_key(settings, workers)
    if problem:
        raise ConfigurationError(problem)
    # resolved once, before gunicorn forks: every process signs the dashboard's sessions alike
    settings = replace(settings, secret_key=secret_key_for(settings))
    options = gunicorn_options(settings, host=host, port=port, workers=workers, threads=threads)

    class _Gunicorn(BaseApplication):
        def load_config(self) -> None:
            for name, value in options.items():
                self.cfg.set(name, value)

        def load(self) -> Any:
            return create_app(settings)

    _Gunicorn().run()


def serve_worker(
    settings: Settings, *, concurrency: int, pool: str, loglevel: str, queues: str | None = None
) -> None:
    from services.messages import QUEUE, WEBHOOK_QUEUE
    from workers.main import BOOT_ID, create_worker_app

    logging.basicConfig(level=loglevel, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    celery = create_worker_app(settings)
    celery.worker_main(
        [
            "worker",
            f"--loglevel={loglevel}",
            f"--concurrency={concurrency}",
            f"--pool={pool}",
            f"--queues={queues or f'{QUEUE},{WEBHOOK_QUEUE}'}",
            # unique per start: Celery tells workers apart by node name, and so does the dashboard
            f"--hostname=zolve-{BOOT_ID}@%h",
            "--without-gossip",
            "--without-mingle",
        ]
    )
