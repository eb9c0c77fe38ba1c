"""Kinds that exist only for the tests, loaded into the API and worker processes with
ZOLVE_PLUGINS=tests.plugins: a poison job that kills whatever process runs it, a job that runs until the
test says (a file appears), and a sharded kind whose timing and failures the params steer
(tests.sharded_plugin)."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from marshmallow import Schema, fields, validate

from kinds import Kind, register


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


class HoldParams(Schema):
    #: the job runs until this file exists (none: for `seconds`), or for at most `seconds`
    release = fields.String(load_default="")
    seconds = fields.Float(load_default=1.0, validate=validate.Range(0, 60))


class HoldResult(Schema):
    released = fields.Boolean()


def hold(params: dict[str, Any], run: Any) -> dict[str, Any]:
    deadline = time.monotonic() + params["seconds"]
    released = params["release"]
    while not (released and os.path.exists(released)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {"released": bool(released) and os.path.exists(released)}


register(
    Kind(
        name="test.hold",
        summary="runs until a file exists (tests only)",
        params_schema=HoldParams,
        result_schema=HoldResult,
        solver="tests.plugins:hold",
    )
)


class ShardedParams(Schema):
    plan_seconds = fields.Float(load_default=0.0, validate=validate.Range(0, 5))
    keys = fields.List(fields.String(), load_default=lambda: ["a"], validate=validate.Length(max=20))
    #: shard key -> the keys it splits into
    split = fields.Dict(fields.String(), fields.List(fields.String()), load_default=dict)
    shard_seconds = fields.Float(load_default=0.0, validate=validate.Range(0, 30))
    #: shard keys that wait until the file `release` exists (the test creates it when it has seen enough)
    held = fields.List(fields.String(), load_default=list, validate=validate.Length(max=20))
    release = fields.String(load_default="")
    #: "ok", "unstorable" (a result PostgreSQL refuses) or "crash" (kills the process)
    finalize = fields.String(load_default="ok")


class ShardedResult(Schema):
    count = fields.Float()
    keys = fields.List(fields.String())


register(
    Kind(
        name="test.sharded",
        summary="a sharded kind whose timing and failures the params steer (tests only)",
        params_schema=ShardedParams,
        result_schema=ShardedResult,
        solver="tests.sharded_plugin:solve",
        sharded=True,
    )
)
