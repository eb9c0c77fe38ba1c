"""The Taiji and Mastermind kinds through the service: real API, worker process and PostgreSQL."""

import json

from puzzles.taiji.code import parse_code
from puzzles.taiji.rules import violations

HARD9 = "8:Sw0Sy0Sw0Jw0Jw00Jw+CJw+DY+CSw00Sw+FJw+CV0Jw0Sw4+CSw0Y0Iw0V+ISy+FY0Sw00Jw00Sw+CJw+DJw0"


def submit(client, headers, kind: str, params: dict):
    return client.post("/jobs", json={"kind": kind, "params": params}, headers=headers)


def test_taiji_solves_a_puzzle_code_with_a_checked_unique_answer(client, auth, worker, wait_job) -> None:
    response = submit(client, auth, "taiji.solve", {"code": HARD9})
    assert response.status_code == 202
    job = wait_job(auth, response.get_json()["id"], 120)
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert (result["status"], result["unique"], result["valid"]) == ("solved", True, True)
    assert violations(parse_code(HARD9), result["solution"]) == []  # checked here too, without Z3
    assert len(result["rendering"]) == 8 and set("".join(result["rendering"])) <= {"#", "."}


def test_taiji_grid_form_and_unsat(client, auth, worker, wait_job) -> None:
    lone_diamond = [[{"symbol": "diamond", "colour": "r"}, None, {}]]
    job = wait_job(auth, submit(client, auth, "taiji.solve", {"grid": lone_diamond}).get_json()["id"])
    assert job["state"] == "succeeded" and job["result"]["status"] == "unsat"
    assert job["result"]["solution"] is None


def test_taiji_malformed_input_is_a_field_level_422(client, auth) -> None:
    cases = [
        ({"code": "3:Kw202200Fw62Dw"}, "code"),  # 8 tiles do not fill rows of 3
        ({"code": "3:0T20"}, "code"),  # line symbols are not supported
        ({}, "_schema"),
        ({"code": "3:0", "grid": [[{}]]}, "_schema"),
        ({"grid": [[{"symbol": "dice", "value": 0}]]}, "grid"),
    ]
    for params, field in cases:
        response = submit(client, auth, "taiji.solve", params)
        assert response.status_code == 422, params
        assert field in response.get_json()["errors"]["params"], response.get_json()


def test_mastermind_guess_gives_a_consistent_guess_or_names_the_contradiction(
    client, auth, worker, wait_job
) -> None:
    history = [
        {"guess": [0, 0, 1, 1], "black": 1, "white": 0},
        {"guess": [2, 2, 3, 3], "black": 0, "white": 1},
    ]
    params = {"n": 4, "k": 6, "history": history}
    job = wait_job(auth, submit(client, auth, "mastermind.guess", params).get_json()["id"])
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert result["status"] == "ok" and len(result["guess"]) == 4 and result["remaining"] > 0
    contradiction = [
        {"guess": [0, 0, 0, 0], "black": 4, "white": 0},
        {"guess": [0, 0, 0, 0], "black": 0, "white": 0},
    ]
    job = wait_job(
        auth, submit(client, auth, "mastermind.guess", {**params, "history": contradiction}).get_json()["id"]
    )
    assert job["state"] == "succeeded" and job["result"]["status"] == "contradiction"
    assert job["result"]["error"]["code"] == 422 and job["result"]["error"]["entries"]


def test_mastermind_play_is_sharded_over_secrets(client, auth, worker, wait_job) -> None:
    params = {"n": 4, "k": 6, "secrets": {"sample": 40, "seed": 3}}
    job = wait_job(auth, submit(client, auth, "mastermind.play", params).get_json()["id"], 180)
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert result["games_count"] == 40 and result["unsolved"] == 0 and result["max_turns"] <= 6
    for game in result["games"]:
        assert game["guesses"][-1]["guess"] == game["secret"] and game["guesses"][-1]["black"] == 4
    assert job["progress"]["shards_done"] == job["progress"]["shards_total"] >= 1


def test_mastermind_bad_params_are_field_level_422(client, auth) -> None:
    cases = [
        ({"n": 4, "k": 6, "history": [{"guess": [0, 0, 1], "black": 0, "white": 0}]}, "history"),
        ({"n": 4, "k": 6, "history": [{"guess": [0, 0, 1, 9], "black": 0, "white": 0}]}, "history"),
        ({"n": 4, "k": 6, "history": [{"guess": [0, 0, 1, 1], "black": 3, "white": 2}]}, "history"),
        ({"n": 0, "k": 6}, "n"),
        ({"n": 4, "k": 6, "strategy": "telepathy"}, "strategy"),
    ]
    for params, field in cases:
        response = submit(client, auth, "mastermind.guess", params)
        assert response.status_code == 422, params
        assert field in json.dumps(response.get_json()["errors"]["params"]), response.get_json()
    too_many = submit(client, auth, "mastermind.play", {"n": 12, "k": 20, "secrets": "all"})
    assert too_many.status_code == 422 and "secrets" in too_many.get_json()["errors"]["params"]
