"""Rate limits per API key: 429 with Retry-After and a JSON body, counted in Redis across processes."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from api.limits import storage_uri
from tests.api.test_admin import log_in

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


@pytest.fixture
def limited_app(make_app):
    return make_app(rate_limit="8 per minute", submit_rate_limit="3 per minute")


def test_a_key_over_its_limit_gets_429_with_retry_after(limited_app, make_key) -> None:
    client, alice, bob = limited_app.test_client(), make_key(), make_key()
    statuses = [client.get("/jobs", headers=alice).status_code for _ in range(10)]
    assert statuses[:8] == [200] * 8 and statuses[8:] == [429, 429]
    refused = client.get("/jobs", headers=alice)
    assert refused.status_code == 429
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    body = refused.get_json()
    assert body["code"] == 429 and "8 per 1 minute" in body["message"]
    assert client.get("/jobs", headers=bob).status_code == 200  # another key has its own budget
    assert client.get("/health").status_code == 200  # probes are never limited


def test_the_edges_reruns_of_a_request_cost_no_more_budget(limited_app, make_key) -> None:
    """A long-poll under the edge runs again at each wake-up, the same request (the same Rerun in its
    environ, core.waiting): only its first run draws on its client's budget."""
    from core.waiting import RERUN, Rerun

    client, erin = limited_app.test_client(), make_key()
    one_request = {RERUN: Rerun()}
    runs = [client.get("/jobs", headers=erin, environ_base=one_request).status_code for _ in range(12)]
    assert runs == [200] * 12
    statuses = [client.get("/jobs", headers=erin).status_code for _ in range(8)]
    assert statuses == [200] * 7 + [429]  # the 12 runs cost one of the 8


def test_submits_have_their_own_tighter_limit(limited_app, make_key) -> None:
    client, carol = limited_app.test_client(), make_key()
    statuses = [client.post("/jobs", json=DICE, headers=carol).status_code for _ in range(4)]
    assert statuses == [202, 202, 202, 429]
    assert client.get("/jobs", headers=carol).status_code == 200  # reading still works


def test_the_limit_is_shared_by_every_api_process(make_app, make_key) -> None:
    first, second = (make_app(rate_limit="5 per minute").test_client() for _ in range(2))
    dave = make_key()
    assert [first.get("/jobs", headers=dave).status_code for _ in range(3)] == [200] * 3
    assert [second.get("/jobs", headers=dave).status_code for _ in range(3)] == [200, 200, 429]


def test_unix_socket_urls_are_spelled_for_the_limits_library() -> None:
    assert storage_uri("redis+socket:///tmp/r.sock") == "redis+unix:///tmp/r.sock"
    assert storage_uri("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_unknown_tokens_share_their_address_budget_instead_of_a_bucket_each(limited_app) -> None:
    client = limited_app.test_client()
    address = {"REMOTE_ADDR": "192.0.2.7"}
    statuses = [
        client.get(
            "/jobs", headers={"Authorization": f"Bearer zk_{uuid.uuid4().hex}"}, environ_base=address
        ).status_code
        for _ in range(10)
    ]
    assert statuses == [401] * 8 + [429] * 2
    other = client.get("/jobs", environ_base={"REMOTE_ADDR": "192.0.2.8"})
    assert other.status_code == 401, "another address has its own budget"


def test_a_batch_draws_on_the_submit_budget_item_by_item(limited_app, make_key) -> None:
    client, erin = limited_app.test_client(), make_key()
    items = [{"client_id": str(n), "params": DICE["params"]} for n in range(2)]
    assert client.post("/batches", json={"kind": "dice", "items": items}, headers=erin).status_code == 202
    assert client.post("/jobs", json=DICE, headers=erin).status_code == 202
    refused = client.post("/jobs", json=DICE, headers=erin)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0

    frank = make_key()
    assert client.post("/jobs", json=DICE, headers=frank).status_code == 202
    many = [{"client_id": str(n), "params": DICE["params"]} for n in range(4)]
    refused = client.post("/batches", json={"kind": "dice", "items": many}, headers=frank)
    assert refused.status_code == 429, "a batch larger than the budget needs all of it unspent"
    assert client.post("/jobs", json=DICE, headers=frank).status_code == 202, "a refused batch costs nothing"

    # a batch larger than the whole budget (500 items under 300 a minute) is not refused for ever
    george = make_key()
    assert client.post("/batches", json={"kind": "dice", "items": many}, headers=george).status_code == 202
    assert client.post("/jobs", json=DICE, headers=george).status_code == 429, "it spent the whole budget"


def test_concurrent_submits_never_spend_more_than_the_budget(limited_app, make_key) -> None:
    """Checked and charged in one step (before: checked as each came and charged once answered, so the
    security audit's 8 concurrent batches of 300 items were all taken against a budget of 300)."""
    ivan, start = make_key(), threading.Barrier(8)
    batch = {"kind": "dice", "items": [{"client_id": str(n), "params": DICE["params"]} for n in range(2)]}

    def submit(n: int) -> int:
        client = limited_app.test_client()
        start.wait()
        if n % 2:
            return client.post("/jobs", json=DICE, headers=ivan).status_code
        return client.post("/batches", json=batch, headers=ivan).status_code

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(submit, range(8)))
    spent = sum(2 if n % 2 == 0 else 1 for n, status in enumerate(statuses) if status == 202)
    assert set(statuses) == {202, 429} and 2 <= spent <= 3, statuses


