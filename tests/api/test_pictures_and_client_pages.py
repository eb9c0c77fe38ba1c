"""Pictures over the API and the dashboard's pages for clients (Flask test client, real PostgreSQL and the
real worker): a picture is the owner's only and exists once there is a result; the new-job form, the batch
pages and exports, and the Planet X note sheet, each checked through what it made."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import uuid

import pytest

from kinds import KINDS
from kinds.planetx.notes import observation_text
from tests.api.test_admin import _stored_job, csrf_token, log_in
from tests.pictures.test_pictures import TAIJI, lit_tiles, parse, titles
from tests.support import wait_until

SVG = "{http://www.w3.org/2000/svg}"


def signed_in(app, headers: dict[str, str]):
    client = app.test_client()
    assert log_in(client, headers).status_code == 302
    return client


def form(client, path: str, data: dict[str, str]):
    return client.post(
        path, data={**data, "csrf_token": csrf_token(client, path if "new" in path else "/admin/jobs")}
    )


# -- GET /jobs/{id}/picture.svg -------------------------------------------------------------------
def test_a_picture_is_409_until_there_is_a_result_and_only_for_its_owner(
    client, db, make_key, worker, wait_job
) -> None:
    owner, other, admin = make_key(), make_key(), make_key(admin=True)
    queued = _stored_job(db, owner, state="queued")
    response = client.get(f"/jobs/{queued}/picture.svg", headers=owner)
    said = response.get_json()["message"]
    assert response.status_code == 409 and said == "the job is queued: it has no result to draw yet", said
    assert client.get(f"/jobs/{queued}/picture.svg", headers=other).status_code == 404

    puzzle = TAIJI["SOLV0"]
    job_id = client.post(
        "/jobs", json={"kind": "taiji.solve", "params": {"code": puzzle["code"]}}, headers=owner
    )
    job = wait_job(owner, job_id.get_json()["id"])
    assert job["state"] == "succeeded"
    response = client.get(f"/jobs/{job['id']}/picture.svg", headers=owner)
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert "default-src 'none'" in response.headers["Content-Security-Policy"]
    solution = job["result"]["solution"]
    assert lit_tiles(parse(response.get_data(as_text=True))) == {
        (r, c): v for r, row in enumerate(solution) for c, v in enumerate(row)
    }
    bytes_only = {**owner, "Accept": "application/octet-stream"}
    as_bytes = client.get(f"/jobs/{job['id']}/picture.svg", headers=bytes_only)
    assert as_bytes.mimetype == "application/octet-stream" and as_bytes.data == response.data
    either = {**owner, "Accept": "image/svg+xml, application/octet-stream;q=0.5"}
    assert client.get(f"/jobs/{job['id']}/picture.svg", headers=either).mimetype == "image/svg+xml"
    assert client.get(f"/jobs/{job['id']}/picture.svg", headers=other).status_code == 404
    assert client.get(f"/jobs/{job['id']}/picture.svg", headers=admin).status_code == 200
    assert client.get(f"/jobs/{uuid.uuid4()}/picture.svg", headers=owner).status_code == 404


def test_a_deductions_picture_carries_its_probabilities(client, auth, worker, wait_job) -> None:
    """A comet seen in sector 3: that band is certain, and every band is the result's own figure."""
    params = {"mode": "standard", "observations": [{"type": "sector", "sector": 3, "object": "comet"}]}
    submitted = client.post("/jobs", json={"kind": "planetx.deduce", "params": params}, headers=auth)
    job = wait_job(auth, submitted.get_json()["id"])
    root = parse(client.get(f"/jobs/{job['id']}/picture.svg", headers=auth).get_data(as_text=True))
    drawn = {
        (int(sector.get("data-sector")), band.get("data-object")): float(band.get("data-p"))
        for sector in root.iter(f"{SVG}g")
        if sector.get("data-sector")
        for band in sector
        if band.get("data-object")
    }
    expected = {
        (s["sector"], name): round(p, 4)
        for s in job["result"]["sectors"]
        for name, p in s["probabilities"].items()
    }
    assert drawn == expected and drawn[(3, "comet")] == 1.0
    assert "sector 3 · comet 100.0%" in titles(root)


