"""The Planet X note sheet: a player writes down what the game shows them (surveys, targets, research and
conference clues, failed locates, plain sector facts) and, after each entry, sees the board's odds and the
next actions ranked, from a `planetx.deduce` job.

The kind's own dashboard pages (`Kind.pages`): the dashboard mounts this blueprint under /admin/planetx,
where it shares the dashboard's sign-in, look and submit budget. It imports the web layer; the web layer
names it only through the kind's reference.

Each entry submits a new deduce job through services.jobs.submit: the sheet is that job, its params the
notes so far (copied whole, so optional params this page does not know, such as `rank_by`, pass on to the
next job). The game's research topics (`topics`: letter → the pair of objects it is about) are declared on
the start form or as a sheet setting, so that deduce ranks their research and weighs the clues recorded with
their letter. A deduction over the stored enumeration takes a fraction of a second on a worker, so the
page waits for it by polling, like any job page, rather than solving inside the web process (which must not
load Z3 or the boards). Theories ("Planet X in sector 7") bind nothing: they are kept in the session only.
"""

from __future__ import annotations

import uuid
from typing import Any

from flask import Blueprint, abort, redirect, render_template, request, session, url_for
from werkzeug.wrappers import Response

from api.kind_pages import LAYOUT, counts_as_submit, field_errors, service_context, signed_in_caller
from puzzles.planetx.board import MODES
from schemas.planetx import (
    CLUE_SOURCES,
    DIFFICULTIES,
    OBJECT_NAMES,
    RELATIONS,
    RESEARCH_OTHERS,
    RESEARCH_SUBJECTS,
    SEEN_OBJECTS,
    STARTING_FACT_OBJECTS,
    SURVEY_OBJECTS,
    TOPIC_LETTERS,
)
from services import jobs as job_service
from services.errors import Invalid, NotFound
from services.reads.jobs import JobView

blueprint = Blueprint("planetx", __name__, url_prefix="/planetx", template_folder="templates")

DEDUCE = "planetx.deduce"
THEORIES = "planetx_theories"
MAX_THEORIES = 40
#: each entry's fields, as the Observation schema names them, and which are integers or yes/no
ENTRIES: dict[str, tuple[str, ...]] = {
    "survey": ("object", "first", "last", "count"),
    "target": ("sector", "seen"),
    "clue": ("relation", "quantifier", "subject", "object", "distance", "width", "exact", "topic"),
    "sector": ("sector", "object", "present"),
    "locate": ("sector", "left", "right"),
}
INTEGERS = {"sector", "first", "last", "count", "distance", "width", "sky_start", "targets_used"}
YES_NO = {"present", "exact", "last_action_research"}
CHOICES = {
    "objects": OBJECT_NAMES,
    "survey_objects": SURVEY_OBJECTS,
    "seen": SEEN_OBJECTS,
    "relations": RELATIONS,
    "quantifiers": ("all", "some", "none"),
    "difficulties": tuple(DIFFICULTIES),
    "starting_objects": STARTING_FACT_OBJECTS,
    "clue_sources": CLUE_SOURCES,
    "topic_letters": TOPIC_LETTERS,
    "research_subjects": RESEARCH_SUBJECTS,
    "research_others": RESEARCH_OTHERS,
}
#: the sheet's settings (research is never offered twice in a row: the player says when it was the last)
SETTINGS = ("sky_start", "targets_used", "last_action_research")
#: a starting fact's fields ("sector S is not a T", dealt by the game's difficulty)
STARTING = ("sector", "object")


#: objects as a player says them: plain (a survey's, a target's) and with an article (a clue's other end)
_PLAIN = {"planet_x": "Planet X", "gas_cloud": "gas cloud", "dwarf_planet": "dwarf planet"}
_ARTICLED = {"planet_x": "Planet X", "empty": "an empty sector", "asteroid": "an asteroid"}
_RELATIONS = {"adjacent": "adjacent to", "opposite": "opposite"}
_SAYS = {"all": "every {} is", "some": "at least one {} is", "none": "no {} is"}
_PLANET_X_SAYS = {"all": "Planet X is", "some": "Planet X is", "none": "Planet X is not"}


def _plain(name: Any) -> str:
    return _PLAIN.get(name, str(name))


