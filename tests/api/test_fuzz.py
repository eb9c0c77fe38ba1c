"""Fuzz the API from its own OpenAPI spec (schemathesis): no 5xx, and every response matches the spec.

Then hostile values, which random spec-driven data almost never holds: other scripts' digits ('²', '٣', '１',
which str.isdigit() accepts and int() refuses or reads as a number), NUL characters, huge and non-finite
numbers (1e308, 10**400, Infinity, NaN), negative zero and very long strings
- in every query parameter and top-level body field of every operation (schemathesis, with hooks), and
- in every field of every kind's params, in process and through POST /jobs and POST /batches (hypothesis).
A kind's params are a free-form object in the spec, so schemathesis alone never reaches them.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from marshmallow import ValidationError
from schemathesis import GenerationMode, checks

from kinds import KINDS
from schemas.rules import rule_fields

# /ready is a 503 until a worker heartbeats: about the servers, not the request (tests/api/test_ready.py);
# /events streams until its client leaves, which a fuzzer reading whole bodies never does
# (tests/api/test_events.py)
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path=["/ready", "/events"])
hostile_schema = schemathesis.pytest.from_fixture("hostile_api_schema").exclude(path=["/ready", "/events"])

#: as the spec run: derandomized, so CI replays the same examples
FUZZ = settings(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzz_headers(make_key_module) -> dict[str, str]:
    return make_key_module()


@pytest.fixture
def api_schema(app):
    loaded = schemathesis.openapi.from_wsgi("/openapi.json", app)
    # the document's examples and generated cases; the coverage phase (every field's boundary values, each
    # required part left out) is `make contract`'s, against a running service, as the longest part of this
    # module; every field of every kind meets hostile values below
    loaded.config.phases.coverage.enabled = False
    return loaded


@schema.parametrize()
# derandomized: CI replays the same examples, so a red run is a real regression, reproducible here;
# `make contract` (bench/contract.py) runs five times as many against a running service
@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
# one test of every operation (a subtest each), so the time limit of one test is too short for it
@pytest.mark.timeout(900)
def test_the_api_honours_its_spec(case, fuzz_headers) -> None:
    # Every check but "schema-valid requests are accepted": a kind's rules across its params' fields
    # (test_schema_valid_submits_are_accepted_but_for_a_named_rule holds the submits to them), and a
    # cursor is only valid if this service made it. Such requests must get a 4xx, and the other checks
    # hold them to it: no 5xx, documented status codes, bodies and headers.
    case.call_and_validate(headers=fuzz_headers, excluded_checks=[checks.positive_data_acceptance])


# -- hostile values ------------------------------------------------------------------------------------

#: one digit of another script: '٣' (Nd, int() reads it) or '²' (No, isdigit() holds, int() refuses it)
FOREIGN_DIGIT = st.characters(categories=("Nd", "No")).filter(lambda char: not char.isascii())
ASCII_DIGITS = st.text(alphabet="0123456789", max_size=2)
FOREIGN_NUMBER = st.tuples(ASCII_DIGITS, FOREIGN_DIGIT, ASCII_DIGITS).map("".join)
WITH_NUL = st.tuples(st.text(max_size=3), st.text(max_size=3)).map(lambda parts: "\x00".join(parts))
LONG_TEXT = st.sampled_from(["9" * 5000, "x" * 5000, "٣" * 3000, "1:" + "0" * 5000])
HUGE = st.one_of(
    st.sampled_from([1e308, -1e308, 10**400, -(10**400), 2**63]),
    st.sampled_from(["Infinity", "-Infinity", "NaN", "1e308", "1" + "0" * 400]),
    st.integers(min_value=2**63, max_value=10**500),
)
NOT_FINITE = st.sampled_from([math.inf, -math.inf, math.nan])
HUGE_OR_NOT_FINITE = st.one_of(HUGE, NOT_FINITE)
HOSTILE_SCALAR = st.one_of(FOREIGN_NUMBER, WITH_NUL, LONG_TEXT, HUGE_OR_NOT_FINITE)
#: a pair or a {min, max} holding one hostile number, as Leaving Earth's ranges ([0, Infinity] was a 500)
HOSTILE_CONTAINER = st.one_of(
    st.tuples(st.just(0), HOSTILE_SCALAR).map(list),
    st.tuples(HOSTILE_SCALAR, st.just(3)).map(list),
    HOSTILE_SCALAR.map(lambda value: {"min": value}),
    HOSTILE_SCALAR.map(lambda value: {"max": value}),
)
#: odd but harmless: may be accepted (as 0), must not break anything
ODD = st.sampled_from([-0.0, "-0", "-0.0", "+0"])

#: one valid params object per kind (two for Taiji: code and grid), rich enough to reach every field
BASES: dict[str, dict[str, Any]] = {
    "dice": {"dice": 3, "faces": 6, "max_face": 12, "beats": [[0, 1], [1, 2], [2, 0]]},
    "planetx.enumerate": {
        "mode": "standard",
        "constraints": [{"sector": 3, "object": "comet", "present": False}],
        "shard_depth": 2,
        "max_shard_boards": 1000,
    },
    "planetx.deduce": {
        "mode": "standard",
        "observations": [
            {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
            {"type": "target", "sector": 4, "seen": "empty"},
            {"type": "sector", "sector": 3, "object": "comet", "present": False},
            {
                "type": "clue",
                "relation": "within",
                "quantifier": "all",
                "distance": 3,
                "subject": "planet_x",
                "object": "asteroid",
            },
            {"type": "clue", "relation": "band", "subject": "dwarf_planet", "width": 4, "exact": False},
            {"type": "locate", "sector": 5, "left": "asteroid", "right": "empty"},
        ],
        "sky_start": 1,
        "targets_used": 0,
        "top": 5,
        "rank_by": "bits_per_day",
        "verify_with_z3": False,
    },
    "planetx.simulate": {
        "mode": "standard",
        "games": 2,
        "seed": 1,
        "policy": "goal",
        "max_days": 50,
        "games_per_shard": 1,
        "sample_games": 1,
    },
    "mastermind.guess": {
        "n": 4,
        "k": 6,
        "strategy": "best",
        "seed": 1,
        "samples": 5,
        "history": [{"guess": [0, 0, 1, 1], "black": 1, "white": 0}],
    },
    "mastermind.play": {"n": 4, "k": 6, "secrets": [[0, 1, 2, 3]], "max_turns": 10, "seed": 1, "samples": 5},
    "mastermind.play#sample": {"n": 4, "k": 6, "secrets": {"sample": 3, "seed": 2}},
    "leaving_earth.plan": {
        "origin": "E",
        "destination": "M",
        "payload": 1,
        "components": {"juno": "0-3", "ion": [0, 2]},
        "cost": "0-100",
        "time": {"min": 0, "max": 5},
        "year": 1960,
        "free_ions": 0,
        "minimize": ["cost", "time"],
        "launch": "any",
        "waypoints": [{"location": "L", "drop": 0, "pick_up": 0}],
        "engine": "bounded",
    },
    "taiji.solve": {"code": "3:Kw202200Fw62Dw4", "unique": True},
    "taiji.solve#grid": {
        "grid": [[{"symbol": "dice", "value": 2, "colour": "r", "fixed": True, "lit": True}, None, {}]]
    },
    "taiji.enumerate": {"code": "3:Kw202200Fw62Dw4", "max_solutions": 10},
}


def test_every_kind_has_a_base_to_fuzz() -> None:
    assert {_kind(name) for name in BASES} == set(KINDS) - {n for n in KINDS if n.startswith("test.")}


def _kind(name: str) -> str:
    return name.partition("#")[0]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _kind_paths() -> list[tuple[str, tuple[Any, ...]]]:
    """Every (base, path) to put a hostile value at: each value in the base, and each top-level field."""
    found = []
    for name, base in BASES.items():
        paths = list(_paths(base))
        paths += [(field,) for field in KINDS[_kind(name)].params_schema().fields if (field,) not in paths]
        found += [(name, path) for path in paths]
    return found


def _at(base: dict[str, Any], path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    params = copy.deepcopy(base)
    parent = params
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return params


@st.composite
def _foreign_digits_in(draw: st.DrawFn, text: str) -> str:
    """`text` with its ASCII digits (all, or one) written in another script, keeping their values where the
    script has them ('3:Kw202200' → '٣:Kw٢٠٢٢٠٠'; '²' has no siblings, so it stands for every digit): a
    parser that takes '٣' for 3 accepts the result, one that trusts isdigit() before int() crashes on it."""
    digit = draw(FOREIGN_DIGIT)
    value = unicodedata.decimal(digit, None)
    table = {
        ord(ascii_): digit if value is None else chr(ord(digit) - value + int(ascii_))
        for ascii_ in "0123456789"
    }
    spots = [index for index, char in enumerate(text) if char in "0123456789"]
    if not spots:
        index = draw(st.integers(0, len(text)))
        return text[:index] + digit + text[index:]
    if draw(st.booleans()):
        index = draw(st.sampled_from(spots))
        return text[:index] + text[index].translate(table) + text[index + 1 :]
    return text.translate(table)


@st.composite
def _hostile_for(draw: st.DrawFn, current: Any) -> tuple[Any, bool]:
    """(value, must be refused) to replace `current`: most often `current` in another script's digits
    ('0-100' → '٠-١٠٠', 6 → '۶'), else a hostile value of any type, or an odd but harmless one."""
    mutable = isinstance(current, str | int) and not isinstance(current, bool)
    # weights by repetition (a nested one_of would flatten, drowning the mutation among a dozen branches)
    choice = draw(
        st.sampled_from(["mutate", "mutate", "hostile", "odd"] if mutable else ["hostile"] * 3 + ["odd"])
    )
    if choice == "mutate":
        return draw(_foreign_digits_in(str(current))), True
    if choice == "hostile":
        return draw(st.one_of(HOSTILE_SCALAR, HOSTILE_CONTAINER)), True
    return draw(ODD), False


@functools.cache
def _hostile_params(name: str, path: tuple[Any, ...]) -> st.SearchStrategy[tuple[Any, bool]]:
    """(params, must be refused): BASES[name] with a hostile value at `path`."""
    base = BASES[name]
    current: Any = base
    for key in path:
        current = current.get(key) if isinstance(current, dict) else current[key]
    return _hostile_for(current).map(lambda drawn: (_at(base, path, drawn[0]), drawn[1]))


def _storable(messages: Any) -> bool:
    """PostgreSQL can keep them (a rejected batch item keeps its messages): no NUL, no lone surrogate."""
    if isinstance(messages, dict):
        return all(_storable(key) and _storable(value) for key, value in messages.items())
    if isinstance(messages, list):
        return all(_storable(item) for item in messages)
    if isinstance(messages, str):
        return "\x00" not in messages and not any("\ud800" <= char <= "\udfff" for char in messages)
    return True


def test_every_base_is_valid() -> None:
    for name, base in BASES.items():
        KINDS[_kind(name)].load_params(base)


@pytest.mark.parametrize(
    ("name", "path"),
    _kind_paths(),
    ids=lambda part: part if isinstance(part, str) else "/".join(map(str, part)) or "-",
)
@settings(FUZZ, max_examples=10)
@given(data=st.data())
def test_every_field_of_every_kind_refuses_hostile_values(
    name: str, path: tuple[Any, ...], data: Any
) -> None:
    """In process, so that every field of every kind gets ten hostile values in a few seconds."""
    params, must_refuse = data.draw(_hostile_params(name, path), label="params")
    try:
        loaded = KINDS[_kind(name)].load_params(params)
    except ValidationError as error:
        assert error.messages and _storable(error.messages), error.messages
        return
    assert not must_refuse, f"accepted as {loaded}"


@settings(FUZZ, max_examples=25)
@given(
    mode=st.sampled_from(["standard", "expert"]),
    sectors=st.lists(st.integers(1, 18), min_size=1, max_size=3),
    present=st.booleans(),
)
def test_planetx_facts_the_schema_accepts_fit_the_board(mode: str, sectors: list[int], present: bool) -> None:
    """Valid by the schema means the solver can set it up: sectors 13-18 of a standard board passed the
    schema, then failed with an IndexError in the worker."""
    import z3

    from puzzles.planetx.enumerate import Request
    from puzzles.planetx.solver import BoardModel

    facts = [{"sector": sector, "object": "comet", "present": present} for sector in sectors]
    try:
        params = KINDS["planetx.enumerate"].load_params({"mode": mode, "constraints": facts})
    except ValidationError as error:
        assert mode == "standard" and max(sectors) > 12, error.messages
        return
    request = Request.of(params)
    BoardModel(request.mode, z3.Context(), request.facts)


def _hostile_request() -> st.SearchStrategy[tuple[str, Any, bool]]:
    """(kind, params, must be refused) for any field of any kind."""
    return st.sampled_from(_kind_paths()).flatmap(
        lambda where: _hostile_params(*where).map(lambda drawn: (_kind(where[0]), *drawn))
    )


def _post(client, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    # json.dumps writes NaN and Infinity as JavaScript does, as a hostile client would send them
    return client.post(path, data=json.dumps(body), headers={**headers, "Content-Type": "application/json"})


@settings(FUZZ, max_examples=60)
@given(request=_hostile_request())
def test_hostile_params_are_422_for_a_job_and_a_rejected_item_in_a_batch(
    client,
    fuzz_headers: dict[str, str],
    request: tuple[str, Any, bool],
) -> None:
    kind, params, must_refuse = request
    # over the time limit's maximum: params that pass are a 422 on time_limit alone, and no job is made
    response = _post(client, "/jobs", {"kind": kind, "params": params, "time_limit": 10**9}, fuzz_headers)
    assert response.status_code == 422, response.get_json()
    errors = response.get_json()["errors"]
    assert "params" in errors if must_refuse else errors, errors
    if must_refuse and isinstance(params, dict):  # in a batch: rejected, its errors stored; the batch is made
        body = {"kind": kind, "items": [{"client_id": "hostile", "params": params}]}
        response = _post(client, "/batches", body, fuzz_headers)
        assert response.status_code == 202, response.get_json()
        (item,) = response.get_json()["items"]
        assert item["state"] == "rejected" and item["errors"]["params"], item


#: hostile query and body values: all can travel in a URL (a lone surrogate cannot be percent-encoded)
HOSTILE_TEXT = st.one_of(
    FOREIGN_NUMBER,
    st.sampled_from(["²", "٣", "１", "1٣", "¹2"]),
    WITH_NUL,
    LONG_TEXT,
    st.sampled_from(["Infinity", "-Infinity", "NaN", "1e308", "-1e308", "1" + "0" * 400, "-0", "-0.0"]),
    st.sampled_from(["1_0", " 1", "0x1", "1.5"]),
)
#: schemathesis sends bodies as strict JSON, without NaN or Infinity (the params test above sends those)
HOSTILE_JSON = st.one_of(HOSTILE_TEXT, HUGE, ODD)


def _hostile_query(context, query: dict[str, Any] | None) -> st.SearchStrategy[dict[str, Any]]:
    """Each declared query parameter as generated (or left out), or a hostile string or list of them."""
    query = dict(query or {})
    hostile = st.one_of(HOSTILE_TEXT, st.lists(HOSTILE_TEXT, min_size=1, max_size=2))
    choices = {name: st.one_of(hostile, st.just(query.get(name))) for name in _names(context.operation.query)}
    return st.fixed_dictionaries(choices).map(
        lambda drawn: {**query, **{name: value for name, value in drawn.items() if value is not None}}
    )


def _names(parameters: Any) -> list[str]:
    return [parameter.name for parameter in parameters]


def _hostile_body(context, body: Any) -> st.SearchStrategy[Any]:
    """An object body with each top-level field as generated or hostile."""
    if not isinstance(body, dict) or not body:
        return st.just(body)
    return st.fixed_dictionaries(
        {name: st.one_of(st.just(value), HOSTILE_JSON) for name, value in body.items()}
    )


@pytest.fixture
def hostile_api_schema(app, client, fuzz_headers):
    # a batch this client owns: its query args are read only once the batch is found ('²' as its cursor
    # was a 500 that a random batch id, a 404, never reached)
    created = client.post(
        "/batches", json={"items": [{"client_id": "a", "params": {}}]}, headers=fuzz_headers
    )
    batch_id = created.get_json()["id"]

    def map_path_parameters(context, path_parameters: dict[str, Any] | None) -> dict[str, Any] | None:
        if path_parameters and "batch_id" in path_parameters:
            return {**path_parameters, "batch_id": batch_id}
        return path_parameters

    hostile = schemathesis.openapi.from_wsgi("/openapi.json", app)
    hostile.hooks.register_hook_with_name(map_path_parameters, "map_path_parameters")
    hostile.hooks.register_hook_with_name(_hostile_query, "flatmap_query")
    hostile.hooks.register_hook_with_name(_hostile_body, "flatmap_body")
    return hostile


@hostile_schema.parametrize()
# generated cases only: the document's examples and boundary values (schemathesis' explicit phase) are the
# spec test's above, and only generated cases carry the hostile values of the hooks
@settings(FUZZ, max_examples=10, phases=[Phase.generate, Phase.shrink])
def test_hostile_query_and_body_values_are_4xx_never_5xx(case, fuzz_headers) -> None:
    response = case.call_and_validate(headers=fuzz_headers, excluded_checks=[checks.positive_data_acceptance])
    # no query parameter of this API takes anything but ASCII: another script's digit is never a number
    # ('٣' was read as 3 by ?limit= and by a batch's ?cursor=), a NUL never a character
    values = [value for values in (case.query or {}).values() for value in _as_list(values)]
    if any(isinstance(value, str) and not value.isascii() or "\x00" in str(value) for value in values):
        assert 400 <= response.status_code < 500, (case.query, response.status_code)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# -- schema-valid submits ------------------------------------------------------------------------------
#: what a 422 for a schema-valid submit may name, besides a kind's rules across its params' fields: a
#: callback_url whose host does not resolve to public addresses only (its description says so), an
#: Idempotency-Key already used with another body (the key's state, not the request's form), and, in a
#: batch, a client_id given twice (`items`: JSON Schema has no uniqueness by one property)
OUTSIDE_PARAMS = {"callback_url", "Idempotency-Key"}
NAMED_OUTSIDE_PARAMS = {"/jobs": OUTSIDE_PARAMS, "/batches": OUTSIDE_PARAMS | {"items"}}
submit_schema = schemathesis.pytest.from_fixture("submit_api_schema").include(
    method="POST", path=list(NAMED_OUTSIDE_PARAMS)
)


@pytest.fixture
def submit_api_schema(app):
    submits = schemathesis.openapi.from_wsgi("/openapi.json", app)
    # a NUL in any string is refused (`UNSTORABLE`, docs/api/openapi.md): a rule of every field, not named
    # per kind; the hostile values above send it everywhere
    submits.config.generation.update(modes=[GenerationMode.POSITIVE], allow_x00=False)
    # the schema's own examples carry callback URLs whose hosts would be resolved (map_body below does
    # not reach that phase); the examples are submitted as they are elsewhere (tests/api/test_openapi.py)
    submits.config.phases.update(phases=["fuzzing"])
    submits.hooks.register_hook_with_name(_without_callback, "map_body")
    return submits


def _without_callback(context, body: Any) -> Any:
    """A generated callback host is resolved (a named rule, tests/security has its cases): left out here,
    so that each example is the request's form alone, never a wait on DNS."""
    return {name: value for name, value in body.items() if name != "callback_url"}


def _names_a_rule(path: str, body: dict[str, Any], errors: dict[str, Any]) -> bool:
    """A 422's errors name only rules the document states: a kind's rules across fields (schemas.rules),
    and the named ones outside the params."""
    params = errors.get("params", {})
    kind = KINDS[body["kind"]] if path == "/jobs" else None
    named = NAMED_OUTSIDE_PARAMS[path] | ({"params"} if kind else set())
    return set(errors) <= named and (kind is None or set(params) <= rule_fields(kind.params_schema))


@submit_schema.parametrize()
@settings(FUZZ, max_examples=40)
def test_schema_valid_submits_are_accepted_but_for_a_named_rule(case, fuzz_headers) -> None:
    """Every submit the document calls valid is accepted (202), or refused (422) for a rule the document
    names: the narrow form of schemathesis.toml's allowance for these two operations."""
    response = case.call(headers=fuzz_headers)
    if response.status_code == 422:
        errors = response.json()["errors"]
        assert _names_a_rule(case.path, case.body, errors), (case.body, errors)
    else:
        assert response.status_code == 202, (case.body, response.status_code, response.text)
