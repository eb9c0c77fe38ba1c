import os
import re
import shutil
import subprocess
import tomllib

import pytest
import yaml

from core.config import Settings
from tests.support import ROOT

REQUIRED = {"POSTGRES_PASSWORD": "a-password", "ZOLVE_SECRET_KEY": "a-key"}


def docker_compose_config(env: dict[str, str], quiet: bool = True) -> subprocess.CompletedProcess:
    if shutil.which("docker-compose") is None:
        pytest.fail("docker-compose is not installed: `make test` installs Debian's docker-compose package")
    clean = {name: value for name, value in os.environ.items() if name not in REQUIRED}
    return subprocess.run(
        ["docker-compose", "config", *(["-q"] if quiet else [])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**clean, **env},
    )


@pytest.mark.integration  # needs docker-compose, which only `make test` installs (scripts/test-tools.sh)
def test_docker_compose_file_is_valid() -> None:
    done = docker_compose_config(REQUIRED)
    assert done.returncode == 0, done.stderr


@pytest.mark.integration
@pytest.mark.parametrize("missing", sorted(REQUIRED))
def test_compose_refuses_to_run_without_a_password_or_secret_key(missing: str) -> None:
    """No default database password, no made-up session key: compose stops and names the variable."""
    done = docker_compose_config({name: value for name, value in REQUIRED.items() if name != missing})
    assert done.returncode != 0 and f"set {missing}" in done.stderr


@pytest.mark.integration
@pytest.mark.parametrize(("address", "published"), [(None, "127.0.0.1"), ("0.0.0.0", "0.0.0.0")])
def test_compose_publishes_the_api_on_loopback_unless_told(address: str | None, published: str) -> None:
    """API keys travel in plain HTTP to the API: other hosts reach it through a proxy, unless told."""
    env = REQUIRED if address is None else {**REQUIRED, "ZOLVE_PUBLISH_ADDRESS": address}
    done = docker_compose_config(env, quiet=False)
    assert done.returncode == 0, done.stderr
    [port] = yaml.safe_load(done.stdout)["services"]["api"]["ports"]
    if isinstance(port, dict):  # compose v2 writes the long form
        port = f"{port['host_ip']}:{port['published']}:{port['target']}/{port['protocol']}"
    assert port == f"{published}:8000:8000/tcp"


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_no_default_password_and_limits_every_service() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert "POSTGRES_PASSWORD:-" not in text and "${POSTGRES_PASSWORD:?" in text
    assert "${ZOLVE_SECRET_KEY:?" in text
    services = compose()["services"]
    for name, service in services.items():
        assert service["deploy"]["resources"]["limits"]["memory"], f"{name} has no memory limit"
    worker = services["worker"]
    assert worker["healthcheck"]["test"] == ["CMD", "zolve", "healthcheck", "worker"]
    assert worker["environment"]["DATABASE_URL"] == services["api"]["environment"]["DATABASE_URL"]
    assert services["api"]["environment"]["ZOLVE_SECRET_KEY"]


def test_compose_runs_every_role() -> None:
    compose = (ROOT / "docker-compose.yml").read_text()
    for service in ("postgres:", "redis:", "migrate:", "api:", "worker:", "short-lane:", "webhooks:"):
        assert f"\n  {service}" in compose


def test_solving_the_short_lane_and_webhooks_run_on_workers_of_their_own() -> None:
    """Each queue has its own workers, in compose and in Kubernetes (tests/workers/test_webhook_queue.py
    shows why: a delivery would otherwise wait for a solver process; tests/security/test_short_lane.py:
    a short job would wait for long ones)."""
    from services.messages import SHORT_QUEUE, SOLVER_QUEUES, WEBHOOK_QUEUE

    def queues(command: list[str]) -> str:
        assert command[:2] == ["zolve", "worker"], command
        return command[command.index("--queues") + 1]

    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert queues(services["worker"]["command"]) == SOLVER_QUEUES
    assert queues(services["short-lane"]["command"]) == SHORT_QUEUE
    assert queues(services["webhooks"]["command"]) == WEBHOOK_QUEUE
    deployments = by_kind("Deployment")
    [solver] = deployments["zolve-worker"]["spec"]["template"]["spec"]["containers"]
    [short] = deployments["zolve-short-lane"]["spec"]["template"]["spec"]["containers"]
    [sender] = deployments["zolve-webhooks"]["spec"]["template"]["spec"]["containers"]
    assert [queues(c["command"]) for c in (solver, short, sender)] == [
        SOLVER_QUEUES,
        SHORT_QUEUE,
        WEBHOOK_QUEUE,
    ]


# -- Kubernetes (deploy/k8s) ----------------------------------------------------------------------------
K8S = ROOT / "deploy" / "k8s"
#: the Kubernetes release whose API schemas the manifests are checked against (kubernetes-validate has them)
KUBERNETES_VERSION = "1.30.0"
#: what the Secret `zolve` must hold (created by hand: see the README); every reference must be one of these
SECRET_KEYS = {"DATABASE_URL", "REDIS_URL", "ZOLVE_SECRET_KEY"}


