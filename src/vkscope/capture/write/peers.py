"""Who is on the other end of a connection to the capture server, and whether it may write.

A capture belongs to the user who started it: a process of another local user that connects
must not add to it, or damage it with bytes that are not the protocol. What the server can know:

- a Unix socket (a path, or Linux's abstract namespace, which has no permissions at all): the
  peer's pid and user, from the kernel (SO_PEERCRED);
- TCP from this machine (`adb reverse` ends in the local adb server's connection): the user that
  owns the connecting socket, as `ss -e` shows it: asked of the kernel for that one socket, by the
  two ends' addresses (sock_diag over netlink, about 0.1 ms), else found in /proc/net/tcp (which
  the kernel writes out whole: several milliseconds, even with few sockets);
- TCP from another machine, or from a socket the table does not show (another network namespace,
  not Linux): nothing. Such a peer is let in only where the server was asked to listen on an
  address other machines can reach, which is asking for them.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import pwd
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_PROC_NET: Final = Path("/proc/net")
# A TIME_WAIT socket belongs to no process any more, and shows uid 0.
_TCP_TIME_WAIT: Final = 6


@dataclass(frozen=True, slots=True)
class Peer:
    """What the server knows of a connection's other end: `name` for the capture's processes
    table, `refused` (None: let in) saying why it may not write."""

    name: str
    refused: str | None = None


def check_peer(sock: socket.socket, address: object, listening_on: str) -> Peer:
    """Identifies the peer of a connection just accepted on `listening_on` (the server's own
    address, `unix:...` or `tcp:HOST:PORT`) and decides whether it may write to the capture."""
    me = os.geteuid()
    if sock.family == socket.AF_UNIX:
        creds = _unix_credentials(sock)
        if creds is None:  # not Linux: the socket's folder is the only guard
            return Peer("unix")
        pid, uid = creds
        name = f"unix:pid {pid}"
        if uid != me:
            return Peer(name, f"{name} runs as user {_user(uid)}, not {_user(me)}")
        return Peer(name)
    host, port = address[0], address[1]  # type: ignore[index]
    name = f"tcp:{host}:{port}"
    owner = _tcp_owner(sock)
    if owner is not None:
        if owner != me:
            return Peer(name, f"{name} is a socket of user {_user(owner)}, not {_user(me)}")
        return Peer(name)
    if _loopback(host) or _loopback(_host_of(listening_on)):
        return Peer(
            name,
            f"{name}: could not tell which user connected (a socket this machine's "
            "table does not show); only the user who started the capture may write to it",
        )
    return Peer(name)  # another machine, on an address the server was asked to open to them


def _unix_credentials(sock: socket.socket) -> tuple[int, int] | None:
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid


def _tcp_owner(sock: socket.socket) -> int | None:
    """The uid owning the socket at the other end of `sock`, when it is on this machine and the
    kernel says; None otherwise."""
    try:
        ours = sock.getsockname()
        theirs = sock.getpeername()
    except OSError:
        return None
    family, ours_host, theirs_host = sock.family, _unmapped(ours[0]), _unmapped(theirs[0])
    if family == socket.AF_INET6 and ":" not in ours_host + theirs_host:
        family = socket.AF_INET  # an IPv4 peer of a dual-stack socket: a tcp (not tcp6) socket
    local = (theirs_host, theirs[1])  # the peer's socket: its local end is our peer
    remote = (ours_host, ours[1])
    answered, owner = _sock_diag_owner(family, local, remote)
    return owner if answered else _proc_owner(family, local, remote)


_SOCK_DIAG_BY_FAMILY: Final = 20
_NETLINK_SOCK_DIAG: Final = 4
_NLMSG_ERROR: Final = 2
_NLM_F_REQUEST: Final = 1
_INET_DIAG_NOCOOKIE: Final = 0xFFFFFFFF
_UID_AT: Final = 16 + 64  # netlink header, then inet_diag_msg's fields before idiag_uid


def _sock_diag_owner(
    family: int, local: tuple[str, int], remote: tuple[str, int]
) -> tuple[bool, int | None]:
    """Whether the kernel answered (sock_diag), and the uid of the TCP socket with these two
    ends (None: it has no such socket)."""

    def address(host: str) -> bytes:
        return socket.inet_pton(family, host).ljust(16, b"\0")

    sockid = struct.pack("!HH", local[1], remote[1]) + address(local[0]) + address(remote[0])
    sockid += struct.pack("=III", 0, _INET_DIAG_NOCOOKIE, _INET_DIAG_NOCOOKIE)
    request = struct.pack("=BBBBI", family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(1.0)
            nl.send(header + request)
            reply = nl.recv(8192)
    except (OSError, AttributeError):  # no netlink (not Linux), no sock_diag in this kernel
        return False, None
    if len(reply) < 16:
        return False, None
    kind = struct.unpack_from("=H", reply, 4)[0]
    if kind == _NLMSG_ERROR:
        error = -struct.unpack_from("=i", reply, 16)[0] if len(reply) >= 20 else 0
        return error == errno.ENOENT, None
    if kind != _SOCK_DIAG_BY_FAMILY or len(reply) < _UID_AT + 4:
        return False, None
    if reply[17] == _TCP_TIME_WAIT:  # idiag_state: a socket no process has, shown as uid 0
        return True, None
    uid: int = struct.unpack_from("=I", reply, _UID_AT)[0]
    return True, uid


def _proc_owner(family: int, local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    table = "tcp6" if family == socket.AF_INET6 else "tcp"
    want_local = _proc_address(family, *local)
    want_remote = _proc_address(family, *remote)
    try:
        lines = (_PROC_NET / table).read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 7 and fields[1] == want_local and fields[2] == want_remote:
            if int(fields[3], 16) == _TCP_TIME_WAIT:
                return None
            return int(fields[7])
    return None


def _proc_address(family: int, host: str, port: int) -> str:
    """An address as /proc/net/tcp{,6} print it: the address's bytes in 32-bit words of this
    machine's byte order, each in hex, then the port."""
    raw = socket.inet_pton(family, host)
    words = struct.unpack(f"={len(raw) // 4}I", raw)
    return "".join(f"{w:08X}" for w in words) + f":{port:04X}"


def _unmapped(host: str) -> str:
    bare = host.split("%")[0]
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return bare
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return bare


def _host_of(address: str) -> str:
    kind, _, where = address.partition(":")
    return where.rpartition(":")[0].strip("[]") if kind == "tcp" else ""


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(_unmapped(host)).is_loopback
    except ValueError:
        return False


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"
