"""Cold start of the release function binaries under the Lambda Runtime API emulator.

For each run: a fresh `cargo lambda watch --only-lambda-apis` on a free loopback port, an
`initialize` request queued at its /lambda-url/<function>/ endpoint, then the binary started
with the Runtime API variables; the figure is the time from starting the process to the answer
of that first request (cold start: runtime start, configuration, manifest load and compile, the
first invocation). Prints the median, minimum and maximum of every function.

Usage (infra/measure.sh builds the binaries first):
  python infra/measure.py CARGO_LAMBDA RUNS FUNCTION=BINARY [FUNCTION=BINARY ...]
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

PUBLIC_PATH = {"mcp-core": "/mcp/core", "mcp-router": "/mcp/core"}
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "measure", "version": "1"}},
    }
).encode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, process, seconds=60):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if process.poll() is not None:
            raise SystemExit(f"the emulator exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the emulator is not listening")


def one_cold_start(cargo_lambda, function, binary):
    port = free_port()
    emulator = subprocess.Popen(
        [cargo_lambda, "lambda", "watch", "--only-lambda-apis", "--invoke-address", "127.0.0.1", "--invoke-port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    function_process = None
    try:
        wait_listening(port, emulator)
        answered = {}

        def send():
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/lambda-url/{function}{PUBLIC_PATH[function]}",
                data=INITIALIZE,
                headers={"content-type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                answered["body"] = response.read()
                answered["status"] = response.status
            answered["at"] = time.perf_counter()

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(0.5)  # the invocation waits in the emulator for a runtime to poll
        env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_")}
        env.update(
            {
                "AWS_LAMBDA_RUNTIME_API": f"http://127.0.0.1:{port}/.rt/{function}",
                "AWS_LAMBDA_FUNCTION_NAME": function,
                "AWS_LAMBDA_FUNCTION_VERSION": "1",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
                "MCP_REGISTRY_SOURCE": "baked:sample",
                "RUST_LOG": "warn",
            }
        )
        started = time.perf_counter()
        function_process = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        sender.join(timeout=60)
        if answered.get("status") != 200 or b'"serverInfo"' not in answered.get("body", b""):
            raise SystemExit(f"{function}: no initialize answer: {answered}")
        return (answered["at"] - started) * 1000
    finally:
        if function_process is not None:
            function_process.kill()
            function_process.wait()
        os.killpg(emulator.pid, 15)
        emulator.wait()


def main():
    cargo_lambda, runs = sys.argv[1], int(sys.argv[2])
    for pair in sys.argv[3:]:
        function, binary = pair.split("=", 1)
        samples = [one_cold_start(cargo_lambda, function, binary) for _ in range(runs)]
        print(
            f"{function}: process start to first answered request: median {statistics.median(samples):.1f} ms "
            f"(min {min(samples):.1f}, max {max(samples):.1f}, {runs} runs)"
        )


if __name__ == "__main__":
    main()
