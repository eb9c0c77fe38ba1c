"""`zolve planetx ...`: deduce from observations at the table, and simulate games, in this process."""

from __future__ import annotations

from typing import Any

import click

from schemas.planetx import CLUE_MODELS, DIFFICULTIES

time_limit_option = click.option(
    "--time-limit", type=click.FloatRange(min=0.1), default=None, help="seconds (default: the kind's own)"
)


@click.group()
def planetx() -> None:
    """The Search for Planet X: deduction and game simulation (in-process)."""


@planetx.command()
@click.option("--mode", type=click.Choice(["standard", "expert"]), default="standard", show_default=True)
@click.option("--obs", "observations", default="[]", help="observations: a JSON list, or @file")
@click.option("--sky", "sky_start", type=int, default=1, show_default=True, help="first visible sector")
@click.option("--targets-used", type=int, default=0, show_default=True)
@click.option("--top", type=int, default=10, show_default=True, help="actions to rank")
@click.option(
    "--rank-by",
    type=click.Choice(["bits_per_day", "goal_bits_per_day"]),
    default="bits_per_day",
    show_default=True,
)
@click.option(
    "--topic",
    "topics",
    multiple=True,
    metavar="LETTER=SUBJECT,OTHER",
    help="a research topic the game shows, e.g. A=comet,asteroid (repeatable)",
)
@click.option("--researched", default="", help="topics already researched, e.g. AC")
@click.option("--after-research", is_flag=True, help="the last action was research (none is offered)")
@click.option(
    "--clues-as-facts",
    is_flag=True,
    help="use research and conference clues as plain facts (default: also weigh each board by how likely "
    "the game was to show them on it)",
)
@click.option(
    "--difficulty", type=click.Choice(list(DIFFICULTIES)), default=None, help="the game's difficulty"
)
@click.option(
    "--starting",
    "starting_facts",
    multiple=True,
    metavar="SECTOR=OBJECT",
    help="a starting fact the game dealt, e.g. 4=comet: sector 4 is not a comet (repeatable)",
)
@click.option("--json", "as_json", is_flag=True, help="print the result JSON instead of tables")
@time_limit_option
def deduce(
    mode: str,
    observations: str,
    sky_start: int,
    targets_used: int,
    top: int,
    rank_by: str,
    topics: tuple[str, ...],
    researched: str,
    after_research: bool,
    clues_as_facts: bool,
    difficulty: str | None,
    starting_facts: tuple[str, ...],
    as_json: bool,
    time_limit: float | None,
) -> None:
    """Rank the next actions (surveys, targets, research) by expected bits per day and show each sector's
    odds."""
    from zolve.commands.common import print_json, read_json, solve_locally

    params = {
        "mode": mode,
        "observations": read_json(observations),
        "sky_start": sky_start,
        "targets_used": targets_used,
        "top": top,
        "rank_by": rank_by,
        "topics": dict(_topic(text) for text in topics),
        "researched": list(researched.upper()),
        "last_action_research": after_research,
        "weigh_clues": not clues_as_facts,
        "starting_facts": [_starting_fact(text) for text in starting_facts],
    }
    if difficulty:
        params["difficulty"] = difficulty
    result = solve_locally("planetx.deduce", params, time_limit)
    if as_json:
        print_json(result)
    elif result["status"] != "ok":
        raise click.ClickException(result["message"])
    else:
        print_deduction(result)


def _topic(text: str) -> tuple[str, list[str]]:
    letter, _, pair = text.partition("=")
    objects = [name.strip() for name in pair.split(",")]
    if not letter or len(objects) != 2:
        raise click.BadParameter(f"{text!r}: expected LETTER=SUBJECT,OTHER", param_hint="--topic")
    return letter.strip().upper(), objects


def _starting_fact(text: str) -> dict[str, Any]:
    sector, _, obj = text.partition("=")
    if not sector.strip().isdigit() or not obj.strip():
        raise click.BadParameter(f"{text!r}: expected SECTOR=OBJECT, e.g. 4=comet", param_hint="--starting")
    return {"sector": int(sector), "object": obj.strip()}


