"""`zolve planetx ...`: deduce from observations at the table, and simulate games, in this process."""

from __future__ import annotations

from typing import Any

import click


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
@click.option("--json", "as_json", is_flag=True, help="print the result JSON instead of tables")
def deduce(
    mode: str, observations: str, sky_start: int, targets_used: int, top: int, rank_by: str, as_json: bool
) -> None:
    """Rank the next actions by expected bits per day and show each sector's odds."""
    from zolve.commands.common import print_json, read_json, solve_locally

    params = {
        "mode": mode,
        "observations": read_json(observations),
        "sky_start": sky_start,
        "targets_used": targets_used,
        "top": top,
        "rank_by": rank_by,
    }
    result = solve_locally("planetx.deduce", params)
    if as_json:
        print_json(result)
    elif result["status"] != "ok":
        raise click.ClickException(result["message"])
    else:
        print_deduction(result)


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
        outcomes = ", ".join(f"{o['outcome']}: {o['probability']:.0%}" for o in ranked["outcomes"])
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
    "--policy", type=click.Choice(["survey-only", "entropy", "goal"]), default="goal", show_default=True
)
def simulate(mode: str, games: int, seed: int, policy: str) -> None:
    """Play games on random boards on every core and print the days they took (JSON)."""
    from zolve.commands.common import print_json, solve_locally

    params = {"mode": mode, "games": games, "seed": seed, "policy": policy, "sample_games": 0}
    print_json(solve_locally("planetx.simulate", params))
