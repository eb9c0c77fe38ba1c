import itertools
import random
import re
import threading
import time

import pytest

from puzzles.runtime import Cancelled, Run, TimeLimitExceeded
from puzzles.taiji.code import Puzzle, PuzzleCodeError, PuzzleGridError, Tile, parse_code, read_grid, to_grid
from puzzles.taiji.rules import areas, is_valid, violations
from puzzles.taiji.solver import Encoding, render, solve

# Taiji Maker editor test data: id, code, one valid solution (# lit, . unlit, space = hole), and whether
# the solution is unique (up to flipping every tile when no tile is fixed)
EXAMPLES = [
    ("SOLV0", "3:Kw202200Fw62Dw4", ["#.#", "#..", "##."], True),
    ("SOLV2", "3:022Mw200Fw60Dw4", [".##", "#..", "#.."], True),
    ("SOLV8", "4:Ay20Ay2Kw+EAy20Ay20Bw+CAy2", ["#.#.", "....", "#.#.", "...#"], True),
    ("SOLV9", "4:Jy222Jy2Ay422Ay4Ay422Ay4Ay622Ay6", ["####", ".##.", ".##.", "####"], True),
    ("SOLV11", "4:Ay4Jy0Ay6Jy2Ay6Jy2Ay4Jy0Ay4Jy0Ay6Jy2Ay6Jy2Ay4Jy0", ["..##", "##..", "..##", "##.."], True),
    ("SOLV17", "4:Jy20Ab0Jw2Ay2022002Ay0Jb0Aw22Jy0", ["#..#", "#.##", "..#.", ".##."], True),
    ("SOLV33", "4:V2V0V2V0V0V2V0V2V2V0V2V0V0V2V0V2", ["#.#.", ".#.#", "#.#.", ".#.#"], True),
    (
        "SOLV79",
        "6:V02V022V02Z620X42V02V0V20220V2V02V02X402Z62V022V02V0",
        [".#.##.", "###..#", ".#.#.#", "#.#.#.", "#..###", ".##.#."],
        True,
    ),
    ("SOLV51", "4:Eo622So22So+D2So20So222Eo4", ["####", "#...", ".##.", "###."], False),
    ("SOLV96", "4:2Sy2222X20Sk2Sk20X0222Sp2V0", [".###", "##.#", "#..#", "###."], False),
    ("SOLV74", "3:Cr22Cr22Sr022Sr+CSr22Cr00Cr2", ["#..", "##.", "..#", "#.#", "###"], False),
    (
        "SOLV23",
        "5:22Sp2Sw4So42So020Sk62Sw02Sw02Sk602So02Sw4So4Sp222",
        ["###..", "#.#.#", "#.#.#", "#.#.#", "..###"],
        True,
    ),
    ("SOLV39", "4:Sy22Sy002Z22Sy0Sy020Sy20Sy0Sy22", ["..##", "...#", "#.#.", "##.."], True),
    (
        "SOLV84",
        "7:Fp62Dk+C2Ey602220222020Aw60222Aw42+C2Bk42Aw422020Bk42Aw020Gy220Cb22Db2Gp4",
        ["##...##", ".###.##", "#.#.#.#", "##.#...", "#.#.##.", "#..#.#.", "##.###."],
        True,
    ),
    (
        "HARD9",
        "8:Sw0Sy0Sw0Jw0Jw00Jw+CJw+DY+CSw00Sw+FJw+CV0Jw0Sw4+CSw0Y0Iw0V+ISy+FY0Sw00Jw00Sw+CJw+DJw0",
        [".#.##.##", ".#.#...#", ".#.#####", "###.#..#", "..##.#.#", ".##.#..#", ".#....##", ".#######"],
        True,
    ),
    (
        "SOLV72",
        "6:-C2-DSk2028822Bw02Sk2Sk22Aw02282Bw022-C0Sk2-C",
        ["   .  ", "  .#. ", " ..#..", "..#.. ", ".#..  ", " #.   "],
        False,
    ),
]
BY_ID = {example[0]: example for example in EXAMPLES}
UNSAT_FLOWER = "3:0404Z64040"  # a lit flower with 4 yellow petals, its 4 neighbours fixed unlit


