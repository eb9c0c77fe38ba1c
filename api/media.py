"""The media type a file is served as: its own (SVG, NDJSON, CSV), or plain bytes for a client that asks
for every file as `application/octet-stream` (a generated client knows no vendor types: the OpenAPI
document offers both for each file, api.openapi)."""

from __future__ import annotations

from flask import request

OCTET_STREAM = "application/octet-stream"


def served_as(media_type: str) -> str:
    """`media_type`, unless the request's Accept prefers application/octet-stream to it."""
    return request.accept_mimetypes.best_match([media_type, OCTET_STREAM], default=media_type) or media_type
