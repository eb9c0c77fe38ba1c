"""Health, readiness and the list of kinds, as the API answers them."""

from __future__ import annotations

from marshmallow import Schema, fields


class Health(Schema):
    status = fields.String(required=True, metadata={"description": "ok"})
    version = fields.String(required=True, metadata={"description": "the version this process runs"})


class Ready(Schema):
    status = fields.String(required=True, metadata={"description": "ready"})


class NotReady(Schema):
    code = fields.Integer(required=True, metadata={"description": "503"})
    status = fields.String()
    message = fields.String(required=True)
    reasons = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        metadata={"description": "what is missing: database, broker, workers"},
    )


class Kind(Schema):
    name = fields.String(required=True)
    summary = fields.String(required=True)
    params_schema = fields.String(
        required=True, metadata={"description": "the name of the kind's params schema in components"}
    )
    result_schema = fields.String(
        required=True, metadata={"description": "the name of the kind's result schema in components"}
    )
    job_schema = fields.String(
        required=True,
        metadata={"description": "the name of the schema of a job of this kind (params and result typed)"},
    )
    create_schema = fields.String(
        required=True,
        metadata={"description": "the name of the schema of a submit of this kind (POST /jobs' body)"},
    )
    example = fields.Dict(
        required=True,
        metadata={"description": "params of a quick job of this kind (where the new-job form starts)"},
    )
    rows = fields.String(
        allow_none=True,
        metadata={"description": "what its jobs store as rows (GET /jobs/{id}/<rows>), e.g. boards"},
    )
