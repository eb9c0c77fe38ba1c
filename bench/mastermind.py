"""Mastermind strategies against the seed's SAT AI, 6 colours, in process on every core:

    .venv/bin/python bench/mastermind.py [--lengths 4,8,16] [--games 60] [--long-games 25]
                                         [--strategies consistent,best] [--seed 1] [--bits]
                                         [--secrets random|spaced] [--every 1] [--per-secret]

n = 4 plays all 1296 secrets (and Knuth's minimax as well); longer codes play `--games` random secrets,
`--long-games` from n = 12 up. `--secrets spaced` plays the seed's test set instead, at every length: the
1,000 codes i·6ⁿ//1000 (i = 0…999) evenly spaced over the code space, as base-6 digit strings of length n
(with single-colour and other structured codes among them); `--every m` keeps every m-th of them (i = 0, m,
2m, …: with m prime to 1,000, e.g. 21, in the same mix; every 20th are all structured, i a multiple of 5
repeats with period 5 or less). `consistent` is the seed's method (any code that fits, from the same SAT
encoding). Every row goes through puzzles.mastermind.play, the in-process form of the `mastermind.play`
kind. Prints n, strategy, games, average, median and worst turns, seconds per game (one core), the seed's
published average and the ratio to it; with --per-secret, every secret and its turns; with --bits, also the
bits of information each turn's feedback gave (exact counts, up to n = 16) beside the most a black count
alone can carry. The default run takes about 4 minutes on 2 cores.

Against the best published figures (issue 34), per size n×k:

    .venv/bin/python bench/mastermind.py --published [--sizes 4x6,5x8,8x6,6x9] [--count 10000]
                                         [--secrets-seed 2] [--strategies optimal,best,best-previous]

plays every secret where k**n ≤ 5,000 (else `--count` distinct random secrets drawn with `--secrets-seed`)
with each strategy, and prints games, average, its 95% confidence interval (none when every secret is
played), the worst game, seconds per game (one core), the ratio to the baseline measured in the same run
(`best-previous`, the `best` before issue 34, when it is among the strategies; it plays the first
`--baseline-count` secrets, and the ratio compares the same secrets), the best published average
at that size beside its difference, and the optimum where one is known (PUBLISHED and OPTIMUM below, with
their sources; zolve's own search for the sizes it stores, puzzles/mastermind/optimal_trees.json).
`optimal` is played only at the sizes with a stored tree. A line is printed every `--chunk` games (marked
"so far" until the last). The tuning of `best` (its books, its end game, its middle game) used the first
3,000 secrets of seeds 1, 2, 101 and 201 (TUNING_SEEDS): measure with another.

    .venv/bin/python bench/mastermind.py --published --all-secrets [--sizes 5x8,8x6,6x9]
                                         [--strategies best] [--processes 2] [--depth 3] [--turns-out DIR]

plays every secret at once: each strategy's decision tree is walked (puzzles/mastermind/every.py), cut
`--depth` guesses down and walked in `--processes` processes, so the averages are exact (the figures to
compare with the published ones, which are over every secret too). Beside each: the average without the
tuning secrets (TUNING_SEEDS' and the subtrees that chose the end game's size, TUNING_SUBTREES and
TUNING_PARTS), the turns histogram and the CPU per secret. `--turns-out` saves each secret's turns
(numpy, all_codes order).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from puzzles import mastermind  # noqa: E402
from puzzles.mastermind.every import Node, Walker  # noqa: E402
from puzzles.runtime import Run  # noqa: E402

COLOURS = 6
#: the seed's SAT AI, average turns by code length (6 colours)
SEED_AVERAGE = {4: 4.659, 5: 5.100, 6: 5.572, 7: 6.072, 8: 6.560, 9: 7.237, 10: 7.901, 16: 10.51}


#: the published averages, every secret played: mikemag/Mastermind (https://github.com/mikemag/Mastermind),
#: docs/initial_guesses/preset_initial_guesses.json, each strategy's best average over its first guesses
#: (the figures issue 34 quotes); 4x6 Most Parts and Entropy as issue 34 quotes them
PUBLISHED_SOURCE = (
    "mikemag/Mastermind docs/initial_guesses/preset_initial_guesses.json (every secret played, each"
    " strategy with its best first guess)"
)
PUBLISHED = {
    (4, 6): {"Most Parts": 4.3735, "Entropy": 4.3850, "Expected Size": 4.3951, "Knuth": 4.4761},
    (5, 8): {"Entropy": 5.4856, "Expected Size": 5.4997, "Most Parts": 5.5491, "Knuth": 5.6084},
    (8, 6): {"Entropy": 6.1951, "Most Parts": 6.2755, "Expected Size": 6.3377, "Knuth": 6.3456},
    (6, 9): {"Entropy": 6.2847, "Most Parts": 6.3920, "Knuth": 6.4289, "Expected Size": 6.4650},
    # issue 53: the best published heuristic at each of these sizes, as the issue quotes mikemag's tables
    (4, 7): {"Entropy": 4.7372},
    (5, 5): {"Most Parts": 4.3514, "Entropy": 4.3514},
    (7, 7): {"Entropy": 6.0880},
}
#: known optima (total guesses over every secret, secrets, source); zolve's stored trees add theirs
OPTIMUM = {(4, 6): (5625, 1296, "Koyama & Lai 1993")}
#: the baseline of the ratio column: the `best` before issue 34
BASELINE = "best-previous"


#: the seed's test set: this many codes evenly spaced over the code space
SPACED_COUNT = 1000


def spaced_secrets(n: int, every: int = 1, k: int = COLOURS) -> list[list[int]]:
    """The seed's secrets: code i·kⁿ//1000 for i = 0…999 as a base-k digit string of length n (most
    significant digit first), keeping i = 0, every, 2·every, …"""
    return [list(mastermind.code_at(i * k**n // SPACED_COUNT, n, k)) for i in range(0, SPACED_COUNT, every)]


def secrets_for(
    n: int, games: int, long_games: int, seed: int, kind: str = "random", every: int = 1
) -> str | dict[str, int] | list[list[int]]:
    if kind == "spaced":
        return spaced_secrets(n, every)
    if n == 4:
        return "all"
    return {"sample": games if n < 12 else long_games, "seed": seed}


def play(n: int, strategy: str, secrets: str | dict[str, int], seed: int) -> tuple[dict, float]:
    params = {"n": n, "k": COLOURS, "strategy": strategy, "secrets": secrets, "seed": seed}
    started = time.perf_counter()
    with Run() as run:
        result = mastermind.play(params, run)
    return result, time.perf_counter() - started


def confidence(turns: list[int], every: bool) -> float | None:
    """Half the width of the 95% confidence interval of the mean (normal approximation), or None when
    every secret was played (the mean is exact)."""
    if every or len(turns) < 2:
        return None
    return 1.96 * statistics.stdev(turns) / math.sqrt(len(turns))


def optimum(n: int, k: int) -> tuple[float, str] | None:
    """The optimal average at n×k and its source, where known."""
    if (n, k) in OPTIMUM:
        total, secrets, source = OPTIMUM[(n, k)]
        return total / secrets, source
    from puzzles.mastermind import optimal

    entry = optimal.stored_trees().get(f"{n}x{k}")
    return (entry["total"] / k**n, "zolve's search") if entry else None


def published_row(
    n: int, k: int, strategy: str, games: list[dict], every: bool, ratio: float | None, partial: str = ""
) -> str:
    """One line of the --published table."""
    turns = [game["turns"] for game in games]
    average = sum(turns) / len(turns)
    half = confidence(turns, every)
    # every secret played, but not yet: the first ones in order, no sample of the whole
    interval = f"±{half:.4f}" if half is not None else "-" if partial else "exact"
    seconds = sum(game["seconds"] for game in games) / len(games)
    published = PUBLISHED.get((n, k), {})
    name, value = min(published.items(), key=lambda item: item[1]) if published else ("-", None)
    versus = f"{name} {value:.4f} ({average - value:+.4f})" if value is not None else "-"
    best = optimum(n, k)
    known = f"{best[0]:.4f} ({best[1]})" if best else "-"
    shown = f"{ratio:.4f}" if ratio else "-"
    return (
        f"{n}x{k:<3} {strategy:<14} {len(turns):>6} {average:>7.4f} {interval:>8} {max(turns):>4}"
        f" {seconds:>8.4f} {shown:>7}  {versus:<28} {known}{partial}"
    )


def published_line(n: int, k: int) -> str:
    """Every published average at n×k, best first, and the optimum where known."""
    published = sorted(PUBLISHED.get((n, k), {}).items(), key=lambda item: item[1])
    figures = ", ".join(f"{name} {value:.4f}" for name, value in published) or "none"
    best = optimum(n, k)
    known = f"{best[0]:.4f} ({best[1]})" if best else "not known"
    return f"{n}x{k}: published {figures}; optimum {known}"


def run_published(
    sizes: list[tuple[int, int]],
    strategies: list[str],
    count: int,
    secrets_seed: int,
    baseline_count: int,
    chunk: int,
) -> None:
    from puzzles.mastermind import book, optimal

    print(f"published: {PUBLISHED_SOURCE}; optimum 4x6: Koyama & Lai 1993")
    print(f"best's first two guesses at {', '.join(sorted(book.stored_books()))}: its opening book")
    print(
        f"{'size':<6} {'strategy':<14} {'games':>6} {'avg':>7} {'95% CI':>8} {'max':>4} {'s/game':>8}"
        f" {'ratio':>7}  {'best published (avg − it)':<28} optimum"
    )
    for n, k in sizes:
        print(published_line(n, k), flush=True)
        every = k**n <= mastermind.ALL_LIMIT
        secrets = [
            list(code)
            for code in mastermind.secrets_of(
                {"n": n, "k": k, "secrets": "all" if every else {"sample": count, "seed": secrets_seed}}
            )
        ]
        baseline: float | None = None
        ordered = sorted(strategies, key=lambda s: s != BASELINE)  # the baseline first
        for strategy in ordered:
            if strategy == "optimal" and optimal.stored_tree(n, k) is None:
                continue
            # the baseline plays the first baseline_count secrets (all of them when every secret is played)
            played = secrets if every or strategy != BASELINE else secrets[:baseline_count]
            games: list[dict] = []
            for start in range(0, len(played), chunk):
                params = {"n": n, "k": k, "strategy": strategy, "secrets": played[start : start + chunk]}
                with Run() as run:
                    games += mastermind.play({**params, "seed": 0}, run)["games"]
                if strategy == BASELINE:
                    baseline = sum(g["turns"] for g in games) / len(games)
                # the ratio compares the same secrets: every one (once all are played), or the baseline's
                if every:
                    same = games if len(games) == len(played) else []
                else:
                    same = games[: len(played) if strategy == BASELINE else baseline_count]
                ratio = None
                if baseline and same and (every or len(games) >= baseline_count):
                    ratio = sum(g["turns"] for g in same) / len(same) / baseline
                partial = f"  (so far: {len(games)} of {len(played)})" if len(games) < len(played) else ""
                print(published_row(n, k, strategy, games, every, ratio, partial), flush=True)


#: the secret seeds whose first TUNING_COUNT secrets tuned `best` (books, end game, middle game; seed 2's
#: first 300 chose the 6x9 middle game): --all-secrets also prints the average without them
TUNING_SEEDS = (1, 2, 101, 201)
TUNING_COUNT = 3_000

_WALKER: Walker | None = None
_TURNS = np.zeros(0, dtype=np.int8)


def _start_walker(n: int, k: int, strategy: str) -> None:
    global _WALKER, _TURNS
    _WALKER = Walker(n, k, strategy, 0, Run().__enter__())  # one run for the pool process's life
    _TURNS = np.zeros(k**n, dtype=np.int8)  # each node writes only its own secrets


def _walk_node(node: Node) -> tuple[np.ndarray, np.ndarray, float]:
    started = time.process_time()
    _WALKER.walk(node, _TURNS)
    return node[1], _TURNS[node[1]], time.process_time() - started


#: the end game's size (puzzles.mastermind.stronger: ENDGAME, PREVIOUS_ENDGAME, EXTRA) was chosen on random
#: subtrees three guesses down (Random(11).sample of the subtrees), drawn from the tree of the code before
#: (STRONGER_BEFORE): their secrets are left out of the average without tuning too
TUNING_SUBTREES = {(8, 6): 1_500, (6, 9): 700}
STRONGER_BEFORE = {"ENDGAME": 40, "PREVIOUS_ENDGAME": 70, "EXTRA": 200}


#: at 7×7 the end game's size (stronger.ENDGAME_AT) was chosen on the parts of more than 120 codes three
#: guesses down (the books' guesses, whatever the end game's size): Random(5).sample of 150 of them
TUNING_PARTS = {(7, 7): (150, 120, 5)}


def tuning_parts(n: int, k: int) -> np.ndarray:
    """The indexes of the secrets in the parts that chose the end game's size at n×k (TUNING_PARTS)."""
    if (n, k) not in TUNING_PARTS:
        return np.zeros(0, dtype=np.int64)
    count, above, seed = TUNING_PARTS[(n, k)]
    with Run() as run:
        nodes = Walker(n, k, "best", 0, run).subtrees(3, np.zeros(k**n, dtype=np.int8))
    large = [index for index, node in enumerate(nodes) if len(node[1]) > above]
    picked = sorted(random.Random(seed).sample(large, count))
    return np.concatenate([nodes[index][1] for index in picked])


