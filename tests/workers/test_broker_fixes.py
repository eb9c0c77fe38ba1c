"""The canary for workers/broker_fixes.py, which patches kombu's Redis QoS: it fails as soon as a kombu
release changes what the patch relies on, so that the patch is checked again (and PATCHED_KOMBU widened)
rather than broken silently. What the patch is for is tested with a real Redis restarted under a worker
(tests/workers/test_lost_messages.py)."""

from __future__ import annotations

import hashlib
import inspect

import kombu
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from packaging.version import Version

from workers import broker_fixes

#: the first 16 hex digits of the sha256 of each patched method's source, in the kombu releases checked
PATCHED_SOURCES = {"restore_unacked": "8954efef014d546e", "ack": "1bc15a4ddf541af6"}


def _source_digest(method: object) -> str:
    original = getattr(method, "__wrapped__", method)  # the patch wraps it (functools.wraps)
    return hashlib.sha256(inspect.getsource(original).encode()).hexdigest()[:16]


def test_the_installed_kombu_is_one_the_patch_was_checked_against() -> None:
    assert Version(kombu.__version__) in broker_fixes.PATCHED_KOMBU


def test_the_patched_methods_are_the_code_the_patch_was_written_for() -> None:
    found = {name: _source_digest(getattr(kombu_redis.QoS, name)) for name in PATCHED_SOURCES}
    assert found == PATCHED_SOURCES, "kombu's Redis QoS changed: check workers/broker_fixes.py against it"
    assert "self._delivered" in inspect.getsource(virtual.QoS.__init__), "the patch clears QoS._delivered"


def test_install_patches_once_and_leaves_another_release_alone(monkeypatch) -> None:
    broker_fixes.install()
    patched = kombu_redis.QoS.ack
    broker_fixes.install()
    assert kombu_redis.QoS.ack is patched and getattr(patched, "__wrapped__", None) is not None
    monkeypatch.setattr(kombu, "__version__", "9.0.0")
    monkeypatch.setattr(kombu_redis.QoS, "_zolve_patched", False)
    monkeypatch.setattr(kombu_redis.QoS, "ack", patched.__wrapped__)
    broker_fixes.install()
    assert kombu_redis.QoS.ack is patched.__wrapped__, "an unchecked release is not patched"