def test_the_picture_is_in_the_openapi_spec(client) -> None:
    operation = client.get("/openapi.json").get_json()["paths"]["/jobs/{job_id}/picture.svg"]["get"]
    assert "image/svg+xml" in operation["responses"]["200"]["content"]
    assert "404" in operation["responses"] and "409" in operation["responses"]


# -- the new-job form -----------------------------------------------------------------------------
def test_the_new_job_form_starts_from_an_example_and_shows_field_errors_inline(app, make_key) -> None:
    web = signed_in(app, make_key())
    page = html.unescape(web.get("/admin/new/mastermind.guess").get_data(as_text=True))
    assert '"history": [' in page and '"n": 4' in page
    token = csrf_token(web, "/admin/new/dice")
    bad = web.post("/admin/new/dice", data={"params": '{"dice": 30}', "csrf_token": token})
    text = html.unescape(bad.get_data(as_text=True))
    assert (
        bad.status_code == 422 and "<code>params.dice</code>" in text and "<code>params.faces</code>" in text
    )
    assert "Missing data for required field." in text and '{"dice": 30}' in text, "the text is kept"
    not_json = web.post("/admin/new/dice", data={"params": "{dice", "csrf_token": token})
    assert not_json.status_code == 422 and "not JSON" in not_json.get_data(as_text=True)
    limit = web.post("/admin/new/dice", data={"params": "{}", "time_limit": "soon", "csrf_token": token})
    assert limit.status_code == 422 and "<code>time_limit</code>" in limit.get_data(as_text=True)
    timed = {"params": '{"dice": 3, "faces": 4}', "time_limit": "90", "csrf_token": token}
    assert web.post("/admin/new/dice", data=timed).status_code == 302  # the field's text is a number
    good = web.post("/admin/new/dice", data={"params": '{"dice": 3, "faces": 4}', "csrf_token": token})
    assert good.status_code == 302 and re.fullmatch(r"/admin/jobs/[0-9a-f-]{36}", good.headers["Location"])


# -- batches --------------------------------------------------------------------------------------
def test_batch_pages_and_exports_show_the_owners_batch_only(app, client, make_key, worker) -> None:
    owner, other = make_key(), make_key()
    items = [
        {"client_id": "three", "params": {"dice": 3, "faces": 4}},
        {"client_id": "same", "params": {"dice": 3, "faces": 4}},
        {"client_id": "bad", "params": {"dice": 99, "faces": 4}},
    ]
    batch = client.post("/batches", json={"kind": "dice", "items": items}, headers=owner).get_json()
    wait_until(
        lambda: client.get(f"/batches/{batch['id']}", headers=owner).get_json()["done"], 60, what="batch"
    )
    web = signed_in(app, owner)
    assert batch["id"] in web.get("/admin/batches").get_data(as_text=True)
    page = web.get(f"/admin/batches/{batch['id']}").get_data(as_text=True)
    assert "<strong>done</strong>" in page and 'data-item="bad"' in page and "hx-trigger" not in page
    assert page.count("/picture.svg") == 2, "a picture per solved item"
    assert "<code>params.dice</code>: Must be greater" in page, "a rejected item's errors by field"

    lines = [
        json.loads(line)
        for line in web.get(f"/admin/batches/{batch['id']}/results.ndjson")
        .get_data(as_text=True)
        .splitlines()
    ]
    assert [(i["client_id"], i["state"]) for i in lines] == [
        ("three", "succeeded"),
        ("same", "succeeded"),
        ("bad", "rejected"),
    ]
    assert (
        lines[0]["result"]["dice"]
        and lines[0]["job_id"] == lines[1]["job_id"]
        and "dice" in lines[2]["errors"]["params"]
    )
    rows = list(
        csv.DictReader(
            io.StringIO(web.get(f"/admin/batches/{batch['id']}/results.csv").get_data(as_text=True))
        )
    )
    assert [r["client_id"] for r in rows] == ["three", "same", "bad"] and json.loads(
        rows[0]["result"]
    ) == lines[0]["result"]

    stranger = signed_in(app, other)
    assert batch["id"] not in stranger.get("/admin/batches").get_data(as_text=True)
    assert stranger.get(f"/admin/batches/{batch['id']}").status_code == 404
    assert stranger.get(f"/admin/batches/{batch['id']}/results.csv").status_code == 404


