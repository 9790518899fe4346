"""The ROS 2 test environment works: two processes talk, and only over loopback.

Runs a std_msgs/String publisher and a subscriber as separate processes under the
``ros_env`` fixture (see ``conftest.py``), then checks where their DDS sockets are bound and,
when tcpdump can be run, that no DDS packet of this session's domain leaves loopback.
"""

from __future__ import annotations

import ipaddress
import os
import select
import shutil
import signal
import subprocess
import sys
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

# Seconds a child may take to start, discover its peer and get one message. Discovery is
# announced every 250 ms (config/fastdds_localhost.xml); this is the slow-machine margin.
FIRST_MESSAGE_TIMEOUT = 20.0

TALKER = textwrap.dedent(
    """
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("skel_ros_test_talker")
    publisher = node.create_publisher(String, "skel_ros_test_chatter", 10)
    count = 0

    def publish():
        global count
        publisher.publish(String(data=f"hello {count}"))
        count += 1

    node.create_timer(0.05, publish)
    print("READY", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    """
)

# Prints the first message it gets, then waits for its standard input to close, so the
# test can inspect both processes while they are connected.
LISTENER = textwrap.dedent(
    """
    import sys
    import rclpy
    from rclpy.task import Future
    from std_msgs.msg import String

    rclpy.init()
    node = rclpy.create_node("skel_ros_test_listener")
    first = Future()

    def on_message(message):
        if not first.done():
            first.set_result(message.data)

    node.create_subscription(String, "skel_ros_test_chatter", on_message, 10)
    rclpy.spin_until_future_complete(node, first, timeout_sec=float(sys.argv[1]))
    if not first.done():
        print("TIMEOUT", flush=True)
        sys.exit(1)
    print("RECEIVED", first.result(), flush=True)
    sys.stdin.read()
    node.destroy_node()
    rclpy.try_shutdown()
    """
)


class UdpSocket(NamedTuple):
    """A UDP socket a process has bound."""

    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int


def domain_ports(domain_id: int) -> range:
    """Return the UDP ports of a DDS domain under the RTPS default port mapping.

    PB=7400, DG=250: domain ``d`` owns ``7400 + 250*d`` .. ``7400 + 250*d + 249``; the first
    two are its multicast discovery and user-data ports.
    """
    base = 7400 + 250 * domain_id
    return range(base, base + 250)


def udp_sockets(pid: int) -> list[UdpSocket]:
    """List the bound UDP sockets of process ``pid`` (from /proc; no ss needed)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:  # closed since listed
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    sockets = []
    for table, width in (("/proc/net/udp", 4), ("/proc/net/udp6", 16)):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except FileNotFoundError:  # no IPv6
            continue
        for line in lines:
            fields = line.split()
            local, inode = fields[1], fields[9]
            if inode not in inodes:
                continue
            hex_address, hex_port = local.split(":")
            raw = bytes.fromhex(hex_address)
            # /proc prints each 32-bit word in host (little-endian) order.
            packed = b"".join(raw[i : i + 4][::-1] for i in range(0, width, 4))
            sockets.append(UdpSocket(ipaddress.ip_address(packed), int(hex_port, 16)))
    return sockets


def read_line(process: subprocess.Popen[str], timeout: float) -> str:
    """Read one line of a child's output, failing the test after ``timeout`` seconds."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    if not ready:
        pytest.fail(f"no output from {process.args!r} within {timeout} s")
    return process.stdout.readline().strip()


