"""Settings: the dashboard's session secret."""

import stat
from pathlib import Path

from core.config import SECRET_KEY_FILE, Settings, secret_key_for


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
