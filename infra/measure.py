"""Cold start of the release function binaries under the Lambda Runtime API emulator.

For each run: a fresh `cargo lambda watch --only-lambda-apis` on a free loopback port, an
`initialize` request queued at its /lambda-url/<function>/ endpoint, then the binary started
with the Runtime API variables; the figure is the time from starting the process to the answer
of that first request (cold start: runtime start, configuration, manifest load and compile, the
first invocation). Prints the median, minimum and maximum of every function, for the baked
sample manifest and for the bench's generated 1,000-tool manifest (`infra/bench/cold_start.py`).

Run as root on a machine with cgroup v1's cpu controller, it also measures under the CPU share
of a 1,769 MB and of a 256 MB function (a cgroup CPU quota, as `infra/bench/cold_start.py`
does): the function process execs in its group already, so the clock starts at its exec; the
emulator stays outside the group.

Usage (infra/measure.sh builds the binaries first):
  python infra/measure.py CARGO_LAMBDA RUNS FUNCTION=BINARY [FUNCTION=BINARY ...]
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))
import cold_start  # noqa: E402  (the bench's CPU group, launcher and generated manifests)

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


def one_cold_start(cargo_lambda, function, binary, source, group):
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
                "MCP_REGISTRY_SOURCE": source,
                "RUST_LOG": "warn",
            }
        )
        if group is None:
            started = time.perf_counter()
            function_process = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            # Enters the group before its exec, says it is ready and waits for a line: the
            # move into the group and the shell's start are not part of the cold start.
            function_process = subprocess.Popen(
                ["/bin/sh", "-c", cold_start.LAUNCHER, binary],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                preexec_fn=group.enter,
            )
            if function_process.stdout.read(1) != b"r":
                raise SystemExit(f"{function}: the launcher did not start")
            function_process.stdout.close()
            time.sleep(cold_start.PERIOD_US / 1e6)
            started = time.perf_counter()
            function_process.stdin.write(b"go\n")
            function_process.stdin.close()
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
    functions = [pair.split("=", 1) for pair in sys.argv[3:]]
    workdir = Path(tempfile.mkdtemp(prefix="mcp-measure-"))
    manifest = workdir / "manifest-1000.json"
    manifest.write_text(json.dumps(cold_start.generated_manifest(1000), separators=(",", ":")))
    sources = [("baked sample", "baked:sample"), ("1,000 tools", f"file:{manifest}")]
    shares = [("unlimited", None)]
    group = None
    if os.geteuid() == 0 and (cold_start.CGROUP_CPU / "cpu.cfs_quota_us").exists():
        group = cold_start.CpuGroup()
        shares += [("1,769 MB", 100_000), ("256 MB", 14_470)]
    else:
        print("(not root or no cgroup v1 cpu controller: no CPU-share figures)")
    try:
        for share, quota in shares:
            if group is not None:
                group.set_quota(quota)
            for function, binary in functions:
                for label, source in sources:
                    samples = [
                        one_cold_start(cargo_lambda, function, binary, source, group)
                        for _ in range(runs)
                    ]
                    print(
                        f"{function}, {label}, CPU {share}: process start to first answered request: "
                        f"median {statistics.median(samples):.1f} ms "
                        f"(min {min(samples):.1f}, max {max(samples):.1f}, {runs} runs)"
                    )
    finally:
        if group is not None:
            group.remove()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
