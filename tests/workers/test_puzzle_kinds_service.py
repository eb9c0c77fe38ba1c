"""The Taiji and Mastermind kinds through the service: real API, worker process and PostgreSQL."""

from puzzles.taiji.code import parse_code
from puzzles.taiji.rules import violations

HARD9 = "8:Sw0Sy0Sw0Jw0Jw00Jw+CJw+DY+CSw00Sw+FJw+CV0Jw0Sw4+CSw0Y0Iw0V+ISy+FY0Sw00Jw00Sw+CJw+DJw0"


def submit(client, headers, kind: str, params: dict):  # noqa: ANN001, ANN201
    return client.post("/jobs", json={"kind": kind, "params": params}, headers=headers)


def test_taiji_solves_a_puzzle_code_with_a_checked_unique_answer(client, auth, worker, wait_job) -> None:  # noqa: ANN001
    response = submit(client, auth, "taiji.solve", {"code": HARD9})
    assert response.status_code == 202
    job = wait_job(auth, response.get_json()["id"], 120)
    assert job["state"] == "succeeded", job
    result = job["result"]
    assert (result["status"], result["unique"], result["valid"]) == ("solved", True, True)
    assert violations(parse_code(HARD9), result["solution"]) == []  # checked here too, without Z3
    assert len(result["rendering"]) == 8 and set("".join(result["rendering"])) <= {"#", "."}


def test_taiji_grid_form_and_unsat(client, auth, worker, wait_job) -> None:  # noqa: ANN001
    lone_diamond = [[{"symbol": "diamond", "colour": "r"}, None, {}]]
    job = wait_job(auth, submit(client, auth, "taiji.solve", {"grid": lone_diamond}).get_json()["id"])
    assert job["state"] == "succeeded" and job["result"]["status"] == "unsat"
    assert job["result"]["solution"] is None


def test_taiji_malformed_input_is_a_field_level_422(client, auth) -> None:  # noqa: ANN001
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
