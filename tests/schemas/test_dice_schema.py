import pytest
from marshmallow import ValidationError

from schemas.dice import DiceParams


def load(params: dict) -> dict:
    return DiceParams().load(params)


def test_defaults_are_filled() -> None:
    assert load({"dice": 3, "faces": 6}) == {"dice": 3, "faces": 6, "max_face": None, "beats": "cycle"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"faces": 6}, "dice"),
        ({"dice": 1, "faces": 6}, "dice"),
        ({"dice": 3, "faces": 500}, "faces"),
        ({"dice": "three", "faces": 6}, "dice"),
        ({"dice": 3, "faces": 6, "beats": "tree"}, "beats"),
        ({"dice": 3, "faces": 6, "beats": [[0, 3]]}, "beats"),
        ({"dice": 3, "faces": 6, "beats": [[1, 1]]}, "beats"),
        ({"dice": 3, "faces": 6, "beats": [[0, 1], [0, 1]]}, "beats"),
        ({"dice": 3, "faces": 6, "beats": [[0, True]]}, "beats"),
        ({"dice": 3, "faces": 6, "max_face": 2}, "max_face"),
        ({"dice": 3, "faces": 6, "colour": "red"}, "colour"),
    ],
)
def test_bad_params_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        load(params)
    assert field in err.value.messages
