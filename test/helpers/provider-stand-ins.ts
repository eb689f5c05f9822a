/**
 * Stand-ins for the token endpoints of GitHub, Slack and Notion (and GitHub's REST revocation, Slack's
 * auth.revoke), whose real servers cannot run here:
 * one node:http server on 127.0.0.1 answering each as its public documentation says, quirks included
 * (GitHub and Slack answer errors with a 200; Slack puts the user's token under `authed_user`).
 * The authorization URLs stay the real ones: a test never follows them, it calls `approve` instead,
 * which mints a code as the provider would after consent and returns the redirect back to Keyward.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { catalogProvider } from '../../src/catalog/catalog.js';
import type { Provider } from '../../src/catalog/provider-definition.js';

export type StandInSlug = 'github' | 'slack' | 'notion';
export const STAND_IN_SLUGS: readonly StandInSlug[] = ['github', 'slack', 'notion'];

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The body's parameters, whether it came form-encoded or as a JSON object. */
  body: Record<string, string>;
  /** The client id and secret of an `Authorization: Basic` header, decoded (RFC 6749 2.3.1), if any. */
  basic: { id: string; secret: string } | null;
}

export interface IssuedToken {
  provider: StandInSlug;
  token: string;
  revoked: boolean;
}

export interface ProviderStandIns {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The OAuth client each stand-in knows; enable the provider on the server with it. */
  clients: Record<StandInSlug, { id: string; secret: string }>;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Every access token minted, in order. */
  issued: IssuedToken[];
  /** When set, /slack/revoke refuses with Slack's 200 `{"ok":false,"error":<this>}` and revokes nothing. */
  slackRevokeError: string | null;
  /** When set, GitHub's `DELETE /applications/{client_id}/token` answers this status and revokes nothing. */
  githubRevokeStatus: number | null;
  /** The requests to one path, such as '/github/token'. */
  requestsTo(path: string): RecordedRequest[];
  /** Plays consent at `slug` for an authorization URL Keyward made: mints a single-use code bound to its
   * client_id and redirect_uri and returns the redirect back (`redirect_uri?code=…&state=…`), not followed. */
  approve(slug: StandInSlug, authorizationUrl: string): URL;
  close(): Promise<void>;
}

interface PendingCode {
  provider: StandInSlug;
  clientId: string;
  redirectUri: string | null;
  used: boolean;
}

const token = (prefix: string) => `${prefix}${randomBytes(20).toString('hex')}`;