def _articled(name: Any) -> str:
    return _ARTICLED.get(name) or f"a {_plain(name)}"


def observation_text(o: dict[str, Any]) -> str:
    """An observation as a player reads it: "survey asteroid 1–6: none", "target 4: empty", "research B:
    no gas cloud is adjacent to a comet"."""
    kind = o.get("type")
    if kind == "survey":
        return f"survey {_plain(o['object'])} {o['first']}–{o['last']}: {o['count'] or 'none'}"
    if kind == "target":
        return f"target {o['sector']}: {_plain(o['seen'])}"
    if kind == "sector":
        return f"sector {o['sector']}: {'' if o.get('present', True) else 'no '}{_plain(o['object'])}"
    if kind == "locate":
        return f"locate Planet X in {o['sector']} between {_plain(o['left'])} and {_plain(o['right'])}: wrong"
    topic = o.get("topic")
    source = f"conference {topic}" if topic in ("X1", "X2") else f"research {topic}" if topic else "clue"
    return f"{source}: {_clue_text(o)}"


def _clue_text(o: dict[str, Any]) -> str:
    subject = _plain(o["subject"])
    if o["relation"] == "band":
        width = f"{'exactly' if o.get('exact') else 'at most'} {o['width']}"
        return f"every {subject} lies in a band of {width} sectors"
    relation = _RELATIONS.get(o["relation"]) or f"within {o['distance']} sectors of"
    said = _PLANET_X_SAYS if o["subject"] == "planet_x" else _SAYS
    return f"{said[o['quantifier']].format(subject)} {relation} {_articled(o['object'])}"


#: more digits than any field takes: such text stays text (int() refuses past 4,300 digits anyway)
MAX_DIGITS = 9


def _digits(raw: str) -> bool:
    """ASCII digits, few enough to read as an int."""
    return raw.isascii() and raw.isdigit() and len(raw) <= MAX_DIGITS


def _value(name: str, raw: str) -> Any:
    """A form value as the schema reads it; text that is no number stays text, for the schema to refuse."""
    if name in INTEGERS and _digits(raw.removeprefix("-")):
        return int(raw)
    if name in YES_NO:
        return raw == "yes"
    return raw


def observation_from_form(entry: str) -> dict[str, Any]:
    fields = {name: request.form.get(name, "").strip() for name in ENTRIES[entry]}
    return {"type": entry, **{name: _value(name, raw) for name, raw in fields.items() if raw}}


def topics_from_form() -> dict[str, list[str]]:
    """The research topics declared on a form (`topic_A_subject`, `topic_A_other`, …): letter → [subject,
    other]. A letter left blank is no topic; half a pair goes on as it is, for deduce to say what it lacks."""
    pairs = {
        letter: [request.form.get(f"topic_{letter}_{end}", "").strip() for end in ("subject", "other")]
        for letter in TOPIC_LETTERS
    }
    return {letter: pair for letter, pair in pairs.items() if any(pair)}


def _sheet_job(job_id: uuid.UUID) -> JobView:
    try:
        job = job_service.get(service_context(), signed_in_caller(), job_id)
    except NotFound:
        abort(404, "no such note sheet")
    if job.kind != DEDUCE:
        abort(404, "not a Planet X note sheet")
    return job


def _submit(params: dict[str, Any]) -> Response:
    job = job_service.submit(service_context(), signed_in_caller(), DEDUCE, params).job
    return redirect(url_for(".notes_sheet", job_id=job.id))


@blueprint.route("/notes", methods=["GET", "POST"])
@counts_as_submit()
def notes() -> Any:
    """A new sheet: the game's mode, its difficulty (how many starting facts it deals), where the sky
    starts and the game's research topics."""
    if request.method == "GET":
        return render_template("planetx/notes_start.html", layout=LAYOUT, errors=[], topics={}, **CHOICES)
    names = ("mode", "sky_start", "difficulty")
    params = {name: _value(name, raw) for name in names if (raw := request.form.get(name, "").strip())}
    params["observations"] = []
    params["starting_facts"] = []
    params["topics"] = topics_from_form()
    session[THEORIES] = []
    try:
        return _submit(params)
    except Invalid as refused:
        errors = field_errors(refused.errors)
        page = render_template(
            "planetx/notes_start.html", layout=LAYOUT, errors=errors, topics=params["topics"], **CHOICES
        )
        return page, 422