@contextmanager
def talker_and_listener(env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], ...]]:
    """Start a talker and a listener; yield them once the listener has its first message.

    Yields:
        ``(talker, listener, first_line)``: the processes, and the listener's report.
    """
    talker = subprocess.Popen(
        [sys.executable, "-c", TALKER],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTENER, str(FIRST_MESSAGE_TIMEOUT)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert read_line(talker, FIRST_MESSAGE_TIMEOUT) == "READY"
        first = read_line(listener, FIRST_MESSAGE_TIMEOUT + 5)
        yield talker, listener, first
        assert listener.stdin is not None
        listener.stdin.close()
        assert listener.wait(timeout=10) == 0, listener.stderr.read() if listener.stderr else ""
        talker.send_signal(signal.SIGINT)
        assert talker.wait(timeout=10) == 0, talker.stderr.read() if talker.stderr else ""
    finally:
        for process in (listener, talker):
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


def test_domain_id_is_valid_and_not_default(ros_env: dict[str, str]) -> None:
    domain_id = int(ros_env["ROS_DOMAIN_ID"])
    assert 1 <= domain_id <= 101
    assert os.environ["ROS_DOMAIN_ID"] == ros_env["ROS_DOMAIN_ID"]
    assert ros_env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert Path(ros_env["FASTDDS_DEFAULT_PROFILES_FILE"]).is_file()
    assert Path(ros_env["ROS_HOME"]).is_dir()


CLAIM_FROM = """
import os, sys
os.getpid = lambda: {start}  # the claim starts from the test session's own domain
from skel_ros.nodes.sim_to_real import ros_environment
print(ros_environment({{}})["ROS_DOMAIN_ID"], flush=True)
"""


def test_a_run_started_by_a_test_never_takes_the_sessions_domain(
        ros_env: dict[str, str]) -> None:
    """A run a test starts without a domain (a sweep's trial, a bench) claims one; it must
    not be the domain this test session is on, else its nodes are heard by the session's
    other tests (seen in CI: a sweep trial on one pytest-xdist worker took the other's
    domain, and that worker's sim-to-real run and late recorder heard another robot)."""
    ours = int(ros_env["ROS_DOMAIN_ID"])
    env = {k: v for k, v in ros_env.items() if k != "ROS_DOMAIN_ID"}
    child = subprocess.run([sys.executable, "-c", CLAIM_FROM.format(start=ours - 1)],
                           env=env, capture_output=True, text=True, timeout=60, check=True)
    assert int(child.stdout) != ours


def test_string_crosses_processes_over_loopback_only(ros_env: dict[str, str]) -> None:
    with talker_and_listener(ros_env) as (talker, listener, first):
        assert first.startswith("RECEIVED hello "), first
        ports = domain_ports(int(ros_env["ROS_DOMAIN_ID"]))
        for process in (talker, listener):
            dds = [s for s in udp_sockets(process.pid) if s.port in ports]
            # Each participant listens on unicast metatraffic and user-data ports.
            assert len(dds) >= 2, f"pid {process.pid}: no DDS sockets in {ports}"
            # Fast DDS binds the wildcard address unless the profile's loopback-only
            # transport is in force; multicast ports mean discovery could leave the host.
            assert all(s.address.is_loopback for s in dds), dds
            assert not [s for s in dds if s.port in (ports.start, ports.start + 1)], dds


def _tcpdump_unavailable() -> str | None:
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed (Debian: apt-get install tcpdump)"
    if os.geteuid() != 0:
        return "capturing packets needs root"
    return None


@pytest.mark.skipif(_tcpdump_unavailable() is not None, reason=str(_tcpdump_unavailable()))
def test_no_dds_packet_leaves_loopback(ros_env: dict[str, str], tmp_path: Path) -> None:
    ports = domain_ports(int(ros_env["ROS_DOMAIN_ID"]))
    # Any packet of this domain's ports, or any multicast, with neither end on loopback.
    capture_filter = (
        f"udp and (portrange {ports.start}-{ports.stop - 1} or dst net 224.0.0.0/4)"
        " and not (net 127.0.0.0/8 or host ::1)"
    )
    capture = tmp_path / "dds.pcap"
    tcpdump = subprocess.Popen(
        ["tcpdump", "-i", "any", "-n", "-U", "-w", str(capture), capture_filter],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # tcpdump reports "listening on ..." once the capture is running.
        assert tcpdump.stderr is not None
        said = []
        while not any("listening on" in line for line in said):
            ready, _, _ = select.select([tcpdump.stderr], [], [], 10)
            line = tcpdump.stderr.readline() if ready else ""
            if not line:
                pytest.skip(f"tcpdump did not start: {' / '.join(said) or 'no output'}")
            said.append(line.strip())
        with talker_and_listener(ros_env) as (_, _, first):
            assert first.startswith("RECEIVED hello "), first
    finally:
        tcpdump.send_signal(signal.SIGINT)
        _, errors = tcpdump.communicate(timeout=10)
    packets = subprocess.run(
        ["tcpdump", "-n", "-r", str(capture)], capture_output=True, text=True, check=True
    ).stdout
    assert packets == "", f"DDS traffic off loopback (filter {capture_filter!r}):\n{packets}"
    assert "0 packets captured" in errors, errors
