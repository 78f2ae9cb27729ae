"""A Tool Service on loopback that checks SigV4 signatures with botocore's signer.

Run with the Python that has botocore (the repository's .venv): `python sigv4_service.py`.
It listens on 127.0.0.1 on an ephemeral port, prints the port as the first line of stdout, and
exits when its stdin closes (so it never outlives the test process that started it).

For every request it rebuilds a `botocore.awsrequest.AWSRequest` from what arrived: the method,
the URL with its path and query exactly as received (a proxy's absolute-form target as it is,
else `http://<Host><target>`), the headers the `Authorization` header's `SignedHeaders` names
(every value received for each) and the body. botocore's `SigV4Auth` for the credential scope's
service and region, at the request's `X-Amz-Date`, derives the canonical request (its own
canonical URI, query string and headers) and the signature, which must equal the one the
request carries. Answers:
  200 {"verified": true, "service": ..., "region": ...}
  403 {"verified": false, "why": ..., "canonical_request": ..., "string_to_sign": ...}
`GET /__requests` (never checked or recorded) lists every request checked so far: method, host,
path, query as received, the Authorization header, the canonical query string and signed headers botocore derived, the
signed headers' values, the body, and the verdict.
"""

import datetime
import hashlib
import hmac
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

# The fixed credentials the contract tests give the gateway.
ACCESS_KEY = "AKIDEXAMPLE"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
# How far X-Amz-Date may be from now, as AWS allows.
SKEW = datetime.timedelta(minutes=15)

AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/([^/,\s]+),"
    r" ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]{64})$"
)

RECORDED = []
LOCK = threading.Lock()


class Unverified(Exception):
    """Why a request's signature is not accepted."""


def verify(method, url, received_headers, body):
    """The verdict on one request: (service, region, record fields); raises Unverified."""
    authorization = received_headers.get_all("authorization") or []
    if len(authorization) != 1:
        raise Unverified(f"{len(authorization)} Authorization headers")
    found = AUTHORIZATION.match(authorization[0])
    if not found:
        raise Unverified(f"not a SigV4 Authorization header: {authorization[0]!r}")
    key, date, region, service, terminator, signed, carried = found.groups()
    if key != ACCESS_KEY:
        raise Unverified(f"access key {key!r}, not {ACCESS_KEY!r}")
    if terminator != "aws4_request":
        raise Unverified(f"credential scope ends in {terminator!r}")
    amz_date = received_headers.get("x-amz-date")
    try:
        when = datetime.datetime.strptime(amz_date or "", "%Y%m%dT%H%M%SZ")
    except ValueError:
        raise Unverified(f"X-Amz-Date {amz_date!r} is not YYYYMMDDTHHMMSSZ") from None
    if date != amz_date[:8]:
        raise Unverified(f"credential scope date {date} is not X-Amz-Date's {amz_date[:8]}")
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    if abs(now - when) > SKEW:
        raise Unverified(f"X-Amz-Date {amz_date} is more than 15 minutes from now")
    names = signed.split(";")
    for needed in ("host", "x-amz-date"):
        if needed not in names:
            raise Unverified(f"SignedHeaders {signed} lacks {needed}")
    request = AWSRequest(method=method, url=url, data=body)
    values = []
    for name in names:
        got = received_headers.get_all(name)
        if not got:
            raise Unverified(f"signed header {name} was not received")
        for value in got:
            request.headers[name] = value
            values.append([name, value])
    sent_hash = request.headers.get("x-amz-content-sha256")
    if sent_hash is not None and sent_hash != hashlib.sha256(body).hexdigest():
        raise Unverified("X-Amz-Content-SHA256 is not the body's hash")
    auth = SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), service, region)
    request.context["timestamp"] = amz_date
    to_sign = auth.headers_to_sign(request)
    record = {
        "service": service,
        "region": region,
        "canonical_query": auth.canonical_query_string(request),
        "signed_headers": auth.signed_headers(to_sign),
        "headers": values,
    }
    if record["signed_headers"] != signed:
        raise Unverified(
            f"botocore signs the headers {record['signed_headers']}, the request names {signed}",
            record,
        )
    canonical = auth.canonical_request(request)
    string_to_sign = auth.string_to_sign(request, canonical)
    expected = auth.signature(string_to_sign, request)
    record["canonical_request"] = canonical
    record["string_to_sign"] = string_to_sign
    if not hmac.compare_digest(expected, carried):
        raise Unverified(
            f"the signature is {carried}, botocore computes {expected}", record
        )
    return record


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, document):
        payload = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.command == "GET" and self.path == "/__requests":
            with LOCK:
                self.answer(200, list(RECORDED))
            return
        # A proxy's request names the whole URL; a direct one, the path and query.
        if self.path.startswith(("http://", "https://")):
            url = self.path
        else:
            url = f"http://{self.headers.get('Host', '')}{self.path}"
        parts = urlsplit(url)
        entry = {
            "method": self.command,
            "host": parts.netloc,
            "path": parts.path,
            "query": parts.query,
            "body": body.decode("utf-8", "replace"),
            "authorization": self.headers.get("Authorization"),
        }
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            record, why = {}, "a chunked body is not read here"
        else:
            try:
                record, why = verify(self.command, url, self.headers, body), None
            except Unverified as failure:
                why = failure.args[0]
                record = failure.args[1] if len(failure.args) > 1 else {}
        entry.update(record)
        entry["verified"] = why is None
        if why is not None:
            entry["why"] = why
        with LOCK:
            RECORDED.append(entry)
        if why is None:
            self.answer(200, {"verified": True, "service": record["service"],
                              "region": record["region"]})
        else:
            self.answer(403, {"verified": False, "why": why,
                              "canonical_request": record.get("canonical_request"),
                              "string_to_sign": record.get("string_to_sign")})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)

    def watch_stdin():
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