def test_an_invalid_submit_is_its_422_whatever_is_left_of_the_budget(limited_app, make_key) -> None:
    """Validated before the budget is charged: a batch of 501 items is told it is too big, not 429."""
    client, hana = limited_app.test_client(), make_key()
    two = [{"client_id": str(n), "params": DICE["params"]} for n in range(2)]
    assert client.post("/batches", json={"kind": "dice", "items": two}, headers=hana).status_code == 202
    too_many = [{"client_id": str(n), "params": DICE["params"]} for n in range(501)]
    strings = {"kind": "dice", "params": {"dice": "3", "faces": 4}}
    for spent in ("part", "all"):
        refused = client.post("/batches", json={"kind": "dice", "items": too_many}, headers=hana)
        assert refused.status_code == 422 and "items" in refused.get_json()["errors"], (spent, refused.data)
        refused = client.post("/jobs", json=strings, headers=hana)
        assert refused.status_code == 422 and "params" in refused.get_json()["errors"], (spent, refused.data)
        assert client.post("/jobs", json={"params": {}}, headers=hana).status_code == 422
        assert client.post("/jobs", json=DICE, headers=hana).status_code == (202 if spent == "part" else 429)


def test_a_key_has_at_most_its_quota_of_unfinished_jobs(make_app, make_key) -> None:
    import tests.plugins  # noqa: F401 - test.sharded

    client, grace = make_app(max_unfinished_per_key=2).test_client(), make_key()
    slow = {"kind": "test.sharded", "params": {"plan_seconds": 5}}
    assert [client.post("/jobs", json=slow, headers=grace).status_code for _ in range(2)] == [202, 202]
    refused = client.post("/jobs", json=DICE, headers=grace)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "10"
    assert "too many unfinished jobs" in refused.get_json()["message"]
    batch = {"kind": "dice", "items": [{"client_id": "x", "params": DICE["params"]}]}
    assert client.post("/batches", json=batch, headers=grace).status_code == 429
    assert client.post("/jobs", json=DICE, headers=make_key()).status_code == 202, "another key's own quota"


def test_an_idempotency_keys_replays_cost_no_submit_budget(make_app, make_key) -> None:
    """A client retrying after a dropped answer spent its budget on replays that made nothing (the
    fairness audit)."""
    client, ivy = make_app(submit_rate_limit="3 per minute").test_client(), make_key()
    again = {**ivy, "Idempotency-Key": f"once-{uuid.uuid4()}"}
    first = client.post("/jobs", json=DICE, headers=again).get_json()["id"]
    for _ in range(5):
        replayed = client.post("/jobs", json=DICE, headers=again)
        assert replayed.status_code == 202 and replayed.get_json()["id"] == first
        assert replayed.headers["Idempotent-Replayed"] == "true"
    assert [client.post("/jobs", json=DICE, headers=ivy).status_code for _ in range(2)] == [202, 202]
    refused = client.post("/jobs", json=DICE, headers=ivy)
    said = refused.get_json()["message"]
    assert refused.status_code == 429 and said.startswith(
        "too many submits for this key: at most 3 per minute"
    )


