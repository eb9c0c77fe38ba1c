"""The `zolve` command line: in-process solving, and the embedded one-command service end to end."""

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests import installed
from tests.support import free_port, installed_popen, run_installed, wait_until


def zolve(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """`zolve ARGS` as a user who installed the wheel runs it (tests/installed.py)."""
    return run_installed(args, env, timeout)


def embedded_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "ZOLVE_API_KEY")}
    return {**env, "ZOLVE_DATA_DIR": str(data_dir)}


@pytest.mark.slow
def test_solve_runs_a_kind_in_process() -> None:
    done = zolve("solve", "dice", "--params", '{"dice": 3, "faces": 6}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["wins"], result["out_of"], result["optimal"]) == (21, 36, True)
    # with no service to share the cores with, the limit is the kind's own or the maximum, said up front
    assert "zolve solve: time limit 3600 s (--time-limit to change it)" in done.stderr


def test_the_help_lists_the_kinds_commands_without_loading_the_store() -> None:
    """`zolve --help` loads every kind (their command groups), not the database layer their hooks use."""
    script = (
        "import sys; from zolve.cli import main; main(['--help'], standalone_mode=False);"
        "print(sorted(name for name in ('store.db', 'sqlalchemy', 'psycopg') if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "planetx" in done.stdout and done.stdout.rstrip().endswith("[]"), done.stdout[-300:]


def test_every_command_that_touches_the_data_dir_takes_data_dir() -> None:
    commands = (
        ["up"],
        ["migrate"],
        ["purge"],
        ["keys", "create"],
        ["keys", "list"],
        ["keys", "revoke"],
        ["healthcheck", "worker"],
    )
    for command in (*commands, ["keys", "set"]):
        assert "--data-dir" in zolve(*command, "--help").stdout, command


@pytest.mark.slow
def test_planetx_deduce_prints_ranked_actions_and_a_sector_table(tmp_path: Path) -> None:
    observations = tmp_path / "obs.json"
    observations.write_text(
        json.dumps([{"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2}])
    )
    done = zolve("planetx", "deduce", "--mode", "standard", "--obs", f"@{observations}", "--top", "3")
    assert done.returncode == 0, done.stderr
    assert "1,830 of 4,446 boards remain" in done.stdout
    assert "next actions" in done.stdout and "sector odds" in done.stdout
    as_json = zolve("planetx", "deduce", "--obs", f"@{observations}", "--top", "3", "--json")
    result = json.loads(as_json.stdout)
    assert result["boards"] == 1830 and len(result["actions"]) == 3
    assert result["actions"][0]["label"].split()[0] in done.stdout
    bad = zolve("planetx", "deduce", "--obs", '[{"type": "target", "sector": 40}]')
    assert bad.returncode == 2 and "sector" in bad.stderr


@pytest.mark.slow
def test_planetx_deduce_weighs_clues_unless_told_to_take_them_as_facts() -> None:
    clue = {"type": "clue", "relation": "within", "quantifier": "all", "distance": 2, "topic": "A"}
    clue |= {"subject": "comet", "object": "asteroid"}
    args = ["planetx", "deduce", "--obs", json.dumps([clue]), "--topic", "A=comet,asteroid", "--json"]
    weighed, plain = (json.loads(zolve(*args, *extra).stdout) for extra in ((), ("--clues-as-facts",)))
    assert weighed["boards"] == plain["boards"] > 0
    assert weighed["planet_x"] != plain["planet_x"]


@pytest.mark.slow
def test_each_in_process_command_names_itself_when_it_says_its_time_limit() -> None:
    les = zolve("les", "E", "L")
    assert les.returncode == 0 and "zolve les: time limit 3600 s" in les.stderr, les.stderr
    deduce = zolve("planetx", "deduce", "--top", "1", "--json")
    assert deduce.returncode == 0 and "zolve planetx deduce: time limit 3600 s" in deduce.stderr, (
        deduce.stderr
    )
    assert "zolve solve" not in les.stderr + deduce.stderr
    timed = zolve("planetx", "deduce", "--top", "1", "--json", "--time-limit", "60")
    assert timed.returncode == 0 and "time limit" not in timed.stderr, timed.stderr


def test_planetx_simulate_prints_the_sample_games_a_job_returns(client, auth, worker, wait_job) -> None:
    """The command plays in this process what the service's job plays on its workers: the same games, the
    same 5 shown in full."""
    done = zolve("planetx", "simulate", "--games", "6", "--seed", "1")
    assert done.returncode == 0, done.stderr
    assert "zolve planetx simulate: time limit 3600 s" in done.stderr
    printed = json.loads(done.stdout)
    params = {"mode": "standard", "games": 6, "seed": 1}
    job = client.post("/jobs", json={"kind": "planetx.simulate", "params": params}, headers=auth).get_json()
    served = wait_job(auth, job["id"])["result"]

    def games(result: dict) -> list[tuple]:
        return [(g["game"], g["board"], g["days"], g["moves"]) for g in result["sample"]]

    assert len(printed["sample"]) == 5 and games(printed) == games(served)
    assert printed["days_histogram"] == served["days_histogram"]


@pytest.mark.slow
def test_solve_reads_params_from_a_file(tmp_path: Path) -> None:
    params = tmp_path / "rpsls.json"
    params.write_text(
        json.dumps(
            {
                "dice": 5,
                "faces": 6,
                "beats": [[0, 2], [0, 3], [1, 0], [1, 4], [2, 1], [2, 3], [3, 1], [3, 4], [4, 2], [4, 0]],
            }
        )
    )
    done = zolve("solve", "dice", "--params", f"@{params}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["wins"] == 20


@pytest.mark.slow
def test_solve_enumerates_planet_x_boards_into_a_file(tmp_path: Path) -> None:
    boards = tmp_path / "boards.csv"
    done = zolve("solve", "planetx.enumerate", "--params", '{"mode": "standard"}', "--boards", str(boards))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 4446
    lines = boards.read_text().splitlines()
    assert lines[0] == "code,board" and len(set(lines[1:])) == 4446


def test_solve_enumerates_taiji_solutions_into_a_file(tmp_path: Path) -> None:
    """A kind solved whole that stores rows writes them in-process too (`--rows`)."""
    solutions = tmp_path / "solutions.csv"
    draft = '{"grid": [[{}, {}, {}], [{}, {}, {}]], "max_solutions": 10}'
    done = zolve("solve", "taiji.enumerate", "--params", draft, "--rows", str(solutions))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"] == "at least 10 solutions (max_solutions was reached)"
    lines = solutions.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    assert lines[0] == "code,solution" and [code for code, _ in rows] == list(map(str, range(10)))
    assert len({solution for _, solution in rows}) == 10


def test_solve_reports_bad_params_and_unknown_kinds() -> None:
    bad = zolve("solve", "dice", "--params", '{"dice": 3}')
    assert bad.returncode == 2 and "faces" in json.loads(bad.stderr)["errors"]["params"]
    missing = zolve("solve", "dice", "--params", "@no-such-params.json")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "cannot read no-such-params.json: No such file or directory" in missing.stderr
    unknown = zolve("solve", "chess")
    assert unknown.returncode == 1 and "unknown kind" in unknown.stderr


@pytest.mark.parametrize("command", ["status", "wait", "cancel", "export"])
def test_a_job_id_cut_short_is_refused_saying_a_whole_one_is_needed(command: str) -> None:
    """Progress lines show a job id's first 8 characters; given one, the command says what it needs
    instead of the API's 404, and asks nothing of any server (none is running here)."""
    short = zolve(command, "f7fa4964", env={**os.environ, "ZOLVE_URL": "http://127.0.0.1:9"}, timeout=60)
    assert short.returncode == 2 and "Traceback" not in short.stderr
    assert "'f7fa4964' is not a whole job id" in short.stderr and "zolve jobs" in short.stderr


def test_solve_prints_json_text_as_it_is_not_escaped() -> None:
    """A refusal's words reach a terminal as written: no \\u escapes of non-ASCII characters."""
    bad = zolve("solve", "taiji.solve", "--params", '{"code": "3:?"}')
    assert bad.returncode == 2 and "[A–Z]" in bad.stderr and "\\u" not in bad.stderr, bad.stderr


def test_an_in_process_command_shows_its_progress_as_the_services_lines_do(capsys) -> None:
    """What a solve reports (Run.progress) goes to stderr, at most every so often, the first only after
    that long: a quick solve prints nothing."""
    from zolve.commands.common import LocalProgress

    quiet = LocalProgress(every=3600)
    quiet({"shards_done": 1, "shards_total": 4})
    assert capsys.readouterr().err == ""
    shown = LocalProgress(every=0)
    shown({"shards_done": 1, "shards_total": 4})
    shown({"phase": "improving", "wins": 20, "out_of": 36})
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and "running · 1/4 shards" in lines[0], lines
    assert "improving" in lines[1] and "wins=20" in lines[1] and lines[1].startswith("["), lines


def test_config_prints_the_settings_in_effect_with_secrets_masked() -> None:
    env = {**os.environ, "ZOLVE_SECRET_KEY": "hush-hush", "ZOLVE_LEASE_SECONDS": "12"}
    env["DATABASE_URL"] = "postgresql://zolve:letmein@db.example/zolve"
    shown = zolve("config", env=env)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert {"ZOLVE_LEASE_SECONDS=12", "ZOLVE_SECRET_KEY=(set)", "ZOLVE_MAX_ATTEMPTS=3"} <= set(lines)
    assert "DATABASE_URL=postgresql://zolve:***@db.example/zolve" in lines
    assert "hush-hush" not in shown.stdout and "letmein" not in shown.stdout
    misspelled = zolve("config", env={**env, "ZOLVE_LEASE_SECOND": "7", "ZOLVE_URL": "http://x"})
    assert misspelled.returncode == 0 and "ZOLVE_LEASE_SECONDS=12" in misspelled.stdout.splitlines()
    said = misspelled.stderr.splitlines()
    assert "ignored, no setting of zolve: ZOLVE_LEASE_SECOND (meant ZOLVE_LEASE_SECONDS?)" in said
    assert not any("ZOLVE_URL" in line for line in said), "the client's own variable is no stranger"


@pytest.mark.parametrize(("name", "value"), [("ZOLVE_LEASE_SECONDS", "abc"), ("ZOLVE_MAX_ATTEMPTS", "-3")])
def test_a_wrong_setting_stops_a_command_naming_its_variable(name: str, value: str) -> None:
    for args in (("config",), ("migrate",)):
        refused = zolve(*args, env={**os.environ, name: value})
        assert refused.returncode == 1 and f"{name}: " in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and refused.stdout == ""


def test_a_bad_plugin_costs_only_the_kinds_commands() -> None:
    """The kinds' command groups load only when asked for: a ZOLVE_PLUGINS module that cannot be
    imported leaves the built-in commands working, with one warning line where the groups are listed."""
    bad = {**os.environ, "ZOLVE_PLUGINS": "no.such.module"}
    listing = zolve("--help", env=bad)
    assert listing.returncode == 0, listing.stderr
    assert "status" in listing.stdout and "planetx" not in listing.stdout
    warnings = [line for line in listing.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "warning" in warnings[0] and "no" in warnings[0], listing.stderr
    status = zolve("status", "--help", env=bad)
    assert status.returncode == 0 and status.stderr == "", status.stderr  # the kinds were never loaded
    assert "JOB_ID" in status.stdout
    good = {k: v for k, v in os.environ.items() if k != "ZOLVE_PLUGINS"}
    planetx = zolve("planetx", "--help", env=good)
    assert planetx.returncode == 0, planetx.stderr
    assert "deduce" in planetx.stdout and "simulate" in planetx.stdout
    assert "planetx" in zolve("--help", env=good).stdout


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if text.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def _start_up(data_dir: Path, port: int) -> subprocess.Popen:
    return installed_popen(
        ["up", "--port", str(port), "--workers", "1", "--api-workers", "1"],
        embedded_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _healthy(url: str) -> bool:
    try:
        return requests.get(f"{url}/health", timeout=1).status_code == 200
    except requests.RequestException:
        return False


#: what the first screen of `zolve up` never shows: the components' banners, warnings, Alembic's lines
#: per revision, pgserver's command lines, tracebacks
NOISE = ("celery@", "-------------- ", "Warning", "Running upgrade", "Running commandline", "Traceback")


def _a_person_reads_the_first_screen(screen: str, data_dir: Path) -> None:
    """Up to the point it is up, a few lines with the key among them, and nothing else said up to the end
    but the supervisor's own lines; what the children said is in the log file."""
    first = screen[: screen.index("Ctrl-C stops everything.")].splitlines() + ["Ctrl-C stops everything."]
    assert len(first) <= 15 and any(line.startswith("admin API key") for line in first), screen
    assert [noise for noise in NOISE if noise in screen] == [], screen
    log_file = data_dir / "logs" / "zolve.log"
    logs = log_file.read_text()
    assert "GET /health" in logs and "zolve.worker" in logs, logs[-2000:]
    modes = (log_file.parent.stat().st_mode & 0o777, log_file.stat().st_mode & 0o777)
    assert modes == (0o700, 0o600), "the access log (clients' addresses) is its user's alone"


def _shutdown(process: subprocess.Popen) -> tuple[str, str]:
    """Ctrl-C, then the rest of what it printed (stdout, stderr), its pipes closed."""
    process.send_signal(signal.SIGINT)
    rest = process.communicate(timeout=60)
    assert process.returncode == 0
    return rest


@pytest.mark.integration
def test_zolve_up_runs_the_whole_service_embedded_and_reuses_its_data(outside_tmp: Path) -> None:
    data_dir = outside_tmp / "data"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    service = _start_up(data_dir, port)
    try:
        wait_until(lambda: _healthy(url) or service.poll() is not None, 120, 0.3, "zolve up")
        assert service.poll() is None, service.stderr.read()
        key_line = service.stdout.readline().strip()
        assert key_line.startswith("ZOLVE_API_KEY=zk_")
        key = key_line.split("=", 1)[1]
        client_env = {**embedded_env(data_dir), "ZOLVE_URL": url, "ZOLVE_API_KEY": key}
        submitted = zolve(
            "submit", "dice", "--params", '{"dice": 3, "faces": 6}', "--wait", "--json", env=client_env
        )
        assert submitted.returncode == 0, submitted.stderr
        job = json.loads(submitted.stdout)
        assert job["state"] == "succeeded" and job["result"]["wins"] == 21
        listed = zolve("jobs", env=client_env)
        assert job["id"][:8] in listed.stdout
        standard = ["planetx.enumerate", "--params", '{"mode": "standard"}']
        enumeration = zolve("submit", *standard, "--wait", "--json", env=client_env)
        assert json.loads(enumeration.stdout)["result"]["count"] == 4446, enumeration.stderr
        exported = zolve("export", json.loads(enumeration.stdout)["id"], "--format", "csv", env=client_env)
        lines = exported.stdout.splitlines()
        assert exported.returncode == 0 and lines[0] == "code,board" and len(lines) == 4447
        both = zolve("jobs", "--kind", "dice", "--kind", "planetx.enumerate", env=client_env)
        listed_ids = [line.split("\t")[0] for line in both.stdout.splitlines()[1:]]
        assert listed_ids == [json.loads(enumeration.stdout)["id"], job["id"]], both.stdout
        status = zolve("status", job["id"], env=client_env)
        assert json.loads(status.stdout)["result"] == job["result"]
        planned = zolve("les", "E", "L", "--url", url, env=client_env)
        assert planned.returncode == 0, planned.stderr
        assert planned.stdout == zolve("les", "E", "L").stdout, "the same text as planned in-process"
        assert (json.loads(planned.stdout)["cost"], json.loads(planned.stdout)["mass"]) == (21, 23)
        stranded = zolve("les", "E", "L", "--cost", "-5", "--url", url, env=client_env)
        assert stranded.returncode == 1 and stranded.stdout == "" and "no plan" in stranded.stderr
        too_late = zolve("cancel", job["id"], env=client_env)
        assert too_late.returncode == 1 and "409" in too_late.stderr
        checked = zolve("healthcheck", "worker", "--data-dir", str(data_dir), env=embedded_env(data_dir))
        assert checked.returncode == 0, checked.stderr
    finally:
        _, screen = _shutdown(service)
    assert _processes_mentioning(str(data_dir)) == [], "a child outlived Ctrl-C"
    down = zolve("healthcheck", "worker", env=embedded_env(data_dir))
    assert down.returncode == 1 and f"no zolve up runs on {data_dir}" in down.stderr, down.stderr
    assert _processes_mentioning(str(data_dir)) == [], "a healthcheck starts no server"
    _a_person_reads_the_first_screen(screen, data_dir)

    # keys can be made with the service down, by the command its first screen gave; the data (jobs, keys)
    # survives a restart
    (more_keys,) = [line for line in screen.splitlines() if line.startswith("more keys: ")]
    command = shlex.split(more_keys.removeprefix("more keys: "))
    assert command[command.index("create") + 1 :] == ["--data-dir", str(data_dir.absolute())], more_keys
    product = installed.product()
    made = subprocess.run(
        command,
        env=product.env(embedded_env(data_dir)),
        cwd=product.workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )
    new_key = made.stdout.strip()
    assert new_key.startswith("zk_"), made.stderr
    assert _processes_mentioning(str(data_dir)) == []
    service = _start_up(data_dir, port)
    try:
        wait_until(lambda: _healthy(url) or service.poll() is not None, 120, 0.3, "zolve up again")
        assert service.poll() is None, service.stderr.read()
        old = requests.get(f"{url}/jobs/{job['id']}", headers={"Authorization": f"Bearer {key}"}, timeout=5)
        assert old.status_code == 200 and old.json()["state"] == "succeeded"
        mine = requests.get(f"{url}/jobs", headers={"Authorization": f"Bearer {new_key}"}, timeout=5)
        assert mine.status_code == 200 and mine.json()["items"] == []
    finally:
        printed, _ = _shutdown(service)
    assert "ZOLVE_API_KEY" not in printed, "the admin key is printed on first start only"


def test_what_needs_the_database_alone_takes_database_url_alone(settings, tmp_path: Path) -> None:
    """A migration, keys and a purge need no broker: with DATABASE_URL set and REDIS_URL not, they use
    that database and start no embedded server (before: both embedded servers, for the broker's sake)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env |= {"DATABASE_URL": settings.database_url, "ZOLVE_DATA_DIR": str(tmp_path / "data")}
    migrated = zolve("migrate", env=env)
    assert migrated.returncode == 0 and "database schema" in migrated.stdout, migrated.stderr
    listed = zolve("keys", "list", env=env)
    assert listed.returncode == 0 and "the database of DATABASE_URL" in listed.stderr, listed.stderr
    assert zolve("purge", "--dry-run", env=env).stdout.startswith("would purge")
    assert not (tmp_path / "data").exists(), "no embedded server was started"
    worker = zolve("worker", env=env)
    assert worker.returncode == 1 and "REDIS_URL is not set" in worker.stderr, worker.stderr


def test_keys_are_listed_and_revoked(settings, client) -> None:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
    created = zolve("keys", "create", "--name", "to-revoke", env=env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    listed = zolve("keys", "list", env=env)
    line = next(row for row in listed.stdout.splitlines() if key[:10] in row)
    key_id = line.split()[0]
    assert "to-revoke" in line and line.rstrip().endswith("-"), listed.stdout

    revoked = zolve("keys", "revoke", key_id, env=env)
    assert revoked.returncode == 0 and f"key {key_id} (to-revoke" in revoked.stdout, revoked.stderr
    line = next(row for row in zolve("keys", "list", env=env).stdout.splitlines() if key[:10] in row)
    assert not line.rstrip().endswith("-"), "the list shows when the key was revoked"
    assert client.get("/jobs", headers={"Authorization": f"Bearer {key}"}).status_code == 401

    unknown = zolve("keys", "revoke", "987654321", env=env)
    assert unknown.returncode == 1 and "there is no key 987654321" in unknown.stderr


def test_a_keys_weight_and_cap_are_set_at_creation_changed_and_refused_out_of_range(settings) -> None:
    env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
    created = zolve("keys", "create", "--name", "team", "--weight", "3", "--max-in-flight", "4", env=env)
    assert created.returncode == 0, created.stderr
    prefix = created.stdout.strip()[:10]
    line = next(row for row in zolve("keys", "list", env=env).stdout.splitlines() if prefix in row)
    key_id = line.split()[0]
    assert line.split()[4:6] == ["3", "4"], line
    changed = zolve("keys", "set", key_id, "--weight", "0.5", env=env)
    assert changed.stdout.strip() == f"key {key_id} (team): weight 0.5, max in flight 4", changed.stderr
    dropped = zolve("keys", "set", key_id, "--no-max-in-flight", env=env)
    assert dropped.stdout.strip() == f"key {key_id} (team): weight 0.5, max in flight -", dropped.stderr
    for args in (["--weight", "0"], ["--weight", "nan"], ["--max-in-flight", "0"]):
        refused = zolve("keys", "set", key_id, *args, env=env)
        assert refused.returncode == 1 and args[0] in refused.stderr, (args, refused.stderr)
        assert "Traceback" not in refused.stderr
    refused = zolve("keys", "create", "--weight", "1000", env=env)
    assert refused.returncode == 1 and "--weight must be from 0.01 to 100" in refused.stderr, refused.stderr
    unknown = zolve("keys", "set", "987654321", "--weight", "2", env=env)
    assert unknown.returncode == 1 and "there is no key 987654321" in unknown.stderr


@pytest.mark.slow
def test_planetx_deduce_takes_the_starting_facts_and_simulate_a_difficulty() -> None:
    args = ["planetx", "deduce", "--json", "--top", "1", "--difficulty", "beginner"]
    dealt = json.loads(zolve(*args, "--starting", "2=comet", "--starting", "9=asteroid").stdout)
    assert dealt["starting_facts"] == 2 and dealt["boards"] < dealt["total_boards"]
    bad = zolve(*args, "--starting", "two=comet")
    assert bad.returncode == 2 and "SECTOR=OBJECT" in bad.stderr
    played = zolve("planetx", "simulate", "--games", "4", "--difficulty", "youth", "--clue-model", "weighted")
    result = json.loads(played.stdout)
    assert result["difficulty"] == "youth" and result["clue_model"] == "weighted" and result["games"] == 4
    assert all(len(game["starting_facts"]) == 12 for game in result["sample"])


def test_up_and_api_refuse_a_port_already_listened_on(settings, tmp_path: Path) -> None:
    """granian shares a port it finds open (SO_REUSEPORT): a second stack on a taken port used to start,
    print its own admin key and take about half of the first one's requests (the resilience audit). Now
    neither command starts anything, and each says why in one line."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        up = zolve("up", "--port", port, env=embedded_env(tmp_path / "data"), timeout=60)
        assert up.returncode == 1 and f"port {port} on 127.0.0.1 is already in use" in up.stderr, up.stderr
        assert "Traceback" not in up.stderr and not (tmp_path / "data" / "postgres").exists()
        servers = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
        api = zolve("api", "--port", port, "--workers", "1", env=servers, timeout=60)
        assert api.returncode == 1 and f"port {port} on 127.0.0.1 is already in use" in api.stderr, api.stderr


def test_a_data_directory_that_cannot_be_used_is_one_line(tmp_path: Path) -> None:
    """Before: a 32-line traceback ending in the OSError (the resilience audit's read-only mount)."""
    through_a_file = tmp_path / "a-file"
    through_a_file.write_text("")
    for args in (("up", "--port", str(free_port())), ("keys", "list")):
        done = zolve(*args, env=embedded_env(through_a_file / "data"), timeout=60)
        said = f"cannot use the data directory {through_a_file / 'data'}: Not a directory"
        assert done.returncode == 1 and said in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_database_that_is_away_is_one_line(tmp_path: Path) -> None:
    """Commands on the database itself (keys, migrate, purge) said a 144-line traceback when it was down."""
    with socket.create_server(("127.0.0.1", 0)) as bound:
        port = bound.getsockname()[1]  # closed again below: nothing listens there
    env = {**embedded_env(tmp_path / "data"), "DATABASE_URL": f"postgresql://zolve@127.0.0.1:{port}/zolve"}
    for args in (("keys", "list"), ("migrate",), ("purge", "--dry-run")):
        done = zolve(*args, env=env, timeout=60)
        assert done.returncode == 1 and "Traceback" not in done.stderr, (args, done.stderr)
        assert "the database is unavailable (connection failed:" in done.stderr, (args, done.stderr)
