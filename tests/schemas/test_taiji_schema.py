import subprocess
import sys
from pathlib import Path

import pytest
from marshmallow import ValidationError

from schemas.taiji import TaijiParams, TaijiResult

PLAIN = {
    "symbol": None,
    "value": 0,
    "colour": None,
    "fixed": False,
    "lit": False,
    "hidden": False,
    "join_left": False,
    "join_up": False,
}


def load(params: dict) -> dict:
    return TaijiParams().load(params)


def messages(params: dict) -> dict:
    with pytest.raises(ValidationError) as err:
        load(params)
    return err.value.messages


def test_a_code_is_accepted_with_defaults() -> None:
    assert load({"code": "3:Kw202200Fw62Dw4"}) == {"code": "3:Kw202200Fw62Dw4", "grid": None, "unique": True}


def test_a_grid_is_accepted_and_its_tiles_get_defaults() -> None:
    die = {"symbol": "dice", "value": -3, "colour": "k"}
    loaded = load({"grid": [[None, die], [{}, {"fixed": True, "lit": True}]], "unique": False})
    assert loaded["code"] is None and loaded["unique"] is False
    assert loaded["grid"] == [[None, {**PLAIN, **die}], [PLAIN, {**PLAIN, "fixed": True, "lit": True}]]


def test_validating_a_code_does_not_import_z3() -> None:
    check = "import sys; from schemas.taiji import TaijiParams; TaijiParams().load({'code': '1:0'}); "
    check += "assert 'z3' not in sys.modules"
    subprocess.run([sys.executable, "-c", check], check=True, cwd=Path(__file__).resolve().parents[2])


@pytest.mark.parametrize(
    "params", [{}, {"unique": True}, {"code": "1:0", "grid": [[{}]]}, {"code": None, "grid": None}]
)
def test_exactly_one_of_code_and_grid(params: dict) -> None:
    assert messages(params) == {"_schema": ["give exactly one of code and grid"]}


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("3:00", "2 tiles do not fill rows of width 3 (last row has 2)"),
        ("3:0x0", "tile 1 (row 0, column 1): expected a tile: [<^/][A–Z][roygbpkw]digit, or 0, found 'x'"),
        ("3:0T20", "tile 1 (row 0, column 1): line symbols are not supported (T = dash)"),
        ("3:+1", "run-length chunk 1 after '+' (+1) must start with a letter A–Z"),
        ("40:0", "width 40 is larger than 32"),
    ],
)
def test_a_malformed_code_is_a_field_error_on_code(code: str, message: str) -> None:
    assert messages({"code": code}) == {"code": [message]}


# str.isdigit() holds for '²' (which int() refuses: once a 500) and for '٣' or '１' (which int() reads as
# 3 and 1): only ASCII digits are numbers in a code
@pytest.mark.parametrize(
    "code", ["²:0", "٣:000", "١:0", "１:0", "1:²", "1:٣", "1:１", "2:0٣", "1:Kw٣", "1:Kw²"]
)
def test_only_ascii_digits_are_numbers_in_a_code(code: str) -> None:
    assert list(messages({"code": code})) == ["code"]


def test_an_overlong_code_is_rejected() -> None:
    assert "code" in messages({"code": "1:" + "0" * 4000})


@pytest.mark.parametrize(
    "grid",
    [
        [[{}] * 33],
        [[{}]] * 33,
        [],
        [[]],
        [[{}], [{}, {}]],
        [[{"symbol": "dice"}]],
        [[{"symbol": "flower", "value": 7}]],
        [[{"symbol": "line"}]],
        [[{"value": "3"}]],
        [[{"colour": "red"}]],
        [[{"size": 2}]],
        [[{"join_up": True}]],
        [[3]],
        "3:00",
    ],
)
def test_a_bad_grid_is_a_field_error_on_grid(grid: object) -> None:
    assert list(messages({"grid": grid})) == ["grid"]


def test_unique_must_be_a_boolean() -> None:
    assert "unique" in messages({"code": "1:0", "unique": "perhaps"})


def test_result_dumps() -> None:
    result = {
        "status": "solved",
        "solution": [[1, None]],
        "rendering": ["# "],
        "unique": True,
        "up_to_flip": True,
        "second_solution": None,
        "width": 2,
        "height": 1,
        "seconds": 0.01,
        "valid": True,
    }
    assert TaijiResult().dump(result) == result
