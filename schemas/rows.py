"""Pages of a job's stored rows (kinds that store them, e.g. Planet X boards). A kind extends
RowPageQuery with its own filters."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from schemas.fields import QueryInteger


class RowPageQuery(Schema):
    limit = QueryInteger(load_default=100, validate=validate.Range(1, 1000))
    cursor = QueryInteger(
        validate=validate.Range(0, 2**63 - 1),  # a row's code is a PostgreSQL bigint
        metadata={"description": "next_cursor of the previous page"},
    )


class RowPage(Schema):
    items = fields.List(
        fields.Dict(),
        metadata={
            "description": "each row's `code` and its readable form, under the key the kind names (its"
            " rows' item, e.g. a Planet X board's `board`)"
        },
    )
    next_cursor = fields.Integer(allow_none=True)


class RowExportQuery(Schema):
    """Every row of a job (a kind without filters: extend it with the kind's own)."""
