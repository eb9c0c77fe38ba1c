"""Read models are copies of their rows (services/reads/copies.py): each field a column of the row's table,
so that a renamed column fails here rather than on a request."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import inspect

from services.reads.batches import BatchView, ItemView
from services.reads.events import EventView
from services.reads.jobs import JobView
from services.reads.keys import KeyView
from store.models import ApiKey, Base, Batch, BatchItem, Job, JobEvent

VIEWS = [(JobView, Job), (BatchView, Batch), (ItemView, BatchItem), (EventView, JobEvent), (KeyView, ApiKey)]


@pytest.mark.parametrize(("view", "table"), VIEWS, ids=[view.__name__ for view, _ in VIEWS])
def test_each_field_of_a_read_model_is_a_column_of_its_table(view: type, table: type[Base]) -> None:
    columns = {attribute.key for attribute in inspect(table).column_attrs}
    assert {field.name for field in dataclasses.fields(view)} <= columns


def test_a_read_model_is_frozen() -> None:
    key = KeyView(1, "ci", "zk_Ab12", False, None, None, 0, 1.0, None)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        key.name = "other"  # type: ignore[misc]