def grid_of(rows: list[str]) -> list[list[int | None]]:
    return [[None if ch == " " else int(ch == "#") for ch in row] for row in rows]


def solved(params: dict, time_limit: float = 60) -> dict:
    with Run(time_limit) as run:
        return solve(params, run)


# -- the puzzle code ------------------------------------------------------------------------------------


def test_run_length_expands_plain_tiles_then_holes() -> None:
    puzzle = parse_code("2:0+B-B0")  # "0" + "00" + "88" + "0"
    assert (puzzle.width, puzzle.height) == (2, 3)
    assert puzzle.tiles == (Tile(), Tile(), Tile(), None, None, Tile())
    assert parse_code("4:+D").tiles == (Tile(),) * 4
    assert parse_code("13:+Z").height == 2


def test_symbols_and_values() -> None:
    tiles = parse_code("9:A0I0J0R0S0V0X0Z00").tiles
    assert [(t.symbol, t.value) for t in tiles] == [
        ("dice", 1),
        ("dice", 9),
        ("dice", -1),
        ("dice", -9),
        ("diamond", 0),
        ("flower", 0),
        ("flower", 2),
        ("flower", 4),
        (None, 0),
    ]


def test_colours_and_option_bits() -> None:
    tiles = parse_code("8:Ar0Bo0Sy0Vg0Ab0Ap0Ak0Aw0").tiles
    assert [t.colour for t in tiles] == list("roygbpkw")
    bits = parse_code("7:1245670").tiles
    assert [(t.fixed, t.lit, t.hidden) for t in bits] == [
        (False, False, True),
        (False, False, False),  # the lit bit of a free tile is ignored
        (True, False, False),
        (True, False, True),
        (True, True, False),
        (True, True, True),
        (False, False, False),
    ]


def test_holes() -> None:
    puzzle = parse_code("3:080Sy8+B")
    assert [t is None for t in puzzle.tiles] == [False, True, False, True, False, False]
    assert puzzle.features() == ["holes"]


def test_joined_tiles() -> None:
    tiles = parse_code("2:0<0^0/0").tiles
    assert [(t.join_left, t.join_up) for t in tiles] == [
        (False, False),
        (True, False),
        (False, True),
        (True, True),
    ]
    assert parse_code("2:0<0").features() == ["joins"]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("3:00", "2 tiles do not fill rows of width 3"),
        ("3:0x0", "tile 1 (row 0, column 1): expected a tile"),
        ("3:0Sy", "tile 1 (row 0, column 1): expected an option digit 0–8 after 'Sy', found the end"),
        ("3:0Sq0", "tile 1 (row 0, column 1): expected an option digit 0–8 after 'S', found 'q'"),
        ("3:009", "tile 2 (row 0, column 2): option digit 9 is not 0–8"),
        ("3:0+1", "run-length chunk 1 after '+' (+1) must start with a letter"),
        ("3:0-", "run-length chunk 1 after '-'"),
        ("3:0T20", "tile 1 (row 0, column 1): line symbols are not supported (T = dash)"),
        ("3:00U2", "line symbols are not supported (U = slash)"),
        ("2:<00", "tile 0 (row 0, column 0): joined to the left, but there is no tile on its left"),
        ("2:0^0", "tile 1 (row 0, column 1): joined upwards, but there is no tile above it"),
        ("2:8^0", "joined upwards, but there is no tile above it"),
        ("2:4<6", "tile 1 (row 0, column 1) is joined to a fixed tile of the other state"),
        ("x:00", "width 'x' is not a positive integer"),
        ("0000", "no ':' found"),
        ("33:0", "width 33 is larger than 32"),
        ("1:+Z+H", "height 34 is larger than 32"),
        ("3:", "the code lists no tiles"),
    ],
)
def test_malformed_codes_say_what_and_where(code: str, message: str) -> None:
    with pytest.raises(PuzzleCodeError, match=re.escape(message)):
        parse_code(code)
    assert issubclass(PuzzleCodeError, ValueError)


