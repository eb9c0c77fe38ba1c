"""Settings: read from the environment and validated, shown masked, and the dashboard's session secret."""

import os
import re
import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from core.config import (
    PREFIX,
    SECRET_KEY_FILE,
    Settings,
    SettingsError,
    replace,
    secret_key_for,
    shown,
    unknown_variables,
    variable,
)
from tests.support import ROOT


def test_the_secret_key_comes_from_the_environment_first(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ZOLVE_SECRET_KEY", "from-env")
    monkeypatch.setenv("ZOLVE_DATA_DIR", str(tmp_path))
    assert secret_key_for(Settings.from_env()) == "from-env"
    assert not (tmp_path / SECRET_KEY_FILE).exists()


def test_without_one_a_key_is_made_once_and_kept_in_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    first = secret_key_for(settings)
    assert len(first) >= 40 and secret_key_for(settings) == first, "sessions survive a restart"
    path = tmp_path / SECRET_KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [SECRET_KEY_FILE], "no draft left behind"


def test_without_a_data_dir_each_process_has_its_own(tmp_path: Path, caplog) -> None:
    settings = Settings(data_dir=tmp_path / "missing")
    assert secret_key_for(settings) != secret_key_for(settings)
    assert "ZOLVE_SECRET_KEY" in caplog.text
    assert not (tmp_path / "missing").exists()


# -- read from the environment and validated -----------------------------------------------------------
@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """An environment with none of the settings' variables: what a test sets is all there is."""
    for name in [*os.environ]:
        if name.startswith(PREFIX) or name in ("DATABASE_URL", "REDIS_URL"):
            monkeypatch.delenv(name)
    return monkeypatch


def problems_of(env: pytest.MonkeyPatch, **variables: str) -> str:
    for name, value in variables.items():
        env.setenv(name, value)
    with pytest.raises(SettingsError) as refused:
        Settings.from_env()
    return str(refused.value)


def test_each_variable_is_read_into_its_typed_setting(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("ZOLVE_LEASE_SECONDS", "12.5")
    clean_env.setenv("ZOLVE_MAX_ATTEMPTS", "7")
    clean_env.setenv("ZOLVE_DATA_DIR", "/srv/zolve")
    clean_env.setenv("DATABASE_URL", "postgresql://db/zolve")
    clean_env.setenv("ZOLVE_PLUGINS", "not.a.setting")  # another use of the prefix is left alone
    settings = Settings.from_env()
    assert (settings.lease_seconds, settings.max_attempts) == (12.5, 7)
    assert settings.data_dir == Path("/srv/zolve") and settings.database_url == "postgresql://db/zolve"
    assert Settings.from_env().redis_url is None and Settings().lease_seconds == 30.0


def test_an_empty_variable_is_unset_but_empty_text_is_a_value(clean_env: pytest.MonkeyPatch) -> None:
    for name in ("ZOLVE_WATCH_INTERVAL", "ZOLVE_DATA_DIR", "ZOLVE_SECRET_KEY", "ZOLVE_RATE_LIMIT"):
        clean_env.setenv(name, "")
    settings = Settings.from_env()
    assert settings.watch_interval == Settings().watch_interval and settings.data_dir == Settings().data_dir
    assert settings.secret_key is None
    assert settings.rate_limit == "", "an empty rate limit means no limit"


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("ZOLVE_LEASE_SECONDS", "abc", "valid number"),
        ("ZOLVE_LEASE_SECONDS", "0", "greater than 0"),
        ("ZOLVE_MAX_ATTEMPTS", "-3", "greater than or equal to 1"),
        ("ZOLVE_MAX_ATTEMPTS", "2.5", "valid integer"),
        ("ZOLVE_WEBHOOK_TIMEOUT", "nan", "finite number"),
        ("ZOLVE_STREAM_MAX_SECONDS", "inf", "finite number"),
        ("ZOLVE_HSTS_SECONDS", "9" * 40, "less than or equal to 2147483647"),
        ("ZOLVE_SUBMIT_RATE_LIMIT", "lots", "not a rate limit"),
        ("ZOLVE_WEBHOOK_ALLOWED_NETWORKS", "10.0.0.0/8,10.0.0.0/33", "10.0.0.0/33"),
        ("ZOLVE_MAX_BODY_BYTES", "١٠٠", "valid integer"),
        ("DATABASE_URL", "garbage", "not a PostgreSQL URL"),
        ("DATABASE_URL", "mysql://zolve:hush@db/zolve", "not a PostgreSQL URL"),
        ("REDIS_URL", "garbage", "not a Redis URL"),
        ("REDIS_URL", "amqp://guest:hush@mq//", "not a Redis URL"),
        ("REDIS_URL", "unix:///run/redis.sock", "not a Redis URL"),  # Celery's transport has no unix://
    ],
)
def test_a_malformed_or_out_of_range_value_is_refused_by_its_name(
    clean_env: pytest.MonkeyPatch, name: str, value: str, why: str
) -> None:
    problems = problems_of(clean_env, **{name: value})
    assert problems.startswith(f"{name}: ") and why in problems


