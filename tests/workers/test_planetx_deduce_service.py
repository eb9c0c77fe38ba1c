"""planetx.deduce and planetx.simulate through the service: real API, worker processes and PostgreSQL."""

import pytest

from puzzles.planetx.board import MODES, decode
from puzzles.planetx.rules import enumerate_boards
from tests.support import poll_job

OBSERVATIONS = [
    {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
    {"type": "target", "sector": 3, "seen": "empty"},
]


@pytest.fixture(scope="module")
def stored_standard(app, worker, make_key_module):
    """A stored standard enumeration, so deductions read it from PostgreSQL."""
    client, headers = app.test_client(), make_key_module()
    job = client.post(
        "/jobs", json={"kind": "planetx.enumerate", "params": {"mode": "standard"}}, headers=headers
    ).get_json()
    assert poll_job(client, headers, job["id"], 120)["state"] == "succeeded"
    return headers


def test_deduce_reads_the_stored_enumeration(client, stored_standard, wait_job) -> None:
    headers = stored_standard
    body = {"kind": "planetx.deduce", "params": {"mode": "standard", "observations": OBSERVATIONS}}
    response = client.post("/jobs", json=body, headers=headers)
    assert response.status_code == 202
    job = wait_job(headers, response.get_json()["id"])
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert result["source"] == "stored" and result["total_boards"] == 4446
    boards = [decode(c, 12) for c in enumerate_boards(MODES["standard"])]
    expected = [b for b in boards if sum(o == 4 for o in b[:6]) == 2 and b[2] in (0, 1)]
    assert result["boards"] == len(expected) and result["status"] == "ok"
    assert len(result["actions"]) == 10 and result["actions"][0]["bits_per_day"] > 0


def test_deduce_weighs_recorded_clues_on_the_stored_enumeration(client, stored_standard, wait_job) -> None:
    headers = stored_standard
    research = {"type": "clue", "relation": "within", "quantifier": "all", "distance": 2, "topic": "A"}
    research |= {"subject": "comet", "object": "asteroid"}
    conference = {"type": "clue", "relation": "adjacent", "quantifier": "some", "topic": "X1"}
    conference |= {"subject": "planet_x", "object": "asteroid"}
    params = {"mode": "standard", "observations": [research, conference]}
    params["topics"] = {"A": ["comet", "asteroid"]}
    results = {}
    for weigh in (True, False):
        body = {"kind": "planetx.deduce", "params": {**params, "weigh_clues": weigh}}
        job = wait_job(headers, client.post("/jobs", json=body, headers=headers).get_json()["id"])
        assert job["state"] == "succeeded", job
        results[weigh] = job["result"]
    assert results[True]["source"] == "stored" and results[True]["boards"] == results[False]["boards"] > 0
    assert results[True]["planet_x"] != results[False]["planet_x"]
    assert sum(c["probability"] for c in results[True]["planet_x"]) == pytest.approx(1)


def test_bad_observations_get_field_level_422(client, auth) -> None:
    cases = [
        ({"type": "survey", "object": "asteroid", "first": 1, "count": 2}, "last"),
        ({"type": "survey", "object": "planet_x", "first": 1, "last": 3, "count": 1}, "object"),
        ({"type": "target", "sector": 13, "seen": "empty"}, "sector"),
        (
            {
                "type": "clue",
                "relation": "opposite",
                "quantifier": "all",
                "subject": "planet_x",
                "object": "comet",
            },
            "quantifier",
        ),
        ({"type": "telepathy"}, "type"),
    ]
    for observation, field in cases:
        body = {"kind": "planetx.deduce", "params": {"mode": "standard", "observations": [observation]}}
        response = client.post("/jobs", json=body, headers=auth)
        assert response.status_code == 422, observation
        errors = response.get_json()["errors"]["params"]["observations"]["0"]
        assert field in errors, errors


def test_simulate_is_sharded_over_games(client, auth, worker, wait_job) -> None:
    params = {"mode": "standard", "games": 40, "games_per_shard": 10, "policy": "survey-only", "seed": 4}
    job = client.post("/jobs", json={"kind": "planetx.simulate", "params": params}, headers=auth).get_json()
    final = wait_job(auth, job["id"], 120)
    assert final["state"] == "succeeded", final
    result = final["result"]
    assert result["games"] == 40 and result["unfinished"] == 0 and 15 <= result["avg_days"] <= 45
    # four shards of ten games; a shard whose time slice runs out (a loaded machine) hands its rest on
    assert final["progress"]["shards_done"] == final["progress"]["shards_total"] >= 4


def test_a_simulation_deals_its_difficulty_and_clue_model_through_the_service(
    client, auth, worker, wait_job
) -> None:
    params = {"mode": "standard", "games": 6, "seed": 4, "difficulty": "beginner", "clue_model": "weighted"}
    response = client.post("/jobs", json={"kind": "planetx.simulate", "params": params}, headers=auth)
    assert response.status_code == 202
    job = wait_job(auth, response.get_json()["id"])
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert result["difficulty"] == "beginner" and result["clue_model"] == "weighted"
    assert result["clue_model_known"] is False and result["games"] == 6 and result["unfinished"] == 0
    assert all(len(game["starting_facts"]) == 8 for game in result["sample"])
    assert all(set(game["model_odds"]) == {"uniform", "weighted"} for game in result["sample"])
    refused = client.post(
        "/jobs",
        json={
            "kind": "planetx.deduce",
            "params": {
                "mode": "standard",
                "difficulty": "experienced",
                "starting_facts": [{"sector": 1, "object": "comet"}] * 5,
            },
        },
        headers=auth,
    )
    assert refused.status_code == 422
    assert refused.get_json()["errors"] == {
        "params": {"starting_facts": ["an experienced game deals 4 starting facts, not 5"]}
    }
