"""Hosts on one machine: a network namespace per host, each joined by a veth pair to a bridge that lives in
a namespace of its own. Every address is private to these namespaces (10.77.0.0/24 on the bridge): nothing
is added to the machine's own interfaces, and traffic only ever crosses between the hosts made here.

Faults are made inside the namespaces: a blackhole route in a host cuts it off from one peer (its packets to
that peer are dropped, as in a network partition: established connections hang, new ones time out), and
`power_off` kills every process in a host with SIGKILL and takes its link down.

Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and iproute2; `require_namespaces` fails with the reason when
this machine cannot make namespaces, so the tests never pass without running.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

SUBNET = "10.77.0"
PREFIX_LENGTH = 24
#: namespaces made here are named zmh<pid>-<n>-<role>: a later run removes those of a dead pid
NAME_PATTERN = re.compile(r"^zmh(\d+)-\d+-")
NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000

_counter = itertools.count(1)


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done


def require_namespaces() -> None:
    """Raise with a clear reason when this machine cannot make network namespaces here."""
    probe = f"zmh{os.getpid()}-0-probe"
    try:
        ip("netns", "add", probe)
    except FileNotFoundError as exc:
        raise RuntimeError("the multi-host tests need iproute2's `ip` (Debian package iproute2)") from exc
    except RuntimeError as exc:
        raise RuntimeError(
            f"the multi-host tests need network namespaces (`ip netns add` as root): {exc}"
        ) from exc
    ip("netns", "del", probe)


def namespace_pids(netns: str) -> list[int]:
    done = ip("netns", "pids", netns, check=False)
    return [int(pid) for pid in done.stdout.split()]


def remove_stale_namespaces() -> None:
    """Namespaces (and their processes) left by a run that was killed before it could clean up."""
    for line in ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.strip() else ""
        match = NAME_PATTERN.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        _kill_namespace(name)
        ip("netns", "del", name, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_namespace(netns: str, timeout: float = 10) -> None:
    """SIGKILL every process in the namespace and wait until none is left."""
    deadline = time.monotonic() + timeout
    while pids := namespace_pids(netns):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise RuntimeError(f"processes {pids} of {netns} would not die")
        time.sleep(0.05)


@dataclass
class Host:
    role: str
    netns: str
    address: str
    #: the veth end on the bridge's side (in the hub namespace)
    port: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    def command(self, *args: str) -> list[str]:
        """`args` run in this host: its network namespace, and a UTS namespace whose hostname is the role
        (so a worker's identity, host:pid:boot, names the host it runs on)."""
        script = 'hostname "$0" && exec "$@"'
        return [
            "ip",
            "netns",
            "exec",
            self.netns,
            "unshare",
            "--uts",
            "--",
            "sh",
            "-c",
            script,
            self.role,
            *args,
        ]

    def spawn(self, args: list[str], log_path: Path, env: dict[str, str] | None = None, **popen: Any):
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                self.command(*args),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                **popen,
            )
        self.processes.append(process)
        return process

    def reap(self) -> None:
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
        self.processes = [process for process in self.processes if process.poll() is None]


class Network:
    """The hub (a bridge in a namespace of its own) and the hosts on it."""

    def __init__(self) -> None:
        self.tag = f"zmh{os.getpid()}-{next(_counter)}"
        self.hub = f"{self.tag}-hub"
        self.hosts: dict[str, Host] = {}
        self._clients: list[NetnsThread] = []
        ip("netns", "add", self.hub)
        ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        ip("-n", self.hub, "link", "set", "br0", "up")
        ip("-n", self.hub, "link", "set", "lo", "up")

    def add_host(self, role: str, last_octet: int) -> Host:
        netns, port = f"{self.tag}-{role}", f"v-{role}"
        address = f"{SUBNET}.{last_octet}"
        ip("netns", "add", netns)
        host = Host(role, netns, address, port)
        self.hosts[role] = host
        ip("-n", self.hub, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", netns)
        ip("-n", self.hub, "link", "set", port, "master", "br0", "up")
        ip("-n", netns, "addr", "add", f"{address}/{PREFIX_LENGTH}", "dev", "eth0")
        ip("-n", netns, "link", "set", "eth0", "up")
        ip("-n", netns, "link", "set", "lo", "up")
        return host

    # -- faults ------------------------------------------------------------------------------------
    def cut(self, host: Host, peer: Host) -> None:
        """Drop every packet `host` sends to `peer`: a partition between the two, nothing else."""
        ip("-n", host.netns, "route", "add", "blackhole", f"{peer.address}/32")

    def heal(self, host: Host, peer: Host) -> None:
        ip("-n", host.netns, "route", "del", "blackhole", f"{peer.address}/32")

    def link(self, host: Host, up: bool) -> None:
        ip("-n", self.hub, "link", "set", host.port, "up" if up else "down")

    def power_off(self, host: Host) -> None:
        """As a machine losing power: every process in it killed at once (SIGKILL), and its link down."""
        self.link(host, up=False)
        _kill_namespace(host.netns)
        host.reap()

    def client(self, host: Host) -> NetnsThread:
        thread = NetnsThread(host.netns)
        self._clients.append(thread)
        return thread

    def destroy(self) -> None:
        """Kill every process of every host, and remove the namespaces (safe to call twice)."""
        for thread in self._clients:
            thread.close()
        errors = []
        for host in reversed(self.hosts.values()):  # clients and workers first, servers last
            try:
                _kill_namespace(host.netns)
                host.reap()
            except Exception as exc:
                errors.append(exc)
            ip("netns", "del", host.netns, check=False)
        ip("netns", "del", self.hub, check=False)
        self.hosts.clear()
        if errors:
            raise errors[0]


class NetnsThread:
    """A thread whose sockets live in a host's network namespace (a namespace is per thread on Linux): the
    test process talks to the hosts over their network from here, without joining it as a whole."""

    def __init__(self, netns: str):
        self.netns = netns
        self._pool = ThreadPoolExecutor(1, thread_name_prefix=f"in-{netns}", initializer=self._enter)
        self.local = threading.local()

    def _enter(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(NETNS_DIR / self.netns, os.O_RDONLY)
        try:
            if libc.setns(fd, CLONE_NEWNET) != 0:
                code = ctypes.get_errno()
                raise OSError(code, f"setns({self.netns}): {os.strerror(code or errno.EPERM)}")
        finally:
            os.close(fd)

    def call(self, function: Callable[..., T], *args: Any, timeout: float = 60, **kwargs: Any) -> T:
        return self._pool.submit(function, *args, **kwargs).result(timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
