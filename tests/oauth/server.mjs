// A real OAuth 2.0 authorization server (oidc-provider) on loopback for the contract tests of
// `oauth2ClientCredentials` tools (tests/contract/outbound_oauth2_server.rs).
//
// It listens on 127.0.0.1 on an ephemeral port and prints the issuer URL as the first line on
// stdout; the token endpoint is `<issuer>/token`, the introspection endpoint
// `<issuer>/token/introspection`. Then one JSON line per token request it answered:
// `{"event":"token","grant":"client_credentials","client":"<client_id>","auth":"basic","status":200}`
// (`client`: the registered client the request named, else null; `auth`: `basic` for an
// `Authorization: Basic` header, `body` for a `client_secret` in the form, else null). Its own
// notices and warnings go to stderr.
//
// Clients (all `grant_types: ["client_credentials"]`):
// - `basic client` / `s3:cr&t+/=`: `client_secret_basic`, scopes `read write:all`;
// - `post-client` / `post-secret`: `client_secret_post`, scope `read`;
// - `short-lived` / `short-secret`: `client_secret_basic`, scope `read`, whose access tokens
//   live 62 s;
// - `brief-lived` / `brief-secret`: `client_secret_basic`, scope `read`, whose access tokens
//   live 30 s (every other client's live 600 s).
// `admin` is a scope the server knows and no client may have.
import { createServer } from 'node:http';

import Provider from 'oidc-provider';

// oidc-provider writes its notices with console.info; stdout is for the issuer and the log.
console.info = (...args) => console.error(...args);

const TTL_S = { 'short-lived': 62, 'brief-lived': 30 };

const clients = [
  {
    client_id: 'basic client',
    client_secret: 's3:cr&t+/=',
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'read write:all',
  },
  {
    client_id: 'post-client',
    client_secret: 'post-secret',
    token_endpoint_auth_method: 'client_secret_post',
    scope: 'read',
  },
  {
    client_id: 'short-lived',
    client_secret: 'short-secret',
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'read',
  },
  {
    client_id: 'brief-lived',
    client_secret: 'brief-secret',
    token_endpoint_auth_method: 'client_secret_basic',
    scope: 'read',
  },
].map((client) => ({
  ...client,
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
}));

const server = createServer();
await new Promise((resolve) => {
  server.listen(0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients,
  cookies: { keys: ['tests/oauth cookie key'] },
  scopes: ['openid', 'offline_access', 'read', 'write:all', 'admin'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // Any authenticated client may introspect any token (these are tests).
      allowedPolicy: async () => true,
    },
  },
  ttl: {
    ClientCredentials: (ctx, token, client) => TTL_S[client.clientId] ?? 600,
  },
});

function authIn(ctx) {
  if (/^basic /i.test(ctx.get('authorization'))) {
    return 'basic';
  }
  return ctx.oidc?.params?.client_secret ? 'body' : null;
}

provider.use(async (ctx, next) => {
  await next();
  if (ctx.method === 'POST' && ctx.path === '/token') {
    const line = JSON.stringify({
      event: 'token',
      grant: ctx.oidc?.params?.grant_type ?? null,
      client: ctx.oidc?.client?.clientId ?? null,
      auth: authIn(ctx),
      status: ctx.status,
    });
    process.stdout.write(`${line}\n`);
  }
});

server.on('request', provider.callback());
process.stdout.write(`${issuer}\n`);

// The test kills the process; a closed stdin (the test process gone) ends it too.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
