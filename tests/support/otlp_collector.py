"""An OTLP/HTTP trace receiver on loopback that decodes with the official OTLP protobuf classes.

Run with the Python that has opentelemetry-proto (the repository's .venv):
`python otlp_collector.py [--status CODE] [--delay-ms MS]`. It listens on 127.0.0.1 on an
ephemeral port, prints the port as the first line of stdout, and exits when its stdin closes (so
it never outlives the test process that started it).

`POST /v1/traces` takes an `application/x-protobuf` ExportTraceServiceRequest
(opentelemetry.proto.collector.trace.v1), parses it with the generated protobuf class (a body that
does not parse is answered 400 and recorded as an error) and answers an empty
ExportTraceServiceResponse, or `--status` with no body, or `--answer-bytes` zero bytes, after
`--delay-ms`.
`GET /__spans` answers every span received so far as JSON, one object per span:
  {"trace_id", "span_id", "parent_span_id" (lower-case hex, "" for none), "name", "kind"
   (SPAN_KIND_SERVER …), "start_ns", "end_ns", "attributes" {key: value}, "status_code",
   "links" [{"trace_id", "span_id", "attributes"}], "resource" {key: value}, "scope" name,
   "flags", "request_headers" {lower-case name: value} of the export request}
`GET /__exports` answers how many export requests arrived and how many failed to parse.
"""

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

LOCK = threading.Lock()
SPANS = []
EXPORTS = {"requests": 0, "unparsed": 0}


def any_value(value):
    """An AnyValue as plain JSON."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def attributes(key_values):
    return {kv.key: any_value(kv.value) for kv in key_values}


def span_json(span, resource, scope, headers):
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "name": span.name,
        "kind": Span.SpanKind.Name(span.kind),
        "start_ns": span.start_time_unix_nano,
        "end_ns": span.end_time_unix_nano,
        "attributes": attributes(span.attributes),
        "status_code": Status.StatusCode.Name(span.status.code),
        "links": [
            {
                "trace_id": link.trace_id.hex(),
                "span_id": link.span_id.hex(),
                "attributes": attributes(link.attributes),
            }
            for link in span.links
        ],
        "resource": resource,
        "scope": scope,
        "flags": span.flags,
        "request_headers": headers,
    }


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    status = 200
    delay_ms = 0
    answer_bytes = 0

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type="application/x-protobuf"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        with LOCK:
            if self.path == "/__spans":
                body = json.dumps(SPANS).encode()
            elif self.path == "/__exports":
                body = json.dumps(EXPORTS).encode()
            else:
                body = None
        if body is None:
            self.answer(404)
        else:
            self.answer(200, body, "application/json")

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.delay_ms:
            time.sleep(self.delay_ms / 1000)
        request = ExportTraceServiceRequest()
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"path {self.path}")
            request.ParseFromString(body)
        except Exception:  # noqa: BLE001 - any undecodable export is the test's failure
            with LOCK:
                EXPORTS["requests"] += 1
                EXPORTS["unparsed"] += 1
            self.answer(400)
            return
        with LOCK:
            EXPORTS["requests"] += 1
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        SPANS.append(
                            span_json(span, resource, scope_spans.scope.name, headers)
                        )
        if self.status != 200:
            self.answer(self.status)
        elif self.answer_bytes:
            self.answer(200, b"\0" * self.answer_bytes)
        else:
            self.answer(200, ExportTraceServiceResponse().SerializeToString())


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A sender that went away mid-answer (a stopped gateway) is no receiver error.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--delay-ms", type=int, default=0)
    parser.add_argument("--answer-bytes", type=int, default=0)
    args = parser.parse_args()
    Handler.status = args.status
    Handler.delay_ms = args.delay_ms
    Handler.answer_bytes = args.answer_bytes
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
