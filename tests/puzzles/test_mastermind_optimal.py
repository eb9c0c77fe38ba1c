"""Strategy `optimal`: the search against brute force on small sizes, the stored trees against the search
(and, for the sizes too slow to search in a test, checked as strategies: every secret played by hand), and
the kinds and the schema with `strategy: "optimal"`."""

import itertools
import json
from functools import cache

import numpy as np
import pytest
from marshmallow import ValidationError

from puzzles import mastermind as mm
from puzzles.mastermind import optimal
from puzzles.runtime import Run
from schemas.mastermind import OPTIMAL_SIZES, GuessParams, PlayParams

from .test_mastermind import fits, paired_score


def brute_force_optimum(n: int, k: int, count: int | None = None) -> int:
    """The least total guesses over every secret (or the first `count` codes), trying every guess at every
    set (no pruning, no symmetry), feedback scored by hand."""
    codes = list(itertools.product(range(k), repeat=n))
    feedback = {(g, s): paired_score(list(s), list(g)) for g in codes for s in codes}

    @cache
    def cost(secrets: tuple) -> int:
        if len(secrets) == 1:
            return 1
        best = None
        for g in codes:
            parts: dict = {}
            for s in secrets:
                parts.setdefault(feedback[g, s], []).append(s)
            if len(parts) == 1 and g not in secrets:
                continue  # learns nothing
            total = len(secrets) + sum(cost(tuple(p)) for f, p in parts.items() if f != (n, 0))
            best = total if best is None else min(best, total)
        return best

    return cost(tuple(codes[:count]))


@pytest.mark.parametrize(("n", "k"), [(2, 2), (2, 3), (2, 4), (3, 2), (3, 3), (2, 5), (4, 2)])
def test_the_search_finds_the_brute_force_optimum(n: int, k: int) -> None:
    search = optimal.Search(n, k)
    total = search.optimum()
    assert total == brute_force_optimum(n, k)
    assert optimal.check(search.tree(), n, k)["total"] == total
    plain = optimal.Search(n, k)  # every guess tried, no symmetry
    assert plain.solve(plain.everything) == total


@pytest.mark.slow
@pytest.mark.parametrize(("n", "k"), [(3, 4), (3, 5), (4, 3)])
def test_symmetry_changes_no_optimum(n: int, k: int) -> None:
    plain = optimal.Search(n, k)
    assert plain.solve(plain.everything) == optimal.Search(n, k).optimum()


def test_the_feedback_table_is_the_rules_by_hand() -> None:
    table = optimal.feedback_table(3, 4)
    codes = list(itertools.product(range(4), repeat=3))
    for g, guess in enumerate(codes):
        for s, secret in enumerate(codes):
            black, white = paired_score(list(secret), list(guess))
            assert table[g, s] == black * 4 + black + white


