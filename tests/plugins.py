"""Kinds that exist only for the tests, loaded into the API and worker processes with
ZOLVE_PLUGINS=tests.plugins: a poison job that kills whatever process runs it."""

from __future__ import annotations

import os
import signal
from typing import Any

from marshmallow import Schema, fields

from zolve.kinds import Kind, register


class CrashParams(Schema):
    note = fields.String(load_default="")


class CrashResult(Schema):
    never = fields.String()


def crash(params: dict[str, Any], run: Any) -> dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)  # like a segfault in a native solver
    raise AssertionError("unreachable")


register(
    Kind(
        name="test.crash",
        summary="kills its worker process (tests only)",
        params_schema=CrashParams,
        result_schema=CrashResult,
        solver="tests.plugins:crash",
    )
)
