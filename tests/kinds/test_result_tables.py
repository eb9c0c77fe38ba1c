"""Each kind makes its own dashboard tables of a result; the dashboard only asks (api.admin.present)."""

from api.admin.present import cell_text, result_tables


def test_dice_results_read_as_one_row_per_die() -> None:
    (table,) = result_tables("dice", {"dice": [[1, 4, 4], [3, 3, 3]]})
    assert table.columns == ["", "face 1", "face 2", "face 3"]
    assert table.rows == [["die 1", 1, 4, 4], ["die 2", 3, 3, 3]]


def test_planetx_results_read_as_sector_tables() -> None:
    result = {
        "sectors": [{"sector": 1, "counts": {"comet": 2, "empty": 1}, "planet_x_probability": 0.25}],
        "planet_x": [{"sector": 4, "probability": 0.5}],
    }
    sectors, candidates = result_tables("planetx.enumerate", result)
    assert sectors.columns == ["sector", "comet", "empty", "Planet X probability"]
    assert sectors.rows == [[1, 2, 1, 0.25]]
    assert candidates.rows == [[4, 0.5]]


def test_a_mission_plan_reads_as_totals_and_steps() -> None:
    result = {"cost": 12, "components": {"juno": 2}, "plan": [{"origin": "E", "destination": "L"}]}
    mission, plan = result_tables("leaving_earth.plan", result)
    assert mission.rows == [["components", "juno × 2"], ["cost", 12]]
    assert plan.rows == [[1, "E", "L"]]


def test_a_mission_plans_years_read_as_years() -> None:
    """A year is 1960 in the table, never a count with a thousands separator (1,960)."""
    step = {"origin": "Eo", "destination": "ipt", "time": 1, "year": 1960}
    mission, plan = result_tables(
        "leaving_earth.plan", {"time": 1, "start": 1960, "end": 1961, "plan": [step]}
    )
    assert [[cell_text(v) for v in row] for row in mission.rows] == [
        ["time", "1"],
        ["start", "1960"],
        ["end", "1961"],
    ]
    assert plan.columns == ["step", "origin", "destination", "time", "year"]
    assert [cell_text(v) for v in plan.rows[0]] == ["1", "Eo", "ipt", "1", "1960"]


def test_kinds_without_tables_and_odd_results_show_the_json_alone() -> None:
    assert result_tables("taiji.solve", {"grid": []}) == []
    assert result_tables("dice", None) == []
    assert result_tables("no.such.kind", {"dice": [[1]]}) == []