def tuning_subtrees(n: int, k: int) -> np.ndarray:
    """The indexes of the secrets in the subtrees that chose the end game's size at n×k."""
    from puzzles.mastermind import stronger

    if (n, k) in TUNING_PARTS:
        return tuning_parts(n, k)
    if (n, k) not in TUNING_SUBTREES:
        return np.zeros(0, dtype=np.int64)
    now = {name: getattr(stronger, name) for name in STRONGER_BEFORE}
    kept = dict(stronger._THIRD)  # third-turn decisions this process made with today's constants
    try:
        for name, value in STRONGER_BEFORE.items():
            setattr(stronger, name, value)
        stronger._THIRD.clear()
        with Run() as run:  # three guesses down the tree is the books' and the end game's, nothing else
            nodes = Walker(n, k, "best", 0, run).subtrees(3, np.zeros(k**n, dtype=np.int8))
    finally:
        for name, value in now.items():
            setattr(stronger, name, value)
        stronger._THIRD.clear()
        stronger._THIRD.update(kept)
    picked = random.Random(11).sample(range(len(nodes)), TUNING_SUBTREES[(n, k)])
    return np.concatenate([nodes[index][1] for index in picked])


def tuning_secrets(n: int, k: int) -> np.ndarray:
    """The indexes (into every code) of the secrets that tuned `best` at n×k: the first TUNING_COUNT of each
    tuning seed, and the subtrees that chose the end game's size."""
    indexes = set(tuning_subtrees(n, k).tolist())
    for seed in TUNING_SEEDS if k**n >= TUNING_COUNT else ():
        sample = {"sample": TUNING_COUNT, "seed": seed}
        for code in mastermind.secrets_of({"n": n, "k": k, "secrets": sample}):
            indexes.add(sum(colour * k ** (n - 1 - i) for i, colour in enumerate(code)))
    return np.array(sorted(indexes), dtype=np.int64)


