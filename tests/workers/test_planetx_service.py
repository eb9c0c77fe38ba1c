"""planetx.enumerate through the service: real API, real worker processes, boards in PostgreSQL."""

import csv
import io
import json
import uuid

import pytest
from sqlalchemy import select

from api.extension import zolve
from puzzles.planetx.board import MODES, PLANET_X, decode, to_letters
from puzzles.planetx.rules import enumerate_boards
from services.messages import FINALIZE, RUN_SHARD, enqueue
from store import keys, rows
from store.models import RowBlock, Shard
from tests.store.test_tallies import run
from tests.support import new_job, shard_states, wait_until

STANDARD = {"kind": "planetx.enumerate", "params": {"mode": "standard"}}


def stored_codes(db, job_id: str) -> list[int]:
    with db.session() as session:
        return sorted(rows.keys_stored(session, uuid.UUID(job_id)).tolist())


@pytest.fixture(scope="module")
def standard_boards() -> list[int]:
    return sorted(enumerate_boards(MODES["standard"]))


@pytest.fixture(scope="module")
def standard_job(app, worker, make_key_module):
    """One standard enumeration, shared by the read-only tests below."""
    client, headers = app.test_client(), make_key_module()
    job = client.post("/jobs", json={**STANDARD, "fresh": True}, headers=headers).get_json()
    final = wait_until(
        lambda: (
            (j := client.get(f"/jobs/{job['id']}?wait=5", headers=headers).get_json())["state"]
            in ("succeeded", "failed", "cancelled")
            and j
        ),
        120,
        0,
        "the enumeration",
    )
    return final, headers


def test_standard_enumeration_stores_exactly_the_4446_boards(standard_job, db, standard_boards) -> None:
    job, _ = standard_job
    assert job["state"] == "succeeded", job
    assert job["result"]["count"] == 4446
    assert stored_codes(db, job["id"]) == standard_boards
    progress = job["progress"]
    assert progress["shards_done"] == progress["shards_total"] > 1 and progress["boards"] == 4446
    counts = [s["counts"]["planet_x"] for s in job["result"]["sectors"]]
    assert counts == [sum(1 for c in standard_boards if decode(c, 12)[i] == PLANET_X) for i in range(12)]


def _spans(db, job_id: uuid.UUID) -> list[tuple[int, int]]:
    with db.session() as session:
        spans = select(RowBlock.first_key, RowBlock.last_key).where(RowBlock.job_id == job_id)
        return [tuple(span) for span in session.execute(spans.order_by(RowBlock.first_key))]


def _merged(db, job_id: uuid.UUID) -> bool:
    spans = _spans(db, job_id)
    return bool(spans) and all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_the_boards_are_merged_into_one_run_after_the_success(standard_job, db, standard_boards) -> None:
    """The merge (store.rows.compact) runs after the job's success, which its client does not wait for."""
    job, _ = standard_job
    wait_until(lambda: _merged(db, uuid.UUID(job["id"])), 30, 0.1, "the blocks to be merged")
    assert len(_spans(db, uuid.UUID(job["id"]))) == 1, "4,446 boards are one block"
    assert stored_codes(db, job["id"]) == standard_boards


def test_a_finalize_delivered_again_after_the_success_merges_the_blocks(db, app, worker) -> None:
    """Its first delivery's worker died between the success and the merge: the blocks are merged when
    the finalize comes again (acks late), and nothing else is done twice."""
    with db.session() as session:
        owner = keys.create_key(session, name="merge after success").id
    job = new_job(db, owner, "planetx.enumerate", {"mode": "standard"})
    run(db, job.id, "succeeded")
    boards = sorted(enumerate_boards(MODES["standard"]))
    for first in range(6):  # a shard's block each, every one spanning nearly the whole key
        with db.session() as session:
            rows.copy_rows(session, job.id, [c for c in boards if c & 7 == first])
    assert len(_spans(db, job.id)) > 1 and not _merged(db, job.id)
    enqueue(zolve(app).celery, str(job.id), FINALIZE)
    wait_until(lambda: _merged(db, job.id), 30, 0.1, "the blocks to be merged")
    assert stored_codes(db, str(job.id)) == boards
    with db.session() as session:
        assert session.get(type(job), job.id).result == {"ok": 1}, "the result stays as it was"


