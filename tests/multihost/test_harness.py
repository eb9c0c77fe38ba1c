"""The harness itself, without servers: where namespaces cannot be made, the multi-host tests fail and say
why (they never pass or skip unseen)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.multihost import netns
from tests.multihost.conftest import open_cluster


def fake_ip(directory: Path, stderr: str) -> None:
    script = directory / "ip"
    script.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit 2\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_without_permission_to_make_namespaces_the_reason_is_given(tmp_path: Path, monkeypatch) -> None:
    fake_ip(tmp_path, "mount --make-shared /run/netns failed: Operation not permitted")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RuntimeError, match=r"need network namespaces .*Operation not permitted"):
        netns.require_namespaces()


def test_without_iproute2_the_reason_is_given(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="iproute2"):
        netns.require_namespaces()


def test_as_root_a_cluster_that_cannot_be_built_fails_the_test(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    fake_ip(tmp_path, "Operation not permitted")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(pytest.fail.Exception, match="cannot build the multi-host cluster"):
        open_cluster(tmp_path)


def test_not_as_root_the_cluster_skips_the_test_with_the_reason(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(pytest.skip.Exception, match="need root"):
        open_cluster(tmp_path)