def test_the_bound_never_exceeds_an_optimum() -> None:
    """The lower bound of a set is at most its cost, on every set a small search solved exactly."""
    search = optimal.Search(3, 4)
    search.optimum()
    exact = [(len(key) // 8, cost) for key, (cost, is_exact, _) in search.memo.items() if is_exact]
    assert len(exact) > 10
    assert all(search.bound(size) <= cost for size, cost in exact)
    # n = 3: 8 feedbacks but all black; 10 codes: 1 found at once, 8 with the 2nd guess, 1 with the 3rd
    assert [search.bound(s) for s in (1, 2, 3, 9, 10)] == [1, 3, 5, 17, 20]


@pytest.mark.parametrize(("n", "k"), [(3, 4), (4, 3), (2, 6)])
def test_the_dynamic_floor_changes_no_optimum_and_never_exceeds_a_cost(n: int, k: int) -> None:
    """The static bound alone (dynamic_from past every set) finds the same optimum; and a fresh search's
    floor of each set the search solved exactly is at most its cost, every floor computed (none memoised)."""
    search = optimal.Search(n, k, dynamic_from=3)
    total = search.optimum()
    static = optimal.Search(n, k, dynamic_from=1 << 30)
    assert static.optimum() == total
    exact = [(key, cost) for key, (cost, is_exact, _) in search.memo.items() if is_exact]
    assert len(exact) > 5
    for key, cost in exact:
        fresh = optimal.Search(n, k, dynamic_from=3)
        secrets = np.frombuffer(key, dtype=np.int64)
        assert fresh.bound(len(secrets)) <= fresh.floor(secrets, None) <= cost


def test_a_search_on_a_local_table_solves_like_the_whole_one_and_prints_no_codes() -> None:
    """The first 5 codes of 3×3 as the secrets, every code a guess: the local table's rows are the guesses
    (the secrets first), its columns the secrets."""
    whole = optimal.Search(3, 3)
    local = optimal.Search(3, 3, table=whole.table[:, :5])
    secrets = np.arange(5, dtype=np.int64)
    assert local.solve(secrets) == whole.solve(secrets) == brute_force_optimum(3, 3, count=5)
    with pytest.raises(ValueError, match="local table"):
        local.text(0)


def test_distinct_rows_are_the_first_of_each_row_even_when_every_hash_collides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = np.array([[0, 1, 1], [2, 0, 0], [0, 1, 1], [1, 0, 0], [2, 0, 0], [0, 1, 2]], dtype=np.int64)
    assert optimal._distinct_rows(rows).tolist() == [0, 1, 3, 5]
    monkeypatch.setattr(optimal, "_hash_weights", lambda width: np.zeros(width, dtype=np.int64))
    assert optimal._distinct_rows(rows).tolist() == [0, 1, 3, 5]


def test_canonical_guesses_are_one_per_class_of_the_symmetries_fixing_the_history() -> None:
    # no history: every code is equivalent to a code whose colours appear in order 0, 1, 2, ...; and the
    # positions may be permuted too, so one code per partition of n
    first = optimal.canonical_guesses(4, 6, [])
    assert [tuple(optimal._all_codes(4, 6)[i].tolist()) for i in first] == [
        (0, 0, 0, 0),
        (0, 0, 0, 1),
        (0, 0, 1, 1),
        (0, 0, 1, 2),
        (0, 1, 2, 3),
    ]
    # after 0011: the free colours 2..5, the swaps of positions (0 1), (2 3), and both halves with 0 ↔ 1
    after = optimal.canonical_guesses(4, 6, [(0, 0, 1, 1)])
    codes = [tuple(c) for c in optimal._all_codes(4, 6).tolist()]
    classes = {}
    for code in codes:
        images = set()
        for swap_halves in (False, True):
            for p01 in (False, True):
                for p23 in (False, True):
                    c = list(code)
                    if p01:
                        c[0], c[1] = c[1], c[0]
                    if p23:
                        c[2], c[3] = c[3], c[2]
                    if swap_halves:
                        c = [{0: 1, 1: 0}.get(x, x) for x in c[2:] + c[:2]]
                    free: dict[int, int] = {}
                    images.add(tuple(x if x < 2 else free.setdefault(x, 2 + len(free)) for x in c))
        classes[code] = min(images)
    assert sorted(codes[i] for i in after) == sorted(set(classes.values()))


# -- the stored trees ------------------------------------------------------------------------------------

QUICK = [(n, k) for n, k in optimal.stored_sizes() if k**n <= 400]


def test_the_stored_sizes_are_the_schemas() -> None:
    assert tuple(optimal.stored_sizes()) == OPTIMAL_SIZES
    assert (4, 6) in OPTIMAL_SIZES


@pytest.mark.parametrize(("n", "k"), QUICK)
def test_a_stored_tree_is_what_the_search_gives(n: int, k: int) -> None:
    search = optimal.Search(n, k)
    total = search.optimum()
    entry = optimal.stored_trees()[f"{n}x{k}"]
    assert entry["total"] == total
    assert entry["tree"] == search.tree()


@pytest.mark.slow
@pytest.mark.parametrize(("n", "k"), [(n, k) for n, k in optimal.stored_sizes() if 400 < k**n <= 800])
def test_a_larger_stored_tree_is_what_the_search_gives(n: int, k: int) -> None:
    test_a_stored_tree_is_what_the_search_gives(n, k)


@pytest.mark.parametrize(("n", "k"), optimal.stored_sizes())
def test_every_stored_tree_plays_every_secret_to_its_stored_total(n: int, k: int) -> None:
    entry = optimal.stored_trees()[f"{n}x{k}"]
    result = optimal.check(entry["tree"], n, k)  # raises on a branch missing for some secret
    assert result["total"] == entry["total"]
    assert result["max"] == entry["max"]
    # every guess is a code of the size, and a node's branches are feedback its guess can get
    for node in optimal.iter_nodes(entry["tree"]):
        guess = optimal.parse_code(node["guess"])
        assert len(guess) == n and all(0 <= c < k for c in guess)
        for branch in node.get("next", {}):
            black, white = map(int, branch.split(","))
            assert black < n and black + white <= n


def test_the_stored_4x6_tree_is_koyama_and_lais_optimum() -> None:
    tree = optimal.stored_tree(4, 6)
    assert optimal.check(tree, 4, 6) == {"total": 5625, "secrets": 1296, "max": 6}
    # every game: each feedback is the rules by hand, and the game ends on its secret
    for secret in itertools.product(range(6), repeat=4):
        game = optimal.walk(tree, secret)
        assert all(paired_score(list(secret), list(g)) == (b, w) for g, b, w in game)
        assert game[-1][0] == secret


def test_the_stored_4x7_tree_is_villes_optimum() -> None:
    """Ville (2013) printed 4.676 guesses a secret; the search's proof takes minutes (see
    bench/mastermind_optimal.py), so the test plays the stored tree: every secret, feedback by hand."""
    tree = optimal.stored_tree(4, 7)
    assert optimal.check(tree, 4, 7) == {"total": 11_228, "secrets": 2_401, "max": 6}
    assert f"{11_228 / 7**4:.3f}" == "4.676"
    for secret in itertools.product(range(7), repeat=4):
        game = optimal.walk(tree, secret)
        assert all(paired_score(list(secret), list(g)) == (b, w) for g, b, w in game)
        assert game[-1][0] == secret


def test_a_set_the_search_solved_is_solved_again_from_its_memo_at_any_limit() -> None:
    search = optimal.Search(3, 5)
    total = search.optimum()
    assert search.solve(search.everything, total + 1, ()) == total
    assert search.solve(search.everything, total, ()) >= total  # cut off: a bound at or above the limit
    fresh = optimal.Search(3, 5)
    assert fresh.solve(fresh.everything, total, ()) >= total
    assert fresh.optimum() == total


# -- the kinds and the schema ------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "total"), [(4, 6, 5625), (4, 7, 11_228), (5, 5, 13_496)])
def test_play_all_secrets_with_optimal_totals_the_optimum(n: int, k: int, total: int) -> None:
    with Run(120) as run:
        result = mm.play({"n": n, "k": k, "secrets": "all", "strategy": "optimal"}, run)
    assert result["games_count"] == k**n
    assert sum(game["turns"] for game in result["games"]) == total
    assert result["avg_turns"] == pytest.approx(total / k**n)
    assert result["unsolved"] == 0 and result["note"] is None
    for game in result["games"]:
        secret = game["secret"]
        assert all(paired_score(secret, e["guess"]) == (e["black"], e["white"]) for e in game["guesses"])
        assert game["guesses"][-1]["guess"] == secret


def test_guess_follows_the_tree_and_searches_a_history_that_left_it() -> None:
    tree = optimal.stored_tree(4, 6)
    with Run(60) as run:
        first = mm.guess({"n": 4, "k": 6, "strategy": "optimal", "history": []}, run)
    assert first["guess"] == list(optimal.parse_code(tree["guess"])) and first["remaining"] == 1296
    secret = (3, 1, 4, 5)
    game = optimal.walk(tree, secret)
    history = [{"guess": list(g), "black": b, "white": w} for g, b, w in game[:2]]
    with Run(60) as run:
        second = mm.guess({"n": 4, "k": 6, "strategy": "optimal", "history": history}, run)
    assert second["guess"] == list(game[2][0]) and second["strategy"] == "optimal"
    # 5555 is no guess of the tree: the codes that fit are searched now
    secret = (2, 0, 4, 1)
    off = []
    for guess in ([5, 5, 5, 5], [0, 0, 1, 2], [3, 3, 4, 4]):
        black, white = paired_score(list(secret), guess)
        off.append({"guess": guess, "black": black, "white": white})
    with Run(60) as run:
        live = mm.guess({"n": 4, "k": 6, "strategy": "optimal", "history": off}, run)
    assert live["strategy"] == "optimal" and live["note"] is None
    fitting = [c for c in itertools.product(range(6), repeat=4) if fits(list(c), off)]
    assert live["remaining"] == len(fitting) and 3 <= len(fitting) <= optimal.LIVE_LIMIT

    def optimum(codes: list) -> int:  # every code a guess, no symmetry
        search = optimal.Search(4, 6)
        return search.solve(np.array(sorted(int("".join(map(str, c)), 6) for c in codes)))

    # the live guess achieves the optimum for those codes
    parts: dict = {}
    for code in fitting:
        parts.setdefault(paired_score(list(code), live["guess"]), []).append(code)
    total = len(fitting) + sum(optimum(part) for feedback, part in parts.items() if feedback != (4, 0))
    assert total == optimum(fitting)


def test_optimal_without_a_stored_tree_is_refused_by_the_schema() -> None:
    with pytest.raises(ValidationError) as refused:
        PlayParams().load({"n": 8, "k": 6, "secrets": {"sample": 3}, "strategy": "optimal"})
    assert "no optimal strategy is stored for n×k = 8×6" in str(refused.value.messages["strategy"])
    with pytest.raises(ValidationError):
        GuessParams().load({"n": 5, "k": 8, "strategy": "optimal"})
    loaded = PlayParams().load({"n": 4, "k": 6, "secrets": "all", "strategy": "optimal"})
    assert loaded["strategy"] == "optimal"
    assert GuessParams().load({"n": 3, "k": 5, "strategy": "optimal"})["strategy"] == "optimal"


def test_optimal_called_directly_without_a_tree_plays_best_and_says_so() -> None:
    with Run(60) as run:
        result = mm.guess({"n": 7, "k": 2, "strategy": "optimal", "history": []}, run)
    assert result["strategy"] == "best" and "no optimal strategy is stored for 7×2" in result["note"]


def test_the_command_reports_each_first_guess_and_stores_the_tree(tmp_path, capsys) -> None:
    out = tmp_path / "trees.json"
    optimal.main(["--n", "3", "--k", "4", "--out", str(out)])
    lines = capsys.readouterr().out.splitlines()
    firsts = [line for line in lines if line.startswith("  first guess ")]
    # each best so far says its total, each other guess a bound at or above the best: the last total is 206
    totals = [int(line.split(": total ")[1].split()[0]) for line in firsts if ": total " in line]
    bounds = [int(line.split(": at least ")[1].split()[0]) for line in firsts if ": at least " in line]
    assert totals[-1] == 206 and totals == sorted(totals, reverse=True)
    assert len(totals) + len(bounds) == len(firsts) and all(bound >= 206 for bound in bounds)
    assert lines[-1].startswith("3x4: total 206 over 64 secrets")
    stored = json.loads(out.read_text())["3x4"]
    assert stored["total"] == 206 and stored["tree"] == optimal.stored_tree(3, 4)