def test_grid_round_trip_and_defaults() -> None:
    for _, code, _, _ in EXAMPLES:
        puzzle = parse_code(code)
        assert read_grid(to_grid(puzzle)) == puzzle
    assert read_grid(
        [[{}, None], [{"symbol": "dice", "value": -3, "colour": "k"}, {"fixed": True, "lit": True}]]
    )
    assert read_grid([[{"lit": True}]]).tiles == (Tile(),)  # a free tile's lit flag means nothing


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ([[{}], [{}, {}]], "row 1 has 2 tiles, row 0 has 1"),
        ([[{"symbol": "dice"}]], "row 0, column 0: value 0 is not allowed for dice"),
        ([[{"symbol": "flower", "value": 5}]], "value 5 is not allowed for flower"),
        ([[{"value": 2}]], "value 2 is not allowed for a plain tile"),
        ([[{"symbol": "line"}]], "symbol 'line' is not one of"),
        ([[{"colour": "x"}]], "colour 'x' is not one of"),
        ([[{"join_left": True}]], "joined to the left, but there is no tile on its left"),
        ([[None, {"join_left": True}]], "joined to the left"),
        ([[{"size": 3}]], "unknown tile fields"),
        ([[{}] * 33], "at most 32×32"),
        ([], "at least one row"),
    ],
)
def test_malformed_grids(grid: list, message: str) -> None:
    with pytest.raises(PuzzleGridError, match=re.escape(message)):
        read_grid(grid)


# -- the rule checker -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "code", "rows", "unique"), EXAMPLES, ids=list(BY_ID))
def test_checker_accepts_the_stored_solutions(name: str, code: str, rows: list[str], unique: bool) -> None:
    assert violations(parse_code(code), grid_of(rows)) == []


@pytest.mark.parametrize(("name", "code", "rows", "unique"), [e for e in EXAMPLES if e[3]], ids=lambda v: v)
def test_checker_rejects_every_single_flip_of_a_unique_solution(
    name: str, code: str, rows: list[str], unique: bool
) -> None:
    puzzle, grid = parse_code(code), grid_of(rows)
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            if value is not None:
                row[c] = 1 - value
                assert not is_valid(puzzle, grid), (name, r, c)
                row[c] = value


def test_checker_names_the_broken_rules() -> None:
    puzzle = parse_code("3:Ar2Bb2W4")  # a red 1, a blue 2, a fixed unlit flower with 1 yellow petal
    assert violations(puzzle, [[1, 0, 0]]) == []
    assert violations(puzzle, [[1, 1, 1]]) == [
        "tile 2 (row 0, column 2) is fixed unlit",
        "the area of tile 0 holds dice of several colours",
    ]
    assert violations(puzzle, [[0, 1, 0]]) == [
        "tile 2 (row 0, column 2): flower with 1 yellow petals has 0 same neighbours",
        "the area of tile 1 has 1 tiles but its dice add up to 2",
    ]
    lone = parse_code("2:Sr00")
    assert violations(lone, [[1, 0]]) == ["the area of tile 0 has 1 r diamonds and 0 other r symbols"]
    assert violations(lone, [[1]]) == ["the solution is not 1 rows of 2"]
    assert violations(lone, [[1, None]]) == ["tile 1: holes (and only holes) must be None"]


def test_flowers_count_as_purple_and_yellow_for_diamonds() -> None:
    lit = [[1, 1, 1]] * 3
    assert not is_valid(parse_code("3:0Sp000Z00000"), lit)  # 4 yellow petals: not purple
    assert is_valid(parse_code("3:0Sp000Z000Sp00"), lit)
    assert is_valid(parse_code("3:0Sy000Z00000"), lit)  # ... but yellow
    assert is_valid(parse_code("3:Sy0W00"), [[1, 1, 0]])  # 1 yellow petal: yellow and purple
    assert is_valid(parse_code("3:Sp0W00"), [[1, 1, 0]])
    assert not is_valid(parse_code("3:Sr0W00"), [[1, 1, 0]])


