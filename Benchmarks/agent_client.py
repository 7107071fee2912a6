"""A minimal client of the vault agent's protocol (docs/AGENT.md), for the benchmarks:
bulk writes through the agent and per-request timing without process start-up."""
import os
import socket
import struct

VERSION = 3


def _bytes(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


def _target(path: str) -> bytes:
    info = os.lstat(path)
    return struct.pack(">QQ", info.st_dev, info.st_ino) + _bytes(path.encode())


class Agent:
    def __init__(self, socket_path: str, vault_path: str):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path)
        self.target = _target(vault_path)

    def _call(self, body: bytes) -> bytes:
        self.sock.sendall(struct.pack(">I", len(body)) + body)
        header = self._read(4)
        response = self._read(struct.unpack(">I", header)[0])
        if response[1] not in (0, 1, 2, 3):
            raise RuntimeError(f"agent answered tag {response[1]}")
        return response

    def _read(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.sock.recv(count - len(data))
            if not chunk:
                raise RuntimeError("the agent closed the connection")
            data += chunk
        return data

    def set(self, service: str, account: str, secret: bytes) -> None:
        self._call(bytes([VERSION, 0x14]) + self.target + bytes([0, 1, 0]) + _bytes(service.encode()) + _bytes(account.encode()) + b"\x00\x00" + _bytes(secret))

    def secret(self, service: str, account: str) -> bytes:
        return self._call(bytes([VERSION, 0x12]) + self.target + _bytes(service.encode()) + _bytes(account.encode()))[6:]
