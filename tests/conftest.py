import socket

import pytest


@pytest.fixture(scope="module")
def monkeypatch_socket():
    """Every attempt to open a socket is recorded and refused."""
    attempts = []
    real = socket.socket

    class Refused(real):
        def __init__(self, *args, **kwargs):
            attempts.append(args)
            raise OSError("the compiler must not open sockets")

    socket.socket = Refused
    try:
        yield attempts
    finally:
        socket.socket = real
