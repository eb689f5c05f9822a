/**
 * An OpenID Connect issuer on 127.0.0.1 that answers as the test scripts it, for what a real provider
 * will not do on purpose (CONTRACT 9's bad inputs): its token endpoint signs its own ID tokens with a
 * key it publishes in its JWKS, and the test says what the next one holds (another audience, an
 * expiry in the past, a wrong nonce, `email_verified: false`) or that it is signed with a key the
 * JWKS does not have. Its discovery document or its JWKS can also be made larger than 1 MiB, or the
 * discovery document changed. The token endpoint checks the client's id and secret (Basic, or in the
 * form) and records how they came, so a test sees which client authentication Keyward used. Token
 * times are by `now` (a test's clock) where given.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MIB = 1024 * 1024;

export interface ScriptedIdToken {
  /** Claims put over the defaults (iss, sub, aud, iat, exp, nonce, email, email_verified); undefined removes one. */
  claims?: Record<string, unknown>;
  /** `unpublished`: signed by a key the JWKS does not hold (under the published key's kid), so the signature does not verify. */
  signWith?: 'published' | 'unpublished';
}

export interface TokenRequest {
  /** How the client authenticated: its id and secret in the Authorization header, or in the form. */
  auth: 'client_secret_basic' | 'client_secret_post' | 'none';
  clientId: string | null;
  grantType: string | null;
  codeVerifier: string | null;
  redirectUri: string | null;
}

export interface ScriptedOidcIssuer {
  /** http://127.0.0.1:<port> */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The next ID tokens: the email and subject they name, and what the test changes in them. */
  email: string;
  subject: string;
  /** The nonce the next ID token carries by default: the test sets the one of the authorization URL it read. */
  nonce: string;
  /** Nonces by authorization code, for sign-ins in flight at once (each code's ID token carries its own); else `nonce`. */
  nonceOfCode: Map<string, string>;
  idToken: ScriptedIdToken;
  /** Put over the discovery document (undefined removes a member). */
  discovery: Record<string, unknown>;
  /** Pads the discovery document or the JWKS past 1 MiB. */
  oversized: 'none' | 'discovery' | 'jwks';
  tokenRequests: TokenRequest[];
  /** Every request path received, in order. */
  paths: string[];
  close(): Promise<void>;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function signJwt(claims: Record<string, unknown>, key: KeyObject, kid: string): string {
  const input = `${b64url({ alg: 'RS256', typ: 'JWT', kid })}.${b64url(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The client of the request: Basic credentials (RFC 6749 2.3.1: form-encoded, then base64) or form fields. */
function clientOf(req: IncomingMessage, form: URLSearchParams): { auth: TokenRequest['auth']; id: string | null; secret: string | null } {
  const header = req.headers.authorization;
  if (header?.startsWith('Basic ')) {
    const [id = '', secret = ''] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
    return { auth: 'client_secret_basic', id: decodeURIComponent(id), secret: decodeURIComponent(secret) };
  }
  if (form.has('client_secret')) return { auth: 'client_secret_post', id: form.get('client_id'), secret: form.get('client_secret') };
  return { auth: 'none', id: form.get('client_id'), secret: null };
}

export async function startScriptedOidcIssuer(options: { email?: string; now?: () => number } = {}): Promise<ScriptedOidcIssuer> {
  const published = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const unpublished = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = 'scripted-1';
  const jwk = { ...published.publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' };

  const server = createServer((req, res) => {
    void answer(req, res).catch((error: Error) => json(res, 500, { error: 'server_error', error_description: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const endpoint: ScriptedOidcIssuer = {
    issuer,
    clientId: 'keyward-sso',
    clientSecret: randomBytes(24).toString('base64url'),
    email: options.email ?? 'ada@sso.example',
    subject: 'subject-ada',
    nonce: '',
    nonceOfCode: new Map(),
    idToken: {},
    discovery: {},
    oversized: 'none',
    tokenRequests: [],
    paths: [],
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeAllConnections();
      await closed;
    },
  };

  function discoveryDocument(): Record<string, unknown> {
    const document: Record<string, unknown> = {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      ...endpoint.discovery,
    };
    for (const [name, value] of Object.entries(document)) if (value === undefined) delete document[name];
    if (endpoint.oversized === 'discovery') document.padding = 'a'.repeat(MIB + 1024);
    return document;
  }

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', issuer).pathname;
    endpoint.paths.push(path);
    if (path === '/.well-known/openid-configuration') return json(res, 200, discoveryDocument());
    if (path === '/jwks') {
      const keys = endpoint.oversized === 'jwks' ? [jwk, { kty: 'oct', kid: 'padding', k: 'a'.repeat(MIB + 1024) }] : [jwk];
      return json(res, 200, { keys });
    }
    if (path !== '/token' || req.method !== 'POST') return json(res, 404, { error: 'not_found' });
    const form = await formOf(req);
    const client = clientOf(req, form);
    endpoint.tokenRequests.push({
      auth: client.auth,
      clientId: client.id,
      grantType: form.get('grant_type'),
      codeVerifier: form.get('code_verifier'),
      redirectUri: form.get('redirect_uri'),
    });
    if (client.id !== endpoint.clientId || client.secret !== endpoint.clientSecret) return json(res, 401, { error: 'invalid_client' });
    const now = Math.floor((options.now?.() ?? Date.now()) / 1000);
    const claims: Record<string, unknown> = {
      iss: issuer,
      sub: endpoint.subject,
      aud: endpoint.clientId,
      iat: now,
      exp: now + 300,
      nonce: endpoint.nonceOfCode.get(form.get('code') ?? '') ?? endpoint.nonce,
      email: endpoint.email,
      email_verified: true,
      ...endpoint.idToken.claims,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    const key = endpoint.idToken.signWith === 'unpublished' ? unpublished.privateKey : published.privateKey;
    return json(res, 200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: signJwt(claims, key, kid) });
  }

  return endpoint;
}