def walk_every_secret(n: int, k: int, strategy: str, processes: int, depth: int) -> tuple[np.ndarray, float]:
    """The turns of every secret (in all_codes order), the strategy's tree walked by `processes` processes
    below `depth` guesses; and the CPU seconds of all of them."""
    started = time.process_time()
    turns = np.zeros(k**n, dtype=np.int8)
    with Run() as run:
        nodes = Walker(n, k, strategy, 0, run).subtrees(depth, turns)
    cpu = time.process_time() - started
    nodes.sort(key=lambda node: -len(node[1]))  # the largest first: the pool ends together
    done, reported = 0, 0
    context = multiprocessing.get_context("fork")
    with context.Pool(processes, _start_walker, (n, k, strategy)) as pool:
        for count, (secrets, found, seconds) in enumerate(pool.imap_unordered(_walk_node, nodes), 1):
            turns[secrets], cpu, done = found, cpu + seconds, done + len(secrets)
            if done * 10 // len(turns) > reported:  # about every tenth of the secrets
                reported = done * 10 // len(turns)
                print(f"  {n}x{k} {strategy}: {count} of {len(nodes)} subtrees, {done:,} secrets", flush=True)
    return turns, cpu


def run_all_secrets(
    sizes: list[tuple[int, int]], strategies: list[str], processes: int, depth: int, turns_out: str | None
) -> None:
    """Every secret of each size, by walking each strategy's decision tree: exact averages."""
    print(f"published: {PUBLISHED_SOURCE}")
    print(
        f"{'size':<6} {'strategy':<9} {'secrets':>9} {'avg':>7} {'max':>4} {'CPU ms/secret':>13}"
        f"  {'best published (avg − it)':<28} {'without tuning secrets':>22}  turns: secrets"
    )
    if "consistent" in strategies:
        raise SystemExit("--all-secrets: Z3 picks consistent's guesses, so no walk replays its games")
    if turns_out:
        Path(turns_out).mkdir(parents=True, exist_ok=True)
    for n, k in sizes:
        tuned = None
        for strategy in strategies:
            started = time.perf_counter()
            turns, cpu = walk_every_secret(n, k, strategy, processes, depth)
            if not turns.all():
                raise RuntimeError(f"{n}x{k}: {int((turns == 0).sum())} secrets were not reached")
            if turns_out:
                np.save(Path(turns_out) / f"turns_{n}x{k}_{strategy}.npy", turns)
            average = float(turns.mean())
            published = PUBLISHED.get((n, k), {})
            name, value = min(published.items(), key=lambda item: item[1]) if published else ("-", None)
            versus = f"{name} {value:.4f} ({average - value:+.4f})" if value is not None else "-"
            tuned = tuning_secrets(n, k) if tuned is None else tuned
            kept = np.ones(len(turns), dtype=bool)
            kept[tuned] = False
            # a small size's every code may be among the tuning seeds' secrets
            untuned = f"{float(turns[kept].mean()):.4f} ({int(kept.sum()):,})" if kept.any() else "- (0)"
            spread = ", ".join(f"{t}: {c:,}" for t, c in enumerate(np.bincount(turns)) if c)
            print(
                f"{n}x{k:<3} {strategy:<9} {len(turns):>9,} {average:>7.4f} {int(turns.max()):>4}"
                f" {1000 * cpu / len(turns):>13.3f}  {versus:<28} {untuned:>22}  {spread}"
                f"  (total {int(turns.sum()):,}; wall {time.perf_counter() - started:.0f} s)",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", default="4,8,16", help="code lengths, comma-separated")
    parser.add_argument("--games", type=int, default=60, help="random secrets per length below 12")
    parser.add_argument("--long-games", type=int, default=25, help="random secrets per length from 12")
    parser.add_argument("--strategies", default="consistent,best")
    parser.add_argument("--seed", type=int, default=1, help="seeds the secrets and the strategies")
    parser.add_argument(
        "--secrets",
        choices=["random", "spaced"],
        default="random",
        help="random samples (default), or the seed's 1,000 evenly spaced codes i·6ⁿ//1000",
    )
    parser.add_argument("--every", type=int, default=1, help="with --secrets spaced: every m-th of the 1,000")
    parser.add_argument("--per-secret", action="store_true", help="also print every secret and its turns")
    parser.add_argument(
        "--bits", action="store_true", help="also print the information each turn gained (exact counts)"
    )
    parser.add_argument("--published", action="store_true", help="per size n×k against the published figures")
    parser.add_argument("--sizes", default="4x6,5x8,8x6,6x9", help="with --published: sizes n×k")
    parser.add_argument("--count", type=int, default=10_000, help="with --published: random secrets per size")
    parser.add_argument("--secrets-seed", type=int, default=2, help="with --published: seeds the secrets")
    parser.add_argument(
        "--baseline-count",
        type=int,
        default=1_000,
        help="with --published: the baseline plays the first ones",
    )
    parser.add_argument(
        "--chunk", type=int, default=1_000, help="with --published: print every this many games"
    )
    parser.add_argument(
        "--all-secrets",
        action="store_true",
        help="with --published: every secret, the strategy's decision tree walked once (exact averages)",
    )
    parser.add_argument("--processes", type=int, default=2, help="with --all-secrets: walkers in parallel")
    parser.add_argument("--depth", type=int, default=3, help="with --all-secrets: where the tree is cut")
    parser.add_argument("--turns-out", help="with --all-secrets: a directory for each secret's turns (.npy)")
    args = parser.parse_args()
    if args.published and args.all_secrets:
        sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
        strategies = args.strategies if args.strategies != "consistent,best" else "best"
        return run_all_secrets(sizes, strategies.split(","), args.processes, args.depth, args.turns_out)  # type: ignore[arg-type]
    if args.published:
        sizes = [tuple(int(part) for part in size.split("x")) for size in args.sizes.split(",")]
        strategies = args.strategies if args.strategies != "consistent,best" else "optimal,best,best-previous"
        return run_published(
            sizes,  # type: ignore[arg-type]
            strategies.split(","),
            args.count,
            args.secrets_seed,
            args.baseline_count,
            args.chunk,
        )
    if args.every < 1:
        parser.error("--every must be at least 1")

    header = f"{'n':>3} {'strategy':<11} {'games':>6} {'avg':>6} {'median':>6} {'max':>4} {'s/game':>7}"
    print(header + f" {'wall s':>7} {'seed avg':>8} {'ratio':>6}")
    for n in (int(length) for length in args.lengths.split(",")):
        strategies = args.strategies.split(",") + (["minimax"] if n == 4 else [])
        secrets = secrets_for(n, args.games, args.long_games, args.seed, args.secrets, args.every)
        for strategy in strategies:
            result, wall = play(n, strategy, secrets, args.seed)
            seed_avg = SEED_AVERAGE.get(n)
            ratio = f"{result['avg_turns'] / seed_avg:6.3f}" if seed_avg else f"{'-':>6}"
            median = statistics.median(game["turns"] for game in result["games"])
            print(
                f"{n:>3} {strategy:<11} {result['games_count']:>6} {result['avg_turns']:>6.3f} {median:>6g}"
                f" {result['max_turns']:>4} {result['seconds_per_game']:>7.3f} {wall:>7.1f}"
                f" {seed_avg or '-':>8} {ratio}",
                flush=True,
            )
            if args.per_secret:
                for game in result["games"]:
                    print(f"    {''.join(str(c) for c in game['secret'])} {game['turns']:>3}")
            if args.bits:
                print_bits(n, result["games"])


#: the most a black count can tell once the colour counts are known: a sum of n yes/no matches has
#: variance at most n/4 (more only through correlated matches), and no integer variable of variance v
#: carries more than ½·log2(2πe(v + 1/12)) bits
def black_ceiling(n: int) -> float:
    return 0.5 * math.log2(2 * math.pi * math.e * (n / 4 + 1 / 12))


def print_bits(n: int, games: list[dict]) -> None:
    """Per turn, over the games still going: the bits of information that turn's feedback gave
    (log2 of the codes that fit before over after), and the bits still missing after it."""
    gained: dict[int, list[float]] = {}
    left: dict[int, list[float]] = {}
    with Run() as run:
        for game in games:
            before = n * math.log2(COLOURS)
            history: tuple = ()
            for turn, entry in enumerate(game["guesses"], 1):
                history += ((tuple(entry["guess"]), entry["black"], entry["white"]),)
                count = 1 if entry["black"] == n else mastermind.exact_count(n, COLOURS, history, run)
                if count is None:
                    return print("    (no exact counts at this size)")
                after = math.log2(count)
                gained.setdefault(turn, []).append(before - after)
                left.setdefault(turn, []).append(after)
                before = after
    ceiling = black_ceiling(n)
    print(f"    turn  games  bits gained  bits left   (a black count alone: at most {ceiling:.2f} bits)")
    for turn in sorted(gained):
        bits, rest = gained[turn], left[turn]
        print(f"    {turn:>4} {len(bits):>6} {sum(bits) / len(bits):>12.2f} {sum(rest) / len(rest):>10.2f}")


if __name__ == "__main__":
    main()