def test_areas_do_not_cross_holes() -> None:
    puzzle = parse_code("3:080")
    assert areas(puzzle, [True, None, True]) == [[0], [2]]


# -- the solver -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "code", "rows", "unique"), EXAMPLES, ids=list(BY_ID))
def test_every_example_is_solved_with_a_checked_answer(
    name: str, code: str, rows: list[str], unique: bool
) -> None:
    puzzle = parse_code(code)
    result = solved({"code": code})
    assert result["status"] == "solved" and result["valid"] is True
    assert is_valid(puzzle, result["solution"])
    assert (result["width"], result["height"]) == (puzzle.width, puzzle.height)
    holes = [[t is None for t in row] for row in puzzle.rows()]
    assert [[v is None for v in row] for row in result["solution"]] == holes
    assert result["rendering"] == render(result["solution"])
    assert result["up_to_flip"] is (not puzzle.has_fixed)
    assert result["unique"] is unique
    if not unique:
        second = result["second_solution"]
        assert is_valid(puzzle, second) and second != result["solution"]
        flipped = [[None if v is None else 1 - v for v in row] for row in result["solution"]]
        assert not result["up_to_flip"] or second != flipped
    else:
        assert result["second_solution"] is None
        if not result["up_to_flip"]:
            assert result["solution"] == grid_of(rows)


@pytest.mark.parametrize("name", ["SOLV0", "SOLV51", "SOLV72", "SOLV39"])
def test_the_grid_form_gives_the_same_answer_as_the_code(name: str) -> None:
    code = BY_ID[name][1]
    by_code = solved({"code": code})
    by_grid = solved({"grid": to_grid(parse_code(code))})
    for key in ("status", "unique", "up_to_flip", "width", "height", "valid"):
        assert by_grid[key] == by_code[key]
    assert by_grid["solution"] == by_code["solution"]  # the same encoding, so the same first model


def test_unsatisfiable_puzzle() -> None:
    result = solved({"code": UNSAT_FLOWER})
    assert result["status"] == "unsat"
    assert result["solution"] is result["rendering"] is result["unique"] is result["valid"] is None
    assert result["second_solution"] is None and result["up_to_flip"] is False
    assert solved({"code": "2:Sr00"})["status"] == "unsat"  # a red diamond with no red partner


def test_joined_tiles_flip_together() -> None:
    assert solved({"code": "2:V00"})["solution"] in ([[1, 0]], [[0, 1]])
    assert solved({"code": "2:V0<0"})["status"] == "unsat"


def test_holes_are_nobodys_neighbour() -> None:
    assert solved({"code": "3:8W08"})["status"] == "unsat"
    result = solved({"code": "3:8W00"})
    assert result["solution"] == [[None, 1, 1]] and result["rendering"] == [" ##"]


def test_without_the_uniqueness_check() -> None:
    result = solved({"code": BY_ID["SOLV51"][1], "unique": False})
    assert result["status"] == "solved" and result["valid"] is True
    assert result["unique"] is None and result["second_solution"] is None


def test_a_time_limit_during_the_uniqueness_check_keeps_the_first_solution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = []
    check = Run.check

    def time_out_on_the_second_check(run: Run, solver: object) -> object:
        checks.append(solver)
        if len(checks) > 1:
            raise TimeLimitExceeded("time limit of 1 s exceeded")
        return check(run, solver)

    monkeypatch.setattr(Run, "check", time_out_on_the_second_check)
    result = solved({"code": BY_ID["SOLV0"][1]})
    assert result["status"] == "solved" and result["valid"] is True
    assert result["unique"] is None and result["second_solution"] is None and len(checks) == 2


def test_progress_is_reported() -> None:
    progress: list[dict] = []
    with Run(60, on_progress=progress.append) as run:
        solve({"code": BY_ID["SOLV0"][1]}, run)
    assert [p["phase"] for p in progress] == ["solving", "checking uniqueness"]


