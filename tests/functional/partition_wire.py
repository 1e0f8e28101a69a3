"""The wires of the partition tests' network: run as a process of its own.

::

    python partition_wire.py --link NS_TAP:HOST_TAP ... [--relay PORT:HOST:PORT ...]

Each ``--link`` is one network link between a conductor's namespace and the
host: two TAP devices this process creates and joins, copying every
Ethernet frame from one to the other. The test moves the first into the
conductor's namespace and gives both an address. The kernel this runs on
has no ``sch_netem`` (``tc qdisc add ... netem`` answers "Specified qdisc
kind is unknown"), so this is where a link's latency and loss are made:
frames from the namespace wait ``delay`` seconds (the conductor's egress,
as netem on its interface would delay them), and frames either way are
dropped with probability ``loss``. TCP above sees what it sees on a bad
network: late segments, retransmissions, duplicate ACKs.

A link is cut with ``ip link set HOST_TAP down`` (frames to a downed TAP
are lost, the namespace's side stays up and keeps retransmitting, as
across a partition); nothing here needs to know.

Each ``--relay`` forwards TCP connections accepted on every address at
``PORT`` to ``HOST:PORT`` (the machine's RabbitMQ listens on 127.0.0.1
only, which a namespace cannot reach).

Standard input takes ``set DELAY LOSS`` lines (seconds, probability);
the process prints ``ready`` once its devices exist, and exits when its
standard input closes -- its TAP devices vanish with it.
"""

import argparse
import fcntl
import heapq
import os
import random
import select
import socket
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TAP = 0x0002
IFF_NO_PI = 0x1000


def open_tap(name):
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


class Relay:
    def __init__(self, spec):
        port, host, target = spec.split(":")
        self.target = (host, int(target))
        self.listener = socket.create_server(("0.0.0.0", int(port)), reuse_port=False)
        self.listener.setblocking(False)
        self.peers = {}

    def accept(self):
        try:
            client, _ = self.listener.accept()
        except BlockingIOError:
            return
        try:
            server = socket.create_connection(self.target, timeout=5)
        except OSError:
            client.close()
            return
        for s in (client, server):
            s.setblocking(False)
        self.peers[client] = server
        self.peers[server] = client

    def pump(self, sock):
        other = self.peers.get(sock)
        if other is None:
            return
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            try:
                # Bounded: a peer behind a cut link must not stall the wires.
                other.settimeout(1.0)
                other.sendall(data)
                other.setblocking(False)
                return
            except OSError:
                pass
        for s in (sock, other):
            self.peers.pop(s, None)
            s.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--link", action="append", default=[])
    parser.add_argument("--relay", action="append", default=[])
    args = parser.parse_args()

    peer = {}  # fd -> (fd to write to, whether it comes from the namespace)
    for spec in args.link:
        ns_name, host_name = spec.split(":")
        ns_fd, host_fd = open_tap(ns_name), open_tap(host_name)
        peer[ns_fd] = (host_fd, True)
        peer[host_fd] = (ns_fd, False)
    relays = [Relay(spec) for spec in args.relay]
    print("ready", flush=True)

    delay, loss = 0.0, 0.0
    queue = []  # (due, sequence, fd, frame)
    sequence = 0
    stdin = sys.stdin.fileno()
    while True:
        watched = [stdin, *peer, *(r.listener for r in relays),
                   *(s for r in relays for s in r.peers)]
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else 1.0
        readable, _, _ = select.select(watched, [], [], timeout)
        for item in readable:
            if item == stdin:
                line = sys.stdin.readline()
                if not line:
                    return
                words = line.split()
                if words[:1] == ["set"]:
                    delay, loss = float(words[1]), float(words[2])
                continue
            if item in peer:
                target, from_namespace = peer[item]
                for _ in range(64):
                    try:
                        frame = os.read(item, 65536)
                    except BlockingIOError:
                        break
                    except OSError:
                        break  # a downed device
                    if loss and random.random() < loss:
                        continue
                    wait = delay if from_namespace else 0.0
                    sequence += 1
                    heapq.heappush(queue, (time.monotonic() + wait, sequence, target, frame))
                continue
            for relay in relays:
                if item is relay.listener:
                    relay.accept()
                elif item in relay.peers:
                    relay.pump(item)
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, target, frame = heapq.heappop(queue)
            try:
                os.write(target, frame)
            except OSError:
                pass  # the device is down (a cut link) or its queue is full: lost


if __name__ == "__main__":
    main()