function decodeBasic(header: string | undefined): RecordedRequest['basic'] {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

async function readRequest(req: IncomingMessage): Promise<RecordedRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: Record<string, string> = {};
  if ((req.headers['content-type'] ?? '').startsWith('application/json')) {
    try {
      body = Object.fromEntries(Object.entries(JSON.parse(text) as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
    } catch {
      body = {};
    }
  } else {
    body = Object.fromEntries(new URLSearchParams(text));
  }
  const path = new URL(req.url ?? '/', 'http://stand-in').pathname;
  return { method: req.method ?? '', path, headers: req.headers, body, basic: decodeBasic(req.headers.authorization) };
}

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startProviderStandIns(): Promise<ProviderStandIns> {
  const secret = () => randomBytes(20).toString('hex');
  const clients: ProviderStandIns['clients'] = {
    github: { id: `Iv1.${randomBytes(8).toString('hex')}`, secret: secret() },
    slack: { id: `${Date.now()}.${randomBytes(4).readUInt32BE()}`, secret: secret() },
    notion: { id: randomUUID(), secret: `secret_${secret()}` },
  };
  const requests: RecordedRequest[] = [];
  const issued: IssuedToken[] = [];
  const codes = new Map<string, PendingCode>();

  /** The code's grant, once: null where the code is unknown, used, or not this client's or redirect's. */
  const redeem = (provider: StandInSlug, body: Record<string, string>, clientId: string): PendingCode | null => {
    const pending = codes.get(body.code ?? '');
    if (!pending || pending.used || pending.provider !== provider || pending.clientId !== clientId) return null;
    // RFC 6749 4.1.3: a redirect_uri given at authorization must be repeated, identical, here.
    if (pending.redirectUri !== null && body.redirect_uri !== pending.redirectUri) return null;
    pending.used = true;
    return pending;
  };
  const mint = (provider: StandInSlug, prefix: string) => {
    const value = token(prefix);
    issued.push({ provider, token: value, revoked: false });
    return value;
  };

  // https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps (step 2)
  const github = (req: RecordedRequest, res: ServerResponse) => {
    const c = clients.github;
    const errorUri = 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors';
    if (req.body.client_id !== c.id || req.body.client_secret !== c.secret) {
      return json(res, 200, {
        error: 'incorrect_client_credentials',
        error_description: 'The client_id and/or client_secret passed are incorrect.',
        error_uri: errorUri,
      });
    }
    if (!redeem('github', req.body, c.id)) {
      return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.', error_uri: errorUri });
    }
    const answer = { access_token: mint('github', 'gho_'), token_type: 'bearer', scope: 'read:user,user:email' };
    // Without `Accept: application/json` GitHub answers form-encoded.
    if (!(req.headers.accept ?? '').includes('application/json')) {
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' });
      return res.end(new URLSearchParams(answer).toString());
    }
    return json(res, 200, answer);
  };

  // https://docs.slack.dev/reference/methods/oauth.v2.access: errors are 200 {"ok":false,"error":…}.
  const slack = (req: RecordedRequest, res: ServerResponse) => {
    const c = clients.slack;
    const given = req.basic ?? { id: req.body.client_id ?? '', secret: req.body.client_secret ?? '' };
    if (given.id !== c.id) return json(res, 200, { ok: false, error: 'invalid_client_id' });
    if (given.secret !== c.secret) return json(res, 200, { ok: false, error: 'bad_client_secret' });
    if (!redeem('slack', req.body, c.id)) return json(res, 200, { ok: false, error: 'invalid_code' });
    // Only user scopes were asked for: no bot token, so no top-level access_token.
    return json(res, 200, {
      ok: true,
      app_id: 'A1',
      authed_user: { id: 'U1', scope: 'channels:read,chat:write,users:read', access_token: mint('slack', 'xoxp-'), token_type: 'user' },
      team: { id: 'T1' },
      enterprise: null,
      is_enterprise_install: false,
    });
  };

  // https://docs.slack.dev/reference/methods/auth.revoke: the token to revoke is the `token` parameter.
  const slackRevoke = (req: RecordedRequest, res: ServerResponse) => {
    if (standIns.slackRevokeError) return json(res, 200, { ok: false, error: standIns.slackRevokeError });
    // auth.revoke authenticates with the token itself; Basic client credentials there are not a bearer token.
    if (req.headers.authorization) return json(res, 200, { ok: false, error: 'not_bearer_token' });
    const found = issued.find((t) => t.provider === 'slack' && t.token === req.body.token && !t.revoked);
    if (!found) return json(res, 200, { ok: false, error: 'invalid_auth' });
    found.revoked = true;
    return json(res, 200, { ok: true, revoked: true });
  };

  // https://docs.github.com/en/rest/apps/oauth-applications#delete-an-app-token: Basic with the OAuth
  // app's client id and secret, the token in a JSON body, 204. A REST request without a User-Agent is
  // refused (403); a token GitHub does not know (or no longer) is 404.
  const githubRevoke = (clientId: string, req: RecordedRequest, res: ServerResponse) => {
    if (standIns.githubRevokeStatus) return json(res, standIns.githubRevokeStatus, { message: 'Stand-in failure' });
    if (!req.headers['user-agent']) return json(res, 403, { message: 'Request forbidden by administrative rules.' });
    const c = clients.github;
    if (!req.basic || req.basic.id !== c.id || req.basic.secret !== c.secret || clientId !== c.id) return json(res, 401, { message: 'Bad credentials' });
    const found = issued.find((t) => t.provider === 'github' && t.token === req.body.access_token && !t.revoked);
    if (!found) return json(res, 404, { message: 'Not Found' });
    found.revoked = true;
    res.writeHead(204);
    return res.end();
  };

  // https://developers.notion.com/reference/create-a-token: HTTP Basic only.
  const notion = (req: RecordedRequest, res: ServerResponse) => {
    const c = clients.notion;
    if (!req.basic || req.basic.id !== c.id || req.basic.secret !== c.secret) return json(res, 401, { error: 'invalid_client' });
    if (req.body.grant_type !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
    if (!redeem('notion', req.body, c.id)) return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid code.' });
    return json(res, 200, {
      access_token: mint('notion', 'ntn_'),
      token_type: 'bearer',
      bot_id: randomUUID(),
      workspace_id: randomUUID(),
      workspace_name: 'Stand-in workspace',
      workspace_icon: null,
      owner: { type: 'user', user: { object: 'user', id: randomUUID() } },
      duplicated_template_id: null,
    });
  };

  const routes: Record<string, (req: RecordedRequest, res: ServerResponse) => void> = {
    'POST /github/token': github,
    'POST /slack/token': slack,
    'POST /slack/revoke': slackRevoke,
    'POST /notion/token': notion,
  };
  const server = createServer((req, res) => {
    readRequest(req).then(
      (recorded) => {
        requests.push(recorded);
        const route = routes[`${recorded.method} ${recorded.path}`];
        // GitHub's REST API sits at the stand-in's root, as at https://api.github.com.
        const githubApp = /^\/applications\/([^/]+)\/token$/.exec(recorded.path);
        if (route) route(recorded, res);
        else if (recorded.method === 'DELETE' && githubApp) githubRevoke(decodeURIComponent(githubApp[1]!), recorded, res);
        else json(res, 404, { error: 'not_found' });
      },
      () => json(res, 400, { error: 'invalid_request' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const standIns: ProviderStandIns = {
    url,
    clients,
    requests,
    issued,
    slackRevokeError: null,
    githubRevokeStatus: null,
    requestsTo: (path) => requests.filter((r) => r.path === path),
    approve(slug, authorizationUrl) {
      const params = new URL(authorizationUrl).searchParams;
      const redirectUri = params.get('redirect_uri');
      if (!redirectUri) throw new Error('approve(): the authorization URL has no redirect_uri');
      const code = randomBytes(10).toString('hex');
      codes.set(code, { provider: slug, clientId: params.get('client_id') ?? '', redirectUri, used: false });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', params.get('state') ?? '');
      return back;
    },
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeAllConnections();
      await closed;
    },
  };
  return standIns;
}

/**
 * The real catalog, with only the token endpoints of GitHub, Slack and Notion moved to the stand-ins
 * (and Slack's revocation endpoint, and GitHub's REST API, where it revokes; Notion has no revocation
 * in the catalog). Pass as TestAppOptions.catalog.
 */
export function catalogWithStandIns(standIns: Pick<ProviderStandIns, 'url'>): (slug: string) => Provider | undefined {
  return (slug) => {
    const provider = catalogProvider(slug);
    if (provider?.kind !== 'oauth2' || !(STAND_IN_SLUGS as readonly string[]).includes(slug)) return provider;
    const { revocationUrl: _real, ...rest } = provider;
    return {
      ...rest,
      tokenUrl: `${standIns.url}/${slug}/token`,
      ...(slug === 'slack' ? { revocationUrl: `${standIns.url}/slack/revoke` } : {}),
      ...(slug === 'github' && rest.api ? { api: { ...rest.api, apiBaseUrl: standIns.url, apiHosts: [] } } : {}),
    };
  };
}
