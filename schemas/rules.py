"""Rules across a kind's params that a JSON Schema cannot say: a limit that depends on another field, one of
two fields, a whole that must make sense. Each params schema names its own in `cross_field_rules`; the API
document writes them into that schema's description (api.openapi), and a request that breaks one is
refused with a 422 whose `errors` name the field the rule is checked at."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from marshmallow import Schema

#: where a rule about the params as a whole reports (marshmallow's key for schema-level errors)
WHOLE = "_schema"


@dataclass(frozen=True)
class CrossFieldRule:
    #: the params field a refusal names (WHOLE: the params as a whole)
    field: str
    #: the rule, as a client needs to know it
    says: str


def cross_field_rules(schema: type[Schema]) -> tuple[CrossFieldRule, ...]:
    """The rules a params schema names (none for a schema that names none)."""
    rules: tuple[CrossFieldRule, ...] = getattr(schema, "cross_field_rules", ())
    return rules


def rule_fields(schema: type[Schema]) -> set[str]:
    """The fields a refusal for one of the schema's rules may name."""
    return {rule.field for rule in cross_field_rules(schema)}


def unknown_rule_fields(schema: type[Schema]) -> list[str]:
    """Fields the schema's rules name that it has not: a rule must point where its refusal lands."""
    known = {*schema().fields, WHOLE}
    return sorted(rule.field for rule in cross_field_rules(schema) if rule.field not in known)


def describe_rules(rules: Iterable[CrossFieldRule]) -> str:
    """The rules as the document's description says them (empty when there are none)."""
    lines = [f"- `{rule.field}`: {rule.says}" for rule in rules]
    if not lines:
        return ""
    heading = (
        "Rules across fields (and forms OpenAPI 3.0 cannot type), which this schema cannot say: params "
        "that break one are refused (a job with "
        f"422, a batch's item as `rejected`), `errors.params` naming the field (`{WHOLE}`: the params as a "
        "whole)."
    )
    return "\n".join([heading, "", *lines])