def test_a_batch_larger_than_the_whole_quota_is_a_422(make_app, make_key) -> None:
    """No wait makes room for it: before, a 429 that said to retry once some had finished."""
    client, jo = make_app(max_unfinished_per_key=2).test_client(), make_key()
    items = [{"client_id": str(faces), "params": {"dice": 3, "faces": faces}} for faces in (4, 5, 6)]
    refused = client.post("/batches", json={"kind": "dice", "items": items}, headers=jo)
    assert refused.status_code == 422, refused.get_json()
    assert refused.get_json()["errors"]["items"] == [
        "makes 3 jobs; this key may have at most 2 unfinished: split it"
    ]
    same = [{"client_id": str(n), "params": DICE["params"]} for n in range(3)]
    assert client.post("/batches", json={"kind": "dice", "items": same}, headers=jo).status_code == 202, (
        "one job"
    )


def test_a_submit_loads_its_params_once_under_the_submit_limit(limited_app, make_key, monkeypatch) -> None:
    """The limit's check (is this submit refused? then it is free) loads the params, and the view takes
    them instead of loading them again; a body the check refuses is still the view's 422."""
    from kinds.base import Kind

    loads, original = [], Kind.load_params
    monkeypatch.setattr(Kind, "load_params", lambda kind, raw: loads.append(raw) or original(kind, raw))
    client, erin = limited_app.test_client(), make_key()
    assert client.post("/jobs", json=DICE, headers=erin).status_code == 202
    assert loads == [DICE["params"]]
    bad = {"kind": "dice", "params": {"dice": 0, "faces": 4}}
    assert client.post("/jobs", json=bad, headers=erin).status_code == 422


def test_the_limiters_request_hook_is_dropped_only_on_a_release_known_to_allow_it(limited_app) -> None:
    """A canary for the one private part of Flask-Limiter the API touches (api.limits._drop_request_hook):
    the installed release is one the guard lets drop the hook, the hook is gone from the app, and the
    submit limit still holds without it (test_submits_have_their_own_tighter_limit). A new release fails
    here first: check that its before-request hook still applies only default and application limits,
    then widen HOOK_CHECKS_ONLY_APP_LIMITS."""
    import flask_limiter
    from packaging.version import Version

    from api.extension import zolve
    from api.limits import HOOK_CHECKS_ONLY_APP_LIMITS

    assert Version(flask_limiter.__version__) in HOOK_CHECKS_ONLY_APP_LIMITS
    with limited_app.app_context():
        limiter = zolve(limited_app).limiter
    assert limiter is not None
    hooks = limited_app.before_request_funcs[None]
    assert all(getattr(hook, "__self__", None) is not limiter for hook in hooks)


def test_a_verified_key_tells_the_edge_its_weight_and_a_bad_one_tells_nothing(client, db) -> None:
    """The edge's turns share an address's time by the keys' weights; the app is what knows a key: it
    says the weight of each credential it verifies (CLIENT_WEIGHT, which the edge puts in the environ)."""
    from core.waiting import CLIENT_WEIGHT
    from store import keys

    with db.session() as session:
        heavy = keys.create_key(session, name="heavy", weight=3).key
    said: list[float] = []
    environ = {CLIENT_WEIGHT: said.append}
    answer = client.get("/jobs", headers={"Authorization": f"Bearer {heavy}"}, environ_base=environ)
    assert answer.status_code == 200 and said == [3.0]
    refused = client.get("/jobs", headers={"Authorization": "Bearer zk_" + "n" * 40}, environ_base=environ)
    assert refused.status_code == 401 and said == [3.0]


def test_a_dashboard_session_draws_on_its_keys_budget_unless_an_admins(limited_app, make_key) -> None:
    """Before: any key signed in to the dashboard skipped the request budget (the security audit's
    progress polls of one client key, all 200 past its budget)."""
    for headers, limited in ((make_key(), True), (make_key(admin=True), False)):
        browser = limited_app.test_client()
        assert log_in(browser, headers).status_code == 302
        statuses = [browser.get("/admin/jobs").status_code for _ in range(10)]
        assert (429 in statuses) is limited, statuses
        if limited:
            assert browser.get("/jobs", headers=headers).status_code == 429, "one budget, session or Bearer"