@blueprint.get("/notes/<uuid:job_id>")
def notes_sheet(job_id: uuid.UUID) -> str:
    return _render(_sheet_job(job_id))


def _render(job: JobView, entry: str | None = None, errors: list[tuple[str, str]] | None = None) -> str:
    result = job.result if isinstance(job.result, dict) else {}
    difficulty = job.params.get("difficulty")
    starting = bool(difficulty and difficulty != "genius" or job.params.get("starting_facts"))
    return render_template(
        "planetx/notes.html",
        layout=LAYOUT,
        job=job,
        params=job.params,
        result=result,
        actions=result.get("actions") or [],
        theories=session.get(THEORIES, []),
        entries=ENTRIES,
        describe=observation_text,
        plain=_plain,
        topics=job.params.get("topics") or {},
        # the entries whose form shows its own errors (any other's, a theory's too, show at the top)
        forms_shown={*ENTRIES, "settings", "topics", *(("starting",) if starting else ())},
        failed_entry=entry,
        errors=errors or [],
        dealt=DIFFICULTIES,
        **CHOICES,
    )


def _theory() -> bool:
    """A theory is noted in the session only: it submits no job, and costs nothing of the submit budget."""
    return request.form.get("entry") == "theory"


@blueprint.post("/notes/<uuid:job_id>")
@counts_as_submit(free_when=_theory)
def notes_entry(job_id: uuid.UUID) -> Any:
    """One entry on the sheet: an observation or a starting fact (a new deduction), a removed one, the
    sky or targets moved, the research topics declared anew, or a theory (noted only)."""
    job = _sheet_job(job_id)
    entry = request.form.get("entry", "")
    params = dict(job.params)  # every key, known or not, goes on to the next job
    observations = list(params.get("observations") or [])
    if _theory():
        return _note_theory(job)
    if entry in ENTRIES:
        noted = observation_from_form(entry)
        params["observations"] = [*observations, noted]
        # what the game allows next follows from what was just done (research never twice in a row)
        params["last_action_research"] = entry == "clue" and noted.get("topic") in TOPIC_LETTERS
    elif entry == "remove":
        index = request.form.get("index", "")
        if not (_digits(index) and int(index) < len(observations)):
            abort(400, "no such observation")
        params["observations"] = observations[: int(index)] + observations[int(index) + 1 :]
    elif entry == "starting":
        fact = {n: _value(n, raw) for n in STARTING if (raw := request.form.get(n, "").strip())}
        params["starting_facts"] = [*(params.get("starting_facts") or []), fact]
    elif entry == "remove_starting":
        facts = list(params.get("starting_facts") or [])
        index = request.form.get("index", "")
        if not (_digits(index) and int(index) < len(facts)):
            abort(400, "no such starting fact")
        params["starting_facts"] = facts[: int(index)] + facts[int(index) + 1 :]
    elif entry == "settings":
        params.update({n: _value(n, request.form.get(n, "").strip()) for n in SETTINGS})
    elif entry == "topics":
        params["topics"] = topics_from_form()
    else:
        abort(400, "unknown entry")
    try:
        return _submit(params)
    except Invalid as refused:
        return _render(job, entry, field_errors(refused.errors)), 422


def _note_theory(job: JobView) -> Any:
    theory = {"object": request.form.get("object", ""), "sector": request.form.get("sector", "")}
    theories = list(session.get(THEORIES, []))
    forget = request.form.get("forget", "")
    sectors = MODES[job.params["mode"]].sectors  # a sheet's params were validated: its mode is one
    if _digits(forget):
        del theories[int(forget) : int(forget) + 1]
    elif theory["object"] not in OBJECT_NAMES:
        return _render(job, "theory", [("object", f"one of {', '.join(OBJECT_NAMES)}")]), 422
    elif not (_digits(theory["sector"]) and 1 <= int(theory["sector"]) <= sectors):
        return _render(job, "theory", [("sector", f"from 1 to {sectors} on this board")]), 422
    else:
        theories = [*theories, {"object": theory["object"], "sector": int(theory["sector"])}][-MAX_THEORIES:]
    session[THEORIES] = theories
    return redirect(url_for(".notes_sheet", job_id=job.id))