def test_every_wrong_variable_is_named_at_once(clean_env: pytest.MonkeyPatch) -> None:
    problems = problems_of(clean_env, ZOLVE_LEASE_SECONDS="abc", ZOLVE_MAX_ATTEMPTS="0").splitlines()
    assert [line.split(":")[0] for line in problems] == ["ZOLVE_LEASE_SECONDS", "ZOLVE_MAX_ATTEMPTS"]


def test_settings_that_contradict_each_other_are_refused(clean_env: pytest.MonkeyPatch) -> None:
    problems = problems_of(clean_env, ZOLVE_DEFAULT_TIME_LIMIT="5000")
    assert "ZOLVE_DEFAULT_TIME_LIMIT (5000) is over ZOLVE_MAX_TIME_LIMIT (3600)" in problems
    clean_env.delenv("ZOLVE_DEFAULT_TIME_LIMIT")
    problems = problems_of(clean_env, ZOLVE_SWEEP_INTERVAL="45")
    assert "ZOLVE_SWEEP_INTERVAL (45) is not under ZOLVE_LEASE_SECONDS (30)" in problems


def test_server_urls_of_each_accepted_form_are_taken(clean_env: pytest.MonkeyPatch) -> None:
    for database_url in (
        "postgres://u:p@h/db",
        "postgresql://u:p@h/db",
        "postgresql+psycopg://u@/db?host=/s",
    ):
        for redis_url in ("redis://h:6379/0", "rediss://:p@h/0", "redis+socket:///tmp/redis.sock"):
            clean_env.setenv("DATABASE_URL", database_url)
            clean_env.setenv("REDIS_URL", redis_url)
            assert Settings.from_env().require_urls() == (database_url, redis_url)


def test_a_server_urls_password_is_never_shown_in_its_error(clean_env: pytest.MonkeyPatch) -> None:
    problems = problems_of(clean_env, DATABASE_URL="mysql://zolve:hush@db/zolve", REDIS_URL="http://:hush@r")
    assert "hush" not in problems and problems.count("not a") == 2


def test_a_changed_copy_is_validated_too() -> None:
    assert replace(Settings(), max_attempts=5).max_attempts == 5
    with pytest.raises(ValidationError):
        replace(Settings(), max_attempts=0)


def test_shown_settings_mask_secrets_and_url_passwords() -> None:
    settings = Settings(
        secret_key="hush", database_url="postgresql://zolve:pw@db/zolve", redis_url="redis://r:6379/0"
    )
    values = shown(settings)
    assert (
        values["ZOLVE_SECRET_KEY"] == "(set)" and values["DATABASE_URL"] == "postgresql://zolve:***@db/zolve"
    )
    assert values["REDIS_URL"] == "redis://r:6379/0" and "hush" not in values.values()
    assert {variable(field) for field in Settings.model_fields} == set(values)


def test_every_zolve_variable_the_deployment_files_read_is_known() -> None:
    """`zolve config` calls a ZOLVE_* variable nobody reads a stranger: compose's and the manifests' own
    variables are read (by compose, by Kubernetes), so none of them may be called one."""
    files = [ROOT / "docker-compose.yml", *sorted((ROOT / "deploy").rglob("*.yaml"))]
    named = {name for path in files for name in re.findall(r"\b(ZOLVE_[A-Z0-9_]+)", path.read_text())}
    assert "ZOLVE_PUBLISH_ADDRESS" in named
    assert unknown_variables(dict.fromkeys(named, "")) == []
