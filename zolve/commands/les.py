"""`zolve les ORIGIN DESTINATION [PAYLOAD]`: the `les` command line (same options, RANGE syntax, JSON keys),
planned in this process or, with --url, by the service."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import click

from puzzles.leaving_earth.data import LOCATIONS, ROCKETS
from puzzles.leaving_earth.request import RANGE_HELP, RequestError, parse_range

#: the keys `les` prints, in its order
LES_KEYS = ("start", "end", "components", "payload", "mass", "cost", "time", "plan")
#: a maneuver's keys, in the order `les` prints them (and the planner makes them)
STAGE_KEYS = (
    "origin",
    "destination",
    "difficulty",
    "components",
    "aerobraking",
    "thrust",
    "slingshot",
    "time",
    "year",
    "faster",
    "rendezvous",
)
COMPONENT_OPTIONS = (
    ("-j", "--juno"),
    ("-a", "--atlas"),
    ("-s", "--soyuz"),
    ("-p", "--proton"),
    ("-n", "--saturn"),
    ("-i", "--ion"),
)


class Range(click.ParamType[str]):
    name = "range"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        try:
            parse_range(value)
        except RequestError:
            self.fail(f"Number must be expressed as {RANGE_HELP}", param, ctx)
        return cast(str, value)  # from the command line: parse_range read it as a RANGE


class Via(click.ParamType[dict[str, Any]]):
    """CODE[,drop=N][,pickup=N]"""

    name = "waypoint"

    def convert(self, value: Any, param: Any, ctx: Any) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        code, *parts = str(value).split(",")
        waypoint: dict[str, Any] = {"location": code}
        for part in parts:
            name, _, number = part.partition("=")
            field = {"drop": "drop", "pickup": "pick_up", "pick_up": "pick_up"}.get(name)
            if field is None or not (number.isascii() and number.isdigit()):
                self.fail(f"{value!r}: expected CODE[,drop=N][,pickup=N]", param, ctx)
            waypoint[field] = int(number)
        return waypoint


def les_params(options: dict[str, Any]) -> dict[str, Any]:
    """The job params for a `les` command line (shared by local runs, --url runs and the batch benchmark)."""
    params: dict[str, Any] = {
        "origin": options["origin"],
        "destination": options["destination"],
        "payload": options.get("payload") or 1,
        "components": {
            name: options[name] for _, name in _component_names() if options.get(name) is not None
        },
        "minimize": options.get("minimize") or "cost",
        "rendezvous": options.get("rendezvous", True),
        "aerobraking": options.get("aerobraking", False),
        "faster": options.get("faster", False),
        "free_ions": options.get("free_ions") or 0,
        "launch": options.get("launch") or ("any" if options.get("single_stage") else "two-stage"),
        "waypoints": list(options.get("via") or ()),
    }
    for name in ("cost", "time", "year"):
        if options.get(name) is not None:
            params[name] = options[name]
    return params


def _component_names() -> list[tuple[str, str]]:
    return [(short, long.lstrip("-")) for short, long in COMPONENT_OPTIONS]


def les_output(result: dict[str, Any]) -> dict[str, Any]:
    """The plan as `les` prints it, its keys in `les`' order whether it was planned here or came through
    the service (whose database keeps JSON objects' keys in an order of its own)."""
    output = {key: result[key] for key in LES_KEYS if key in result}
    if "plan" in output:
        output["plan"] = [_stage_output(stage) for stage in output["plan"]]
    if "components" in output:
        used = [name for stage in output.get("plan", []) for name in stage.get("components", {})]
        output["components"] = _in_order(output["components"], [n for n in used if n != "ion"] + ["ion"])
    return output


def _stage_output(stage: dict[str, Any]) -> dict[str, Any]:
    ordered = _in_order(stage, STAGE_KEYS)
    if "components" in ordered:
        ordered["components"] = _in_order(ordered["components"], [*ROCKETS, "ion"])
    return ordered


def _in_order(mapping: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """`mapping` with `keys` first, in that order, then the rest as they come."""
    first = {key: mapping[key] for key in dict.fromkeys(keys) if key in mapping}
    return first | {key: value for key, value in mapping.items() if key not in first}


F = TypeVar("F", bound=Callable[..., Any])


def _component_option(short: str, long: str) -> Callable[[F], F]:
    return click.option(short, long, type=Range(), default=None, help=f"number of {long[2:]} (default 0-8)")


def _with_component_options(func: F) -> F:
    for short, long in reversed(COMPONENT_OPTIONS):
        func = _component_option(short, long)(func)
    return func


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("origin", metavar="ORIGIN")
@click.argument("destination", metavar="DESTINATION")
@click.argument("payload", type=click.IntRange(min=1), default=1)
@_with_component_options
@click.option("-c", "--cost", type=Range(), default=None, help="cost of the mission")
@click.option("-t", "--time", type=Range(), default=None, help="years of travel")
@click.option("-y", "--year", type=click.IntRange(1956, 1986), default=None, help="year the journey starts")
@click.option(
    "--free-ions", type=click.IntRange(min=0), default=0, help="ion thrusters already at the origin"
)
@click.option("-m", "--minimize", default="cost", help="time, cost or mass (or a priority list: time,mass)")
@click.option(
    "--routes", default="all", help="accepted for les compatibility; zolve always searches every route"
)
@click.option(
    "--single-stage", is_flag=True, help="also try the single-stage launch E→Eo (les' default: not)"
)
@click.option("--launch", type=click.Choice(["any", "two-stage", "single-stage"]), default=None)
@click.option("--aerobraking/--no-aerobraking", default=False, help="aerobrake where it helps, per maneuver")
@click.option("--rendezvous/--no-rendezvous", default=True, help="detach ion thrusters once no longer needed")
@click.option(
    "--faster", is_flag=True, help="allow flying multi-year maneuvers in half the years, double difficulty"
)
@click.option("--via", type=Via(), multiple=True, help="waypoint CODE[,drop=N][,pickup=N] (repeatable)")
@click.option(
    "--url", default=None, help="plan through the zolve service at this URL (default: in this process)"
)
@click.option("--key", envvar="ZOLVE_API_KEY", default=None, help="API key for --url [ZOLVE_API_KEY]")
@click.option("--time-limit", type=float, default=None, help="seconds")
@click.option("-v", "--verbose", is_flag=True, help="also print the route and search statistics on stderr")
def les(**options: Any) -> None:
    """Plan a Leaving Earth mission: the `les` command line, with every route searched."""
    _check_codes(options)
    params = les_params(options)
    result = _plan(params, options)
    if options["verbose"]:
        shown = {k: result.get(k) for k in ("route", "objectives", "search")}
        click.echo(json.dumps(shown, ensure_ascii=False), err=True)
    if result.get("status") != "optimal":
        click.echo(result.get("message") or "no plan meets the constraints", err=True)
        sys.exit(1)
    click.echo(json.dumps(les_output(result), indent=4, ensure_ascii=False))


def _check_codes(options: dict[str, Any]) -> None:
    codes = [options["origin"], *(w["location"] for w in options["via"]), options["destination"]]
    for code in codes:
        if code not in LOCATIONS:
            click.echo(f"Error finding {code!r}. Must be one of the following:", err=True)
            for known, location in LOCATIONS.items():
                click.echo(f"{known.rjust(4)}: {location.name}")
            sys.exit(1)
    if options["origin"] == options["destination"] and not options["via"]:
        click.echo("Origin and destination may not be the same.", err=True)
        sys.exit(1)


def _plan(params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    if options["url"]:
        return _plan_remotely(params, options)
    from zolve.commands.common import solve_locally

    return solve_locally("leaving_earth.plan", params, options["time_limit"])


def _plan_remotely(params: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    from zolve_client import FINAL_STATES, Client

    if not options["key"]:
        raise click.UsageError("--url needs an API key: --key or ZOLVE_API_KEY")
    client = Client(options["url"], options["key"])
    job = client.submit("leaving_earth.plan", params, time_limit=options["time_limit"] or None)
    while job["state"] not in FINAL_STATES:  # quietly: stdout carries only the plan
        job = client.get(job["id"], wait=5)
    if job["state"] != "succeeded":
        raise click.ClickException(
            f"job {job['id']} {job['state']}: {(job.get('error') or {}).get('message')}"
        )
    return dict(job.get("result") or {})