def random_puzzle(rng: random.Random) -> Puzzle:
    """A small puzzle with random symbols, colours, fixed tiles, holes and joins."""
    width, height = rng.randint(1, 4), rng.randint(1, 3)
    tiles: list[Tile | None] = []
    for index in range(width * height):
        if rng.random() < 0.1:
            tiles.append(None)
            continue
        symbol, value = rng.choice([(None, 0)] * 10 + [("dice", v) for v in (1, 2, 3, -1)] + [("diamond", 0)])
        if rng.random() < 0.1:
            symbol, value = "flower", rng.randint(0, 4)
        left = index % width > 0 and tiles[index - 1] is not None and rng.random() < 0.1
        up = index >= width and tiles[index - width] is not None and rng.random() < 0.1
        fixed = not (left or up) and rng.random() < 0.15
        colour = rng.choice([None, "r", "y", "p"])
        tiles.append(Tile(symbol, value, colour, fixed, fixed and rng.random() < 0.5, False, left, up))
    return Puzzle(width, height, tuple(tiles))


def every_solution(puzzle: Puzzle) -> list[list[list[int | None]]]:
    existing = [i for i, tile in enumerate(puzzle.tiles) if tile is not None]
    found = []
    for states in itertools.product([0, 1], repeat=len(existing)):
        cells: list[int | None] = [None] * len(puzzle.tiles)
        for index, state in zip(existing, states, strict=True):
            cells[index] = state
        grid = [cells[r * puzzle.width : (r + 1) * puzzle.width] for r in range(puzzle.height)]
        if is_valid(puzzle, grid):
            found.append(grid)
    return found


def test_the_solver_agrees_with_brute_force_on_random_puzzles() -> None:
    rng = random.Random(2)
    for _ in range(60):
        puzzle = random_puzzle(rng)
        solutions = every_solution(puzzle)
        result = solved({"grid": to_grid(puzzle)})
        assert result["status"] == ("solved" if solutions else "unsat"), puzzle
        if solutions:
            assert result["solution"] in solutions
            # without a fixed tile, solutions come in flipped pairs (unless every tile is a hole)
            pairs = not puzzle.has_fixed and any(tile is not None for tile in puzzle.tiles)
            classes = len(solutions) // 2 if pairs else len(solutions)
            assert result["unique"] is (classes == 1), puzzle
            assert result["second_solution"] is None or result["second_solution"] in solutions


#: seconds within which a stop or a time limit is honoured, Z3's poll for an interrupt and a loaded
#: machine included: far less than hard_grid() takes
HONOURED_WITHIN = 8.0


def hard_grid() -> list:
    """HARD9 tiled 2×2: a 16×16 grid that takes Z3 far longer than these tests wait."""
    rows = to_grid(parse_code(BY_ID["HARD9"][1]))
    return [row * 2 for row in rows] * 2


def test_cancel_during_the_build_stops_the_solve() -> None:
    with Run(120) as run:
        threading.Timer(0.2, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            solve({"grid": hard_grid()}, run)
    assert time.monotonic() - started < HONOURED_WITHIN


@pytest.mark.slow
def test_cancel_from_another_thread_interrupts_a_running_check() -> None:
    stopped: list[float] = []

    def stop() -> None:
        stopped.append(time.monotonic())
        run.stop()

    with Run(120) as run:
        encoding = Encoding(read_grid(hard_grid()), run.context())
        threading.Timer(0.5, stop).start()
        with pytest.raises(Cancelled):
            run.check(encoding.solver)
    assert time.monotonic() - stopped[0] < HONOURED_WITHIN  # Z3 notices an interrupt at its next poll


@pytest.mark.slow
def test_time_limit_stops_the_solve() -> None:
    started = time.monotonic()
    with Run(1.5) as run, pytest.raises(TimeLimitExceeded):
        solve({"grid": hard_grid()}, run)
    assert time.monotonic() - started < 1.5 + HONOURED_WITHIN