def _outcome(outcome: Any) -> str:
    """A survey count or target object as is; a research clue in a few words."""
    if not isinstance(outcome, dict):
        return str(outcome)
    words = [outcome.get("quantifier"), outcome["subject"], outcome["relation"], outcome.get("object")]
    words += [f"{outcome['distance']}" if "distance" in outcome else None]
    words += [f"{'=' if outcome['exact'] else '<='}{outcome['width']}" if "width" in outcome else None]
    return " ".join(str(word) for word in words if word)


def print_deduction(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    locate = result["locate"]
    console.print(
        f"[bold]{result['boards']:,}[/] of {result['total_boards']:,} boards remain ({result['source']}); "
        f"best locate guess: sector {locate['sector']} between {locate['left']} and {locate['right']} "
        f"({locate['probability']:.1%}, {locate['candidates']} candidates)"
    )
    actions = Table("action", "days", "bits", "bits/day", "goal bits/day", "outcomes", title="next actions")
    for ranked in result["actions"]:
        outcomes = ", ".join(f"{_outcome(o['outcome'])}: {o['probability']:.0%}" for o in ranked["outcomes"])
        actions.add_row(
            ranked["label"],
            str(ranked["days"]),
            f"{ranked['bits']:.3f}",
            f"{ranked['bits_per_day']:.3f}",
            f"{ranked['goal_bits_per_day']:.3f}",
            outcomes,
        )
    console.print(actions)
    names = list(result["sectors"][0]["probabilities"])
    sectors = Table("sector", *names, title="sector odds")
    for row in result["sectors"]:
        sectors.add_row(str(row["sector"]), *(_percent(row["probabilities"][name]) for name in names))
    console.print(sectors)


def _percent(p: float) -> str:
    return "" if p == 0 else "100%" if p == 1 else f"{p:.0%}" if p >= 0.01 else "<1%"


@planetx.command()
@click.option("--mode", type=click.Choice(["standard", "expert"]), default="standard", show_default=True)
@click.option("--games", type=int, default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--policy",
    type=click.Choice(["survey-only", "entropy", "goal", "research"]),
    default="research",
    show_default=True,
)
@click.option("--no-conferences", is_flag=True, help="play without the Planet X conference clues")
@click.option(
    "--clues-as-facts",
    is_flag=True,
    help="use research and conference clues as plain facts (default: also weigh each board by how likely "
    "the game was to show them on it)",
)
@click.option(
    "--difficulty",
    type=click.Choice(list(DIFFICULTIES)),
    default="genius",
    show_default=True,
    help="the starting facts each game deals",
)
@click.option(
    "--clue-model",
    type=click.Choice(CLUE_MODELS),
    default="uniform",
    show_default=True,
    help="how games draw their clues (weighted: EluvK/planetx_server's generator)",
)
@click.option(
    "--clue-model-known", is_flag=True, help="tell the player the clue model (default: it weighs both)"
)
@click.option(
    "--sample-games",
    type=click.IntRange(0, 100),
    default=None,
    help="games printed in full with their moves [default: as many as the service's job returns]",
)
@time_limit_option
def simulate(
    mode: str,
    games: int,
    seed: int,
    policy: str,
    no_conferences: bool,
    clues_as_facts: bool,
    difficulty: str,
    clue_model: str,
    clue_model_known: bool,
    sample_games: int | None,
    time_limit: float | None,
) -> None:
    """Play games on random boards on every core and print the days they took, and sample games (JSON)."""
    from zolve.commands.common import print_json, solve_locally

    params = {
        "mode": mode,
        "games": games,
        "seed": seed,
        "policy": policy,
        "conferences": not no_conferences,
        "weigh_clues": not clues_as_facts,
        "difficulty": difficulty,
        "clue_model": clue_model,
        "clue_model_known": clue_model_known,
    }
    if sample_games is not None:
        params["sample_games"] = sample_games
    print_json(solve_locally("planetx.simulate", params, time_limit))