# -- the Planet X note sheet ----------------------------------------------------------------------
def _sheet(web, path: str) -> str:
    """The sheet once its deduction is final (its live block stops polling)."""
    return wait_until(
        lambda: (
            (text := web.get(path).get_data(as_text=True)) and 'id="sheet-live" hx-get' not in text and text
        ),
        60,
        what="the deduction",
    )


def test_the_dashboards_menu_leads_to_each_kinds_own_pages(app, make_key) -> None:
    """Planet X brings its note sheet through its hook (Kind.pages); the dashboard mounts it and links
    it from every page's menu."""
    web = signed_in(app, make_key())
    menu = web.get("/admin/jobs").get_data(as_text=True).split("<nav>")[1].split("</nav>")[0]
    assert '<a href="/admin/planetx/notes">Planet X notes</a>' in menu
    assert KINDS["planetx.deduce"].pages.blueprint == "kinds.planetx.notes:blueprint"
    assert web.get("/admin/planetx/notes").status_code == 200
    assert app.test_client().get("/admin/planetx/notes").status_code == 302  # signed out: to the login


def test_the_note_sheet_deduces_after_each_entry_and_shows_errors_inline(app, make_key, worker) -> None:
    web = signed_in(app, make_key())
    token = csrf_token(web, "/admin/planetx/notes")
    started = web.post(
        "/admin/planetx/notes", data={"mode": "standard", "sky_start": "1", "csrf_token": token}
    )
    assert started.status_code == 302
    first = _sheet(web, started.headers["Location"])
    assert "4,446 of 4,446 boards fit" in first and 'id="recommendation"' in first

    survey = {
        "entry": "survey",
        "object": "comet",
        "first": "1",
        "last": "6",
        "count": "0",
        "csrf_token": token,
    }
    after = web.post(started.headers["Location"], data=survey)
    assert after.status_code == 302 and after.headers["Location"] != started.headers["Location"]
    second = _sheet(web, after.headers["Location"])
    assert "of 4,446 boards fit" in second and "4,446 of 4,446" not in second
    assert "survey comet 1–6: none" in second  # as a player reads it, the JSON in its tooltip
    assert """title='{"count": 0, "first": 1, "last": 6, "object": "comet", "type": "survey"}'""" in second

    refused = web.post(
        after.headers["Location"],
        data={"entry": "target", "sector": "13", "seen": "comet", "csrf_token": token},
    )
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "params.observations.1.sector" in text and "sectors 1 to 12" in text

    theory = {"entry": "theory", "object": "planet_x", "sector": "7", "csrf_token": token}
    assert web.post(after.headers["Location"], data=theory).status_code == 302
    assert "Planet X in sector 7" in web.get(after.headers["Location"]).get_data(as_text=True)
    for sector in ("٣", "13", "99999999"):  # non-ASCII digits are no numbers; a standard board has 12
        odd = {"entry": "theory", "forget": "²", "sector": sector, "object": "comet", "csrf_token": token}
        refused = web.post(after.headers["Location"], data=odd)
        assert refused.status_code == 422 and "from 1 to 12 on this board" in refused.get_data(as_text=True)
    # a genius sheet has no starting-fact form: a refused one says why at the top
    fact = {"entry": "starting", "sector": "40", "object": "comet", "csrf_token": token}
    refused = web.post(after.headers["Location"], data=fact)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and 'id="entry-errors"' in text and "starting_facts" in text
    removed = web.post(after.headers["Location"], data={"entry": "remove", "index": "0", "csrf_token": token})
    assert "4,446 of 4,446 boards fit" in _sheet(web, removed.headers["Location"])


def test_the_note_sheet_takes_the_starting_facts_of_its_difficulty(app, make_key, worker) -> None:
    web = signed_in(app, make_key())
    token = csrf_token(web, "/admin/planetx/notes")
    form = {"mode": "standard", "sky_start": "1", "difficulty": "experienced", "csrf_token": token}
    started = web.post("/admin/planetx/notes", data=form)
    first = _sheet(web, started.headers["Location"])
    assert "experienced: 0 of 4" in first and "4,446 of 4,446 boards fit" in first
    sheet = started.headers["Location"]
    dealt = [("2", "comet"), ("3", "comet"), ("5", "asteroid"), ("7", "gas_cloud")]
    for sector, obj in dealt:
        fact = {"entry": "starting", "sector": sector, "object": obj, "csrf_token": token}
        sheet = web.post(sheet, data=fact).headers["Location"]
    page = _sheet(web, sheet)
    assert "experienced: 4 of 4" in page and "sector 7: no gas cloud" in page
    assert "4,446 of 4,446" not in page and "of 4,446 boards fit" in page
    fifth = {"entry": "starting", "sector": "11", "object": "asteroid", "csrf_token": token}
    refused = web.post(sheet, data=fifth)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "deals 4 starting facts, not 5" in text
    removed = web.post(sheet, data={"entry": "remove_starting", "index": "3", "csrf_token": token})
    assert "experienced: 3 of 4" in _sheet(web, removed.headers["Location"])


