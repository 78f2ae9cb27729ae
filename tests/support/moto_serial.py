"""moto's server (PyPI moto[server]) handling one request at a time.

DynamoDB applies writes to one item one after another, so a conditional write is atomic;
moto's threaded server checks and writes without a lock, so concurrent conditional writes to
one item can both pass. A lock around each request gives the tests DynamoDB's per-item
serialization. Usage: python moto_serial.py HOST PORT
"""

import sys
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple

lock = threading.Lock()
app = DomainDispatcherApplication(create_backend_app)


def serialized(environ, start_response):
    with lock:
        return list(app(environ, start_response))


if __name__ == "__main__":
    run_simple(
        sys.argv[1],
        int(sys.argv[2]),
        serialized,
        threaded=True,
        request_handler=MotoRequestHandler,
    )
