-- Mixed MCP workload for wrk against mcp-local's baked sample route (`/mcp/core`).
--
-- Each connection cycles through five requests: initialize, tools/list, a successful
-- tools/call (search_documents), a failing tool (lookup_glossary of an unknown term: an
-- isError result) and invalid params (create_ticket without its required priority: -32602).
-- Every answer must be HTTP 200 with a JSON-RPC body; anything else counts as unexpected.
-- Each thread stops after its share of LOAD_REQUESTS answers and leaves a marker file in
-- LOAD_DONE_DIR; done() prints one JSON line.

local threads = {}

function setup(thread)
  local total = tonumber(os.getenv("LOAD_REQUESTS") or "10000")
  local count = tonumber(os.getenv("LOAD_THREADS") or "2")
  thread:set("quota", math.ceil(total / count))
  thread:set("offset", #threads)
  table.insert(threads, thread)
end

local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["MCP-Protocol-Version"] = "2025-11-25",
}

local bodies = {
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"4"}}}',
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"휴가","limit":2}}}',
  '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lookup_glossary","arguments":{"term":"nope"}}}',
  '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"create_ticket","arguments":{"title":"VPN"}}}',
}

local requests = {}

function init(_)
  headers["Host"] = wrk.headers["Host"] or (wrk.host .. ":" .. wrk.port)
  for i, body in ipairs(bodies) do
    requests[i] = wrk.format("POST", wrk.path, headers, body)
  end
end

sent = 0
answered = 0
unexpected = 0
tool_errors = 0
invalid_params = 0
results = 0

function request()
  sent = sent + 1
  return requests[((sent + offset) % #requests) + 1]
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 200 or not string.find(body, '"jsonrpc":"2.0"', 1, true) then
    unexpected = unexpected + 1
  elseif string.find(body, '"isError":true', 1, true) then
    tool_errors = tool_errors + 1
  elseif string.find(body, '"code":-32602', 1, true) then
    invalid_params = invalid_params + 1
  elseif string.find(body, '"result":', 1, true) then
    results = results + 1
  else
    unexpected = unexpected + 1
  end
  if answered == quota then
    -- wrk waits out its duration after a thread stops: the marker tells the script to end it.
    local marker = io.open(os.getenv("LOAD_DONE_DIR") .. "/thread-" .. offset, "w")
    if marker then marker:close() end
    wrk.thread:stop()
  end
end

function done(summary, latency, _)
  local totals = { answered = 0, unexpected = 0, tool_errors = 0, invalid_params = 0, results = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do
      totals[name] = totals[name] + thread:get(name)
    end
  end
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"answered":%d,"unexpected":%d,"results":%d,"tool_errors":%d,' ..
    '"invalid_params":%d,"socket_errors":%d,"non_2xx":%d,"p50_ms":%.3f,"p99_ms":%.3f,' ..
    '"max_ms":%.3f,"seconds":%.3f}\n',
    summary.requests, totals.answered, totals.unexpected, totals.results, totals.tool_errors,
    totals.invalid_params, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    summary.duration / 1e6))
end