def test_the_note_sheet_takes_the_research_topics_and_a_clues_topic(app, client, make_key, worker) -> None:
    """Topics declared on the start form go to deduce, which ranks their research; a research clue keeps its
    letter (so it is weighed, and its topic is not offered again); right after research none is offered;
    the topics can be declared anew."""
    owner = make_key()
    web = signed_in(app, owner)
    token = csrf_token(web, "/admin/planetx/notes")
    pairs = {"A": ["comet", "asteroid"], "B": ["gas_cloud", "comet"]}
    declared = {
        f"topic_{letter}_{end}": obj
        for letter, pair in pairs.items()
        for end, obj in zip(("subject", "other"), pair, strict=True)
    }
    started = web.post("/admin/planetx/notes", data={"mode": "standard", "csrf_token": token, **declared})
    assert started.status_code == 302
    assert _params(client, owner, started.headers["Location"])["topics"] == pairs
    first = _sheet(web, started.headers["Location"])
    assert "research A: " in _actions(first) and "research B: " in _actions(first)

    clue = {
        "entry": "clue",
        "relation": "adjacent",
        "quantifier": "none",
        "subject": "gas_cloud",
        "object": "comet",
        "topic": "B",
        "csrf_token": token,
    }
    after = web.post(started.headers["Location"], data=clue)
    params = _params(client, owner, after.headers["Location"])
    assert params["topics"] == pairs
    assert params["observations"] == [
        {
            "type": "clue",
            "relation": "adjacent",
            "quantifier": "none",
            "subject": "gas_cloud",
            "object": "comet",
            "topic": "B",
        }
    ]
    second = _sheet(web, after.headers["Location"])
    assert "research B: no gas cloud is adjacent to a comet" in second
    assert params["last_action_research"] is True  # a research clue was the last thing done
    assert "research " not in _actions(second)  # never twice in a row
    survey = {"entry": "survey", "object": "asteroid", "first": "1", "last": "3", "count": "0"}
    after = web.post(after.headers["Location"], data={**survey, "csrf_token": token})
    assert _params(client, owner, after.headers["Location"])["last_action_research"] is False
    third = _actions(_sheet(web, after.headers["Location"]))
    assert "research A: " in third and "research B: " not in third  # B is researched
    settings = {"entry": "settings", "sky_start": "1", "targets_used": "0", "last_action_research": "yes"}
    after = web.post(after.headers["Location"], data={**settings, "csrf_token": token})
    assert _params(client, owner, after.headers["Location"])["last_action_research"] is True
    assert "research " not in _actions(_sheet(web, after.headers["Location"]))  # never twice in a row

    anew = {
        "entry": "topics",
        "topic_C_subject": "dwarf_planet",
        "topic_C_other": "dwarf_planet",
        "csrf_token": token,
    }
    redeclared = web.post(after.headers["Location"], data=anew)
    params = _params(client, owner, redeclared.headers["Location"])
    assert params["topics"] == {"C": ["dwarf_planet", "dwarf_planet"]} and len(params["observations"]) == 2


def test_the_note_sheet_shows_a_refused_topic_at_its_field(app, make_key, worker) -> None:
    """Half a pair, an object no topic is about, a topic letter the game has not: each a 422 that says so
    in the form it came from."""
    web = signed_in(app, make_key())
    token = csrf_token(web, "/admin/planetx/notes")
    half = {"mode": "standard", "topic_A_subject": "comet", "csrf_token": token}
    refused = web.post("/admin/planetx/notes", data=half)
    text = html.unescape(refused.get_data(as_text=True))
    assert refused.status_code == 422 and "params.topics.A.value" in text and "other object is one of" in text
    assert '<option value="comet" selected>' in text  # what was chosen stays

    started = web.post("/admin/planetx/notes", data={"mode": "standard", "csrf_token": token})
    sheet = started.headers["Location"]
    planet = {"entry": "topics", "topic_A_subject": "planet_x", "topic_A_other": "comet", "csrf_token": token}
    refused = web.post(sheet, data=planet)
    text = html.unescape(refused.get_data(as_text=True))
    assert refused.status_code == 422 and "subject is one of" in _form(text, "topics")
    clue = {
        "entry": "clue",
        "relation": "band",
        "subject": "comet",
        "width": "3",
        "topic": "G",
        "csrf_token": token,
    }
    refused = web.post(sheet, data=clue)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "params.observations.0.topic" in _form(text, "clue")


