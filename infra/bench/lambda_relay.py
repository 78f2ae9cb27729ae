#!/usr/bin/env python3
"""A loopback relay between the gateway and `cargo lambda watch`, for the bench's Lambda tool row.

The gateway calls Lambda function tools (CONTRACT X10) through the Lambda Invoke API at
`AWS_ENDPOINT_URL_LAMBDA`; pointed at this relay, those calls reach a real function under the
emulator as they would reach AWS, with no special case in the gateway. It is the Python twin of
the test relay, tests/lambda_watch/relay.rs, and bridges the same differences:

1. Function names: `POST /2015-03-31/functions/<ARN, percent-encoded>/invocations?Qualifier=...`
   is forwarded to `/2015-03-31/functions/<bare name>/invocations` (the emulator routes only the
   workspace's binary names and knows no versions).
2. Client context: AWS reads `X-Amz-Client-Context` (base64 of JSON); the emulator reads
   `lambda-runtime-client-context` holding the JSON itself (cargo-lambda v1.9.2,
   crates/cargo-lambda-invoke/src/lib.rs `invoke_local`; crates/cargo-lambda-watch/src/runtime/
   functions_router.rs `process_next_request`). The relay decodes the one into the other.
3. Function errors: the emulator answers HTTP 500 with the error JSON; AWS answers 200 with
   `X-Amz-Function-Error: Unhandled` and the same body. The relay converts a 500 whose body is an
   object with `errorMessage` or `errorType`.

And on the Runtime API side (the function polling for its next event), one more: the emulator
hands the runtime the base64 of the client context where AWS hands over the JSON, which the Rust
runtime cannot parse (lambda_runtime 1.5.0 `Context::new`: the function exits). A cargo runner
(`write_runner`) points each function `cargo lambda watch` starts at the relay
(`AWS_LAMBDA_RUNTIME_API`), and the relay decodes that header back to JSON. Everything else
passes through unchanged.

    python3 infra/bench/lambda_relay.py --port 9100 --emulator-port 9000 [--watch]

With `--watch` it also starts `cargo lambda watch` itself, wired as above: the local Lambda tool
walk-through of docs/routes.md.

Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

INVOKE_PREFIX = "/2015-03-31/functions/"
AMZ_CLIENT_CONTEXT = "x-amz-client-context"
RUNTIME_CLIENT_CONTEXT = "lambda-runtime-client-context"
# Framing headers: set anew on each hop.
HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


def function_name(segment: str) -> tuple[str, str | None]:
    """The bare name and qualifier of an ARN, a partial ARN or a name (percent-encoded)."""
    parts = urllib.parse.unquote(segment).split(":")
    rest = parts[parts.index("function") + 1:] if "function" in parts else parts
    return (rest[0] if rest else "", rest[1] if len(rest) > 1 else None)


def decode_context(value: str) -> str | None:
    """Base64 text decoded to JSON text, when it is that."""
    try:
        text = base64.b64decode(value, validate=True).decode("utf-8")
        json.loads(text)
    except (binascii.Error, ValueError):
        return None
    return text


def write_runner(directory: Path, relay_port: int) -> tuple[str, Path]:
    """The cargo runner that starts a function with its Runtime API at the relay; returns the
    variable that names it to cargo (`CARGO_TARGET_<host triple>_RUNNER`) and the script."""
    script = directory / "runtime-api-via-relay.sh"
    script.write_text(
        "#!/bin/sh\n"
        "# Started by `cargo run` under `cargo lambda watch`: the function's Runtime API calls\n"
        "# go through the bench relay (infra/bench/lambda_relay.py), same path.\n"
        'rest="${AWS_LAMBDA_RUNTIME_API#*//}"\n'
        'case "$rest" in\n'
        f'*/*) AWS_LAMBDA_RUNTIME_API="http://127.0.0.1:{relay_port}/${{rest#*/}}" ;;\n'
        f'*) AWS_LAMBDA_RUNTIME_API="127.0.0.1:{relay_port}" ;;\n'
        "esac\n"
        "export AWS_LAMBDA_RUNTIME_API\n"
        'exec "$@"\n'
    )
    script.chmod(0o755)
    host = next(line.split(": ", 1)[1] for line in subprocess.run(
        ["rustc", "-vV"], capture_output=True, text=True, check=True).stdout.splitlines()
        if line.startswith("host: "))
    variable = "CARGO_TARGET_" + host.upper().replace("-", "_").replace(".", "_") + "_RUNNER"
    return variable, script


class Relay(ThreadingHTTPServer):
    daemon_threads = True
    # Many keep-alive connections at once (oha's), each on its own thread.
    request_queue_size = 256

    def __init__(self, port: int, emulator_port: int) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.emulator_port = emulator_port
        self.local = threading.local()

    def upstream(self) -> http.client.HTTPConnection:
        """This thread's keep-alive connection to the emulator."""
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", self.emulator_port)
            connection.connect()
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.local.connection = connection
        return connection


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One send per answer, without Nagle's delay: an unbuffered writer sends the head and the
    # body apart, and the delayed ACK of the second costs tens of milliseconds.
    disable_nagle_algorithm = True
    wbufsize = -1
    server: Relay

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        pass  # no access log: it would carry nothing the bench needs

    def relay(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        path, _, _query = self.path.partition("?")
        headers = [(name, value) for name, value in self.headers.items()
                   if name.lower() not in HOP_HEADERS]
        invoke = None
        if path.startswith(INVOKE_PREFIX) and path.endswith("/invocations"):
            segment = path[len(INVOKE_PREFIX):-len("/invocations")]
            if "/" not in segment:
                invoke = function_name(segment)
        if invoke is not None:
            # (2) X-Amz-Client-Context (base64 JSON) → lambda-runtime-client-context (JSON).
            context = next((v for n, v in headers if n.lower() == AMZ_CLIENT_CONTEXT), None)
            headers = [(n, v) for n, v in headers if n.lower() != AMZ_CLIENT_CONTEXT]
            decoded = decode_context(context) if context else None
            if decoded is not None:
                headers.append((RUNTIME_CLIENT_CONTEXT, decoded))
            # (1) The bare function name, no qualifier.
            target = f"{INVOKE_PREFIX}{invoke[0]}/invocations"
        else:
            target = self.path  # the Runtime API: unchanged
        status, reason, answer_headers, answer = self.forward(target, headers, body)
        if invoke is not None and status == 500:
            # (3) A function error → 200 + X-Amz-Function-Error.
            try:
                error = json.loads(answer)
            except ValueError:
                error = None
            if isinstance(error, dict) and ("errorMessage" in error or "errorType" in error):
                status, reason = 200, "OK"
                answer_headers = [(n, v) for n, v in answer_headers
                                  if n.lower() not in ("content-type", "x-amz-function-error")]
                answer_headers += [("Content-Type", "application/json"),
                                   ("X-Amz-Function-Error", "Unhandled")]
        elif invoke is None:
            # The Runtime API: the client context as JSON, as AWS hands it to the runtime.
            fixed = []
            for name, value in answer_headers:
                if name.lower() == RUNTIME_CLIENT_CONTEXT:
                    value = decode_context(value) or value
                fixed.append((name, value))
            answer_headers = fixed
        self.send_response_only(status, reason)
        for name, value in answer_headers:
            if name.lower() not in HOP_HEADERS:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer)

    def forward(self, target: str, headers: list[tuple[str, str]],
                body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
        for attempt in (1, 2):
            connection = self.server.upstream()
            try:
                connection.putrequest(self.command, target, skip_host=True,
                                      skip_accept_encoding=True)
                connection.putheader("Host", f"127.0.0.1:{self.server.emulator_port}")
                for name, value in headers:
                    connection.putheader(name, value.encode("utf-8"))
                connection.putheader("Content-Length", str(len(body)))
                connection.endheaders(body)
                response = connection.getresponse()
                return (response.status, response.reason, response.getheaders(),
                        response.read())
            except (http.client.HTTPException, OSError):
                connection.close()
                self.server.local.connection = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    do_GET = relay
    do_POST = relay
    do_PUT = relay
    do_DELETE = relay
    do_HEAD = relay


def start_watch(relay_port: int, emulator_port: int, directory: Path) -> subprocess.Popen:
    """`cargo lambda watch` on `emulator_port`, its functions' Runtime API through the relay."""
    variable, runner = write_runner(directory, relay_port)
    cargo_lambda = Path(__file__).resolve().parents[2] / ".venv/bin/cargo-lambda"
    program = str(cargo_lambda) if cargo_lambda.exists() else "cargo-lambda"
    return subprocess.Popen(
        [program, "lambda", "watch", "--invoke-address", "127.0.0.1",
         "--invoke-port", str(emulator_port)],
        env={**os.environ, variable: str(runner)},
        cwd=Path(__file__).resolve().parents[2],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True, help="port to serve on (127.0.0.1)")
    parser.add_argument("--emulator-port", type=int, required=True,
                        help="port of `cargo lambda watch` (its --invoke-port)")
    parser.add_argument("--watch", action="store_true",
                        help="also start `cargo lambda watch` on --emulator-port, its functions' "
                             "Runtime API through the relay (the workspace's functions, built "
                             "on their first invocation)")
    args = parser.parse_args()
    server = Relay(args.port, args.emulator_port)
    watch = None
    with tempfile.TemporaryDirectory(prefix="lambda-relay-") as directory:
        if args.watch:
            watch = start_watch(args.port, args.emulator_port, Path(directory))
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            if watch is not None:
                watch.terminate()
                watch.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