def manifests() -> list[dict]:
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


def by_kind(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in manifests() if doc["kind"] == kind}


def containers() -> list[tuple[str, dict]]:
    pods = [(name, doc["spec"]["template"]["spec"]) for name, doc in by_kind("Deployment").items()]
    pods += [(name, doc["spec"]["template"]["spec"]) for name, doc in by_kind("Job").items()]
    return [(name, container) for name, pod in pods for container in pod["containers"]]


def test_kubernetes_manifests_match_the_api_schemas() -> None:
    """Strict: an unknown or misspelt field fails too (`kubeconform -strict` would do the same)."""
    import kubernetes_validate

    kinds = set()
    for doc in manifests():
        if doc["apiVersion"].startswith("keda.sh/"):
            continue
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        kinds.add(doc["kind"])
    assert kinds == {"ConfigMap", "Deployment", "Ingress", "Job", "Service"}


def test_the_validator_catches_a_broken_manifest() -> None:
    import kubernetes_validate

    [api] = [
        doc for doc in manifests() if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "zolve-api"
    ]
    api["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["pot"] = 8000
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, KUBERNETES_VERSION, strict=True)


def keda_errors(doc: dict) -> list[str]:
    """What KEDA's CRD schema (as cloudcoil's generated models) refuses, and every field it does not know."""
    from cloudcoil.models.keda import v1alpha1
    from pydantic import ValidationError

    model = getattr(v1alpha1, doc["kind"])
    try:
        parsed = model.model_validate(doc)
    except ValidationError as exc:
        return [str(exc)]
    # the models ignore unknown fields: compare what they kept with what was written
    kept = parsed.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return [f"unknown field {path}" for path in _missing(doc, kept)]


def _missing(written: object, kept: object, path: str = "") -> list[str]:
    if isinstance(written, dict):
        if not isinstance(kept, dict):
            return [path]
        return [
            p
            for key, value in written.items()
            for p in _missing(value, kept.get(key, _GONE), f"{path}.{key}")
        ]
    if isinstance(written, list):
        if not isinstance(kept, list) or len(kept) != len(written):
            return [path]
        return [
            p
            for i, (w, k) in enumerate(zip(written, kept, strict=True))
            for p in _missing(w, k, f"{path}[{i}]")
        ]
    return [] if kept is not _GONE else [path]


_GONE = object()


def test_the_keda_scaled_object_matches_kedas_schema() -> None:
    [scaled] = by_kind("ScaledObject").values()
    assert keda_errors(scaled) == []
    broken = yaml.safe_load(yaml.safe_dump(scaled))
    broken["spec"]["minReplicaCont"] = 1
    assert keda_errors(broken) == ["unknown field .spec.minReplicaCont"]
    broken = yaml.safe_load(yaml.safe_dump(scaled))
    broken["spec"]["triggers"] = "postgresql"
    assert keda_errors(broken), "a wrong type is refused"