def test_boards_page_with_keyset_cursor_and_filters(client, standard_job, standard_boards) -> None:
    job, headers = standard_job
    seen, cursor = [], None
    while True:
        url = f"/jobs/{job['id']}/boards?limit=1000" + (f"&cursor={cursor}" if cursor is not None else "")
        page = client.get(url, headers=headers).get_json()
        seen += [item["code"] for item in page["items"]]
        assert all(item["board"] == to_letters(item["code"], 12) for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == standard_boards
    x7 = client.get(f"/jobs/{job['id']}/boards?x=7&limit=1000", headers=headers).get_json()["items"]
    assert [i["code"] for i in x7] == [c for c in standard_boards if decode(c, 12)[6] == PLANET_X]
    both = client.get(f"/jobs/{job['id']}/boards?x=7&a=1&a=2&limit=1000", headers=headers).get_json()["items"]
    assert both and all(i["board"][6] == "X" and i["board"][:2] == "AA" for i in both)
    assert client.get(f"/jobs/{job['id']}/boards?x=19", headers=headers).status_code == 422
    # past a standard board's 12 sectors: before, `x=13` was an empty page and `e=13` every board
    for suffix, name in (("boards?x=13", "x"), ("boards?e=13&e=14&x=2", "e"), ("boards.csv?e=13", "e")):
        refused = client.get(f"/jobs/{job['id']}/{suffix}", headers=headers)
        assert refused.status_code == 422, (suffix, refused.data[:200])
        (said,) = refused.get_json()["errors"]["query"][name]
        assert said.startswith("standard boards have sectors 1 to 12: not 13"), said


def test_exports_stream_every_board(client, standard_job, standard_boards) -> None:
    """Boards rendered in bulk (Rows.fixed_text): byte for byte what Python's rendering of each row
    gives, whole and filtered."""
    job, headers = standard_job

    def export(suffix: str) -> tuple[str, str]:
        with client.get(f"/jobs/{job['id']}/{suffix}", headers=headers) as answer:  # frees its export slot
            assert answer.status_code == 200, answer.data[:300]
            return answer.mimetype, answer.data.decode()

    boards = {code: to_letters(code, 12) for code in standard_boards}
    mimetype, ndjson = export("boards.ndjson")
    assert mimetype == "application/x-ndjson"
    assert ndjson == "".join(json.dumps({"code": c, "board": b}) + "\n" for c, b in boards.items())
    _, exported = export("boards.csv")
    assert exported == "code,board\n" + "".join(f"{code},{board}\n" for code, board in boards.items())
    assert [int(r["code"]) for r in csv.DictReader(io.StringIO(exported))] == standard_boards
    in_seven = export("boards.csv?x=7")[1].splitlines()
    assert in_seven[1:] == [f"{code},{board}" for code, board in boards.items() if board[6] == "X"] != []


def test_boards_of_another_client_are_404(client, standard_job, make_key) -> None:
    job, _ = standard_job
    stranger = make_key()
    for suffix in ("boards", "boards.ndjson", "boards.csv"):
        assert client.get(f"/jobs/{job['id']}/{suffix}", headers=stranger).status_code == 404


def test_same_params_are_served_from_the_stored_enumeration_unless_fresh(
    client, standard_job, make_key
) -> None:
    job, owner = standard_job
    own = client.post("/jobs", json=STANDARD, headers=owner)
    assert own.status_code == 202 and own.headers["X-Zolve-Cache"] == "hit"
    other = make_key()
    response = client.post("/jobs", json=STANDARD, headers=other)
    cached = response.get_json()
    # another client's copy reads as fresh work (issue 37, item 9): served, but nothing says from where
    assert response.status_code == 202 and "X-Zolve-Cache" not in response.headers
    assert cached["id"] != job["id"] and cached["state"] == "succeeded"
    assert cached["result"] == job["result"]
    page = client.get(f"/jobs/{cached['id']}/boards?limit=5", headers=other).get_json()
    assert len(page["items"]) == 5
    fresh = client.post("/jobs", json={**STANDARD, "fresh": True}, headers=other)
    assert "X-Zolve-Cache" not in fresh.headers and fresh.get_json()["state"] == "queued"


def test_a_submit_with_an_idempotency_key_is_served_from_the_stored_enumeration_too(
    client, standard_job
) -> None:
    """The client library sends an Idempotency-Key with every submit: it gets the cache as curl does, and
    its retry gets the same copy back."""
    job, owner = standard_job
    keyed = {**owner, "Idempotency-Key": f"cache-{uuid.uuid4()}"}
    first = client.post("/jobs", json=STANDARD, headers=keyed)
    copy = first.get_json()  # succeeded at once: a copy (whose, the header says only of one's own)
    assert copy["id"] != job["id"] and copy["state"] == "succeeded" and copy["result"] == job["result"]
    again = client.post("/jobs", json=STANDARD, headers=keyed)
    assert again.status_code in (200, 202) and again.get_json()["id"] == copy["id"]
    other_body = client.post("/jobs", json={**STANDARD, "time_limit": 999}, headers=keyed)
    assert other_body.status_code == 422 and "Idempotency-Key" in other_body.get_json()["errors"]


def test_facts_through_the_service(client, auth, worker, wait_job, db) -> None:
    facts = [{"sector": 3, "object": "comet", "present": False}, {"sector": 5, "object": "planet_x"}]
    job = client.post(
        "/jobs",
        json={"kind": "planetx.enumerate", "params": {"mode": "standard", "constraints": facts}},
        headers=auth,
    ).get_json()
    final = wait_job(auth, job["id"], timeout=120)
    expected = sorted(enumerate_boards(MODES["standard"], [(3, 5, False), (5, PLANET_X, True)]))
    assert final["result"]["count"] == len(expected) > 0
    assert stored_codes(db, job["id"]) == expected


def test_bad_planetx_params_are_422(client, auth) -> None:
    for params in (
        {"mode": "galaxy"},
        {"mode": "expert", "constraints": [{"sector": 40, "object": "comet"}]},
        {"mode": "expert", "constraints": [{"sector": 2, "object": "moon"}]},
        {"mode": "expert", "shard_depth": 0},
    ):
        response = client.post("/jobs", json={"kind": "planetx.enumerate", "params": params}, headers=auth)
        assert response.status_code == 422 and "params" in response.get_json()["errors"]


def test_oversized_shards_split_themselves_and_the_count_stays_exact(
    client, auth, worker, wait_job, db
) -> None:
    params = {"mode": "standard", "shard_depth": 1, "max_shard_boards": 300}
    job = client.post("/jobs", json={"kind": "planetx.enumerate", "params": params}, headers=auth).get_json()
    final = wait_job(auth, job["id"], timeout=120)
    assert final["result"]["count"] == 4446 and len(stored_codes(db, job["id"])) == 4446
    states = shard_states(db, job["id"])
    assert states["split"] >= 5 and final["progress"]["shards_total"] == sum(states.values())


def test_a_duplicate_shard_message_is_a_no_op(standard_job, db, app, worker, standard_boards) -> None:
    job, _ = standard_job
    with db.session() as session:
        before = session.execute(
            select(Shard.id, Shard.attempts, Shard.finished_at).where(Shard.job_id == uuid.UUID(job["id"]))
        ).all()
    dropped = [f"shard {shard_id}: nothing to claim" for shard_id, _, _ in before]
    before_counts = worker.log_counts(dropped)
    celery = zolve(app).celery
    for shard_id, _, _ in before:
        enqueue(celery, str(shard_id), RUN_SHARD)
    wait_until(
        lambda: all(now > then for now, then in zip(worker.log_counts(dropped), before_counts, strict=True)),
        60,
        0.2,
        "every duplicate delivered and dropped",
    )
    with db.session() as session:
        after = session.execute(
            select(Shard.id, Shard.attempts, Shard.finished_at).where(Shard.job_id == uuid.UUID(job["id"]))
        ).all()
    assert sorted(after) == sorted(before), "a finished shard ran again"
    assert stored_codes(db, job["id"]) == standard_boards
