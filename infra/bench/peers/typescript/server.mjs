// Bench peer: a stateless MCP server on the official TypeScript SDK, as its stateless example
// shows (StreamableHTTPServerTransport without a session id generator, one server and transport
// per request), with JSON responses. Its one tool POSTs the arguments to the bench Tool Service
// and returns the answer as text.
//
// Usage: node server.mjs PORT TOOL_SERVICE_URL
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import * as z from 'zod/v4';

const port = Number(process.argv[2] ?? 3100);
const toolService = process.argv[3] ?? 'http://127.0.0.1:3001/tools/search_documents';

const inputSchema = {
  query: z.string().min(1).max(500),
  limit: z.number().int().min(1).max(50).optional(),
  filters: z
    .strictObject({
      department: z.enum(['HR', 'IT', 'Finance', 'Legal']).optional(),
      updatedAfter: z.string().optional(),
      tags: z.array(z.string()).max(10).optional()
    })
    .optional()
};

function getServer() {
  const server = new McpServer({ name: 'bench-typescript-peer', version: '1.0.0' });
  server.registerTool(
    'search_documents',
    { description: 'Full-text search over the document store.', inputSchema },
    async args => {
      const answer = await fetch(toolService, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(args)
      });
      const text = await answer.text();
      return { content: [{ type: 'text', text }], isError: !answer.ok };
    }
  );
  return server;
}

const app = createMcpExpressApp();
app.post('/mcp', async (req, res) => {
  const server = getServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true
  });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  try {
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: String(error) }, id: null });
    }
  }
});

app.listen(port, '127.0.0.1', () => {
  console.error(`typescript peer on http://127.0.0.1:${port}/mcp`);
});
