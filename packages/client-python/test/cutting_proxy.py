"""A TCP proxy on loopback in front of a real gateway. It forwards bytes both ways and can cut a
connection for real: when the answer to a matching request starts to come back, both sockets are
closed, so the request has reached (and been executed by) the gateway but the client never sees
the answer. It keeps every request and answer head it forwarded, to check what was sent."""

from __future__ import annotations

import re
import socket
import threading
from urllib.parse import urlsplit

_REQUEST_HEAD = re.compile(r"(?:GET|POST|PUT|PATCH|DELETE) [^\r\n]+ HTTP/1\.1\r\n[\s\S]*?\r\n\r\n")
_ANSWER_HEAD = re.compile(r"HTTP/1\.1 \d{3}[^\r\n]*\r\n[\s\S]*?\r\n\r\n")


class CuttingProxy:
    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._lock = threading.Lock()
        self._requests: list[str] = []
        self._answers: list[str] = []
        self._sockets: set[socket.socket] = set()
        self._pattern: re.Pattern[str] | None = None
        self._remaining = 0
        self.cuts = 0
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, pattern: str, count: int = 1) -> None:
        """Cut the answers of the next `count` requests whose head matches `pattern`."""
        with self._lock:
            self._pattern = re.compile(pattern)
            self._remaining = count

    def heads(self, pattern: str = "") -> list[str]:
        """The head (request line and headers) of every request forwarded, in order."""
        with self._lock:
            found = [head for text in self._requests for head in _REQUEST_HEAD.findall(text)]
        return [head for head in found if re.search(pattern, head)]

    def answer_heads(self) -> list[str]:
        """The head (status line and headers) of every answer forwarded, in order."""
        with self._lock:
            return [head for text in self._answers for head in _ANSWER_HEAD.findall(text)]

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in list(self._sockets):
                _shut(sock)

    def _accept(self) -> None:
        while not self._closed:
            try:
                down, _ = self._listener.accept()
            except OSError:
                return
            up = socket.create_connection(self._target)
            with self._lock:
                self.connections += 1
                index = len(self._requests)
                self._requests.append("")
                self._answers.append("")
                self._sockets.update((down, up))
            current = {"head": ""}
            threading.Thread(target=self._upstream, args=(down, up, index, current), daemon=True).start()
            threading.Thread(target=self._downstream, args=(down, up, index, current), daemon=True).start()

    def _upstream(self, down: socket.socket, up: socket.socket, index: int, current: dict[str, str]) -> None:
        while chunk := _receive(down):
            with self._lock:
                self._requests[index] += chunk.decode("latin-1")
                heads = _REQUEST_HEAD.findall(self._requests[index])
                current["head"] = heads[-1] if heads else ""
            if not _send(up, chunk):
                break
        self._drop(down, up)

    def _downstream(self, down: socket.socket, up: socket.socket, index: int, current: dict[str, str]) -> None:
        while chunk := _receive(up):
            with self._lock:
                cutting = self._remaining > 0 and self._pattern is not None and self._pattern.search(current["head"])
                if cutting:
                    self._remaining -= 1
                    self.cuts += 1
                else:
                    self._answers[index] += chunk.decode("latin-1")
            if cutting or not _send(down, chunk):
                break
        self._drop(down, up)

    def _drop(self, down: socket.socket, up: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(down)
            self._sockets.discard(up)
        _shut(down)
        _shut(up)


def _receive(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def _send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
    except OSError:
        return False
    return True


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def header_of(head: str, name: str) -> str | None:
    """The value of header `name` in a request or answer head, or None."""
    for line in head.split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.strip().lower() == name.lower():
            return value.strip()
    return None