def test_the_manifests_refer_to_each_other() -> None:
    deployments, services, config = by_kind("Deployment"), by_kind("Service"), by_kind("ConfigMap")
    [scaled] = by_kind("ScaledObject").values()
    # KEDA scales the worker Deployment, reading the database URL from its container
    worker = deployments[scaled["spec"]["scaleTargetRef"]["name"]]
    [trigger] = scaled["spec"]["triggers"]
    [container] = worker["spec"]["template"]["spec"]["containers"]
    assert trigger["metadata"]["connectionFromEnv"] in {env["name"] for env in container["env"]}
    assert container["command"][:2] == ["zolve", "worker"]
    assert container["livenessProbe"]["exec"]["command"] == ["zolve", "healthcheck", "worker"]
    # the Service selects the API's pods
    api = deployments["zolve-api"]
    assert (
        services["zolve-api"]["spec"]["selector"].items()
        <= api["spec"]["template"]["metadata"]["labels"].items()
    )
    for name, container in containers():
        refs = [env["valueFrom"]["secretKeyRef"] for env in container.get("env", []) if "valueFrom" in env]
        assert {ref["name"] for ref in refs} == {"zolve"} and {ref["key"] for ref in refs} <= SECRET_KEYS, (
            name
        )
        assert {ref["configMapRef"]["name"] for ref in container["envFrom"]} <= set(config), name
        assert container["resources"]["limits"]["memory"], f"{name} has no memory limit"
    api_env = {env["name"] for env in api["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "ZOLVE_SECRET_KEY" in api_env, "several API pods must share the session key"


def test_the_ingress_buffers_requests_caps_each_address_and_is_the_one_trusted_proxy() -> None:
    [ingress] = by_kind("Ingress").values()
    [rule] = ingress["spec"]["rules"]
    [path] = rule["http"]["paths"]
    service = by_kind("Service")[path["backend"]["service"]["name"]]
    assert path["backend"]["service"]["port"]["name"] in {port["name"] for port in service["spec"]["ports"]}
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "proxy-request-buffering"] == "on" and int(notes[prefix + "limit-connections"]) > 0
    # the body cap is the API's own, and event streams outlive their longest life
    assert notes[prefix + "proxy-body-size"] == f"{Settings().max_body_bytes // 1024}k"
    assert int(notes[prefix + "proxy-read-timeout"]) > Settings().stream_max_seconds
    [config] = by_kind("ConfigMap").values()
    assert config["data"]["ZOLVE_TRUSTED_PROXIES"] == "1"


@pytest.mark.integration
def test_the_scaling_query_runs_on_the_schema(db) -> None:
    """KEDA's query reads the real tables (a renamed column would make KEDA stop scaling)."""
    from sqlalchemy import text

    [scaled] = by_kind("ScaledObject").values()
    [trigger] = scaled["spec"]["triggers"]
    with db.session() as session:
        value = session.execute(text(trigger["metadata"]["query"])).scalar_one()
    assert value >= 0


# -- the lock (requirements.lock) ------------------------------------------------------------------------
#: the distributions built from this checkout (client/), never pinned in the lock: installed from here
BUILT_HERE = {"zolve-client"}


def locked() -> dict[str, str]:
    """{package: version} pinned in requirements.lock, each with its hashes."""
    from packaging.utils import canonicalize_name

    text = (ROOT / "requirements.lock").read_text()
    entries = re.findall(r"^([A-Za-z0-9._-]+)==(\S+)((?:\s*\\\n\s+--hash=sha256:[0-9a-f]{64})+)", text, re.M)
    names = re.findall(r"^[A-Za-z0-9._-]+", text, re.M)
    assert len(entries) == len(names), "every entry is pinned with == and carries its hashes"
    return {canonicalize_name(name): version for name, version, _ in entries}


def test_the_lock_pins_every_dependency_of_pyproject_and_what_they_need() -> None:
    from importlib.metadata import requires

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    pins = locked()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(dependency) for dependency in pyproject["project"]["dependencies"]]
    assert len(wanted) > 10
    for requirement in wanted:
        name = canonicalize_name(requirement.name)
        if name in BUILT_HERE:
            assert name not in pins, f"{name} is built from this checkout: a lock's pin would fetch another"
            continue
        assert name in pins, f"{requirement.name} is not in requirements.lock: `make lock`"
        assert requirement.specifier.contains(Version(pins[name]), prereleases=True), f"{requirement} vs lock"
        # what its extras bring (psycopg[binary] needs psycopg-binary), for this Python on Linux
        for extra in requirement.extras:
            for line in requires(requirement.name) or []:
                needed = Requirement(line)
                env = {"extra": extra, "sys_platform": "linux", "platform_system": "Linux"}
                if (
                    needed.marker is not None
                    and needed.marker.evaluate(env)
                    and "extra" in str(needed.marker)
                ):
                    assert canonicalize_name(needed.name) in pins, (
                        f"{requirement.name}[{extra}] needs {needed.name}"
                    )


def test_the_tests_run_on_the_locked_versions() -> None:
    """`make` installs the lock before the project: what CI tests is what the image installs."""
    from importlib.metadata import PackageNotFoundError, version

    drift = {}
    for name, pinned in locked().items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            drift[name] = (pinned, installed)
    assert drift == {}, "installed versions differ from requirements.lock (pinned, installed): `make` again"


def test_the_image_installs_the_locks_and_then_the_wheel_alone() -> None:
    """The image, `make` and the tests' installed copy install the same pinned dependencies (the lock, and
    what it lacks below Python 3.11.3); the image then adds the wheel with no dependency of its own."""
    from tests.installed import LOCKS

    locks = "--require-hashes -r /tmp/requirements.lock -r /tmp/requirements-before-3.11.3.lock"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert LOCKS == ("requirements.lock", "requirements-before-3.11.3.lock")
    wheel = "pip install --no-deps /tmp/wheels/zolve-"
    assert dockerfile.index(f"pip install {locks}") < dockerfile.index(wheel)
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes -r requirements.lock -r requirements-before-3.11.3.lock" in makefile


@pytest.mark.integration
def test_the_worker_healthcheck_sees_this_hosts_worker_and_no_other(worker, worker_env, monkeypatch) -> None:
    """`zolve healthcheck worker`, the compose healthcheck and Kubernetes liveness probe of a worker."""
    import socket

    from click.testing import CliRunner

    from zolve.cli import main

    for name in ("DATABASE_URL", "REDIS_URL"):
        monkeypatch.setenv(name, worker_env[name])
    healthy = CliRunner().invoke(main, ["healthcheck", "worker"])
    assert healthy.exit_code == 0 and "heartbeat" in healthy.output, healthy.output
    monkeypatch.setattr(socket, "gethostname", lambda: "some-other-host")
    elsewhere = CliRunner().invoke(main, ["healthcheck", "worker"])
    assert elsewhere.exit_code == 1 and "no worker process on some-other-host" in elsewhere.output