def _params(client, owner: dict[str, str], sheet: str) -> dict:
    return client.get(f"/jobs/{sheet.rsplit('/', 1)[1]}", headers=owner).get_json()["params"]


def _actions(page: str) -> str:
    return page.split('id="actions"')[1].split("</table>")[0]


def _form(page: str, entry: str) -> str:
    return page.split(f'id="entry-{entry}"')[1].split("</form>")[0]


@pytest.mark.parametrize(
    ("observation", "text"),
    [
        (
            {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 0},
            "survey asteroid 1–6: none",
        ),
        (
            {"type": "survey", "object": "gas_cloud", "first": 11, "last": 2, "count": 2},
            "survey gas cloud 11–2: 2",
        ),
        ({"type": "target", "sector": 4, "seen": "empty"}, "target 4: empty"),
        ({"type": "sector", "sector": 3, "object": "comet", "present": False}, "sector 3: no comet"),
        ({"type": "sector", "sector": 9, "object": "planet_x"}, "sector 9: Planet X"),
        (
            {
                "type": "clue",
                "relation": "adjacent",
                "quantifier": "none",
                "subject": "gas_cloud",
                "object": "comet",
                "topic": "B",
            },
            "research B: no gas cloud is adjacent to a comet",
        ),
        (
            {
                "type": "clue",
                "relation": "opposite",
                "quantifier": "some",
                "subject": "comet",
                "object": "asteroid",
            },
            "clue: at least one comet is opposite an asteroid",
        ),
        (
            {
                "type": "clue",
                "relation": "within",
                "quantifier": "none",
                "distance": 2,
                "subject": "planet_x",
                "object": "empty",
                "topic": "X1",
            },
            "conference X1: Planet X is not within 2 sectors of an empty sector",
        ),
        (
            {
                "type": "clue",
                "relation": "band",
                "subject": "dwarf_planet",
                "width": 4,
                "exact": True,
                "topic": "C",
            },
            "research C: every dwarf planet lies in a band of exactly 4 sectors",
        ),
        (
            {"type": "locate", "sector": 5, "left": "asteroid", "right": "empty"},
            "locate Planet X in 5 between asteroid and empty: wrong",
        ),
    ],
    ids=lambda value: value["type"] if isinstance(value, dict) else None,
)
def test_the_note_sheet_lists_each_observation_in_words(observation: dict, text: str) -> None:
    KINDS["planetx.deduce"].load_params({"mode": "standard", "observations": [observation]})  # a real one
    assert observation_text(observation) == text


def test_a_sheet_keeps_params_it_does_not_know(app, client, make_key, worker, db) -> None:
    """Optional params of a newer deduce (here `top` and `rank_by`) pass on to the next job unchanged."""
    owner = make_key()
    params = {"mode": "standard", "top": 3, "rank_by": "goal_bits_per_day", "observations": []}
    job_id = client.post(
        "/jobs", json={"kind": "planetx.deduce", "params": params}, headers=owner
    ).get_json()["id"]
    web = signed_in(app, owner)
    target = {"entry": "target", "sector": "2", "seen": "empty", "csrf_token": csrf_token(web, "/admin/jobs")}
    moved = web.post(f"/admin/planetx/notes/{job_id}", data=target)
    new_id = moved.headers["Location"].rsplit("/", 1)[1]
    new = client.get(f"/jobs/{new_id}", headers=owner).get_json()
    assert new["params"]["top"] == 3 and new["params"]["rank_by"] == "goal_bits_per_day"
    assert new["params"]["observations"] == [{"type": "target", "sector": 2, "seen": "empty"}]
    assert signed_in(app, make_key()).get(f"/admin/planetx/notes/{job_id}").status_code == 404
