// Runs the interop gateways and Tool Service until standard input closes (or SIGTERM/SIGINT),
// for test runners in other languages: prints one JSON line `{"sampleUrl", "interopUrl",
// "largeUrl", "largeCount"}` once everything serves (`largeUrl`: the 10,000-tool route of
// ./large-route.mjs, CONTRACT T2). `--log-dir DIR` also writes the gateways' log lines to DIR/sample.log and
// DIR/interop.log.

import { parseArgs } from "node:util";

import { startInterop } from "./gateway.mjs";
import { startLargeRoute } from "./large-route.mjs";

const { values } = parseArgs({ options: { "log-dir": { type: "string" } } });
const running = await startInterop({ logDir: values["log-dir"] });
const large = await startLargeRoute();
let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await Promise.all([running.stop(), large.stop()]);
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
process.stdout.write(
  `${JSON.stringify({
    sampleUrl: running.sampleUrl,
    interopUrl: running.interopUrl,
    largeUrl: large.url,
    largeCount: large.names.length,
  })}\n`,
);
