"""A key as read (services/reads/keys.py) holds neither its hash nor its webhook secret."""

from __future__ import annotations

import dataclasses

from services.reads.keys import KeyView


def test_a_key_read_holds_no_secret() -> None:
    assert not {"key_hash", "webhook_secret"} & {field.name for field in dataclasses.fields(KeyView)}
