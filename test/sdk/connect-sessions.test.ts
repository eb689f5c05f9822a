/**
 * keyward.createConnectSession (CONTRACT 10) against a real Keyward on a real socket: what it sends
 * (an Idempotency-Key of its own, kept across a retry), what it answers through the SDK's own types,
 * the Connect page its URL opens, and a refusal as a KeywardError with the contract's code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConnectSession, Keyward, KeywardError } from '../../src/sdk/index.js';
import { APP_REDIRECT, type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { type StandIn, startStandIn } from './stand-in.js';

let o: OAuthTenant;
let keyward: Keyward;
let standIn: StandIn;

beforeAll(async () => {
  o = await startOAuthTenant('sqlite', { listen: true });
  keyward = new Keyward({ baseUrl: o.t.ctx.publicUrl, accountKey: o.tenant.accountKey, serverKey: o.tenant.serverKey });
  standIn = await startStandIn(o.t.ctx.publicUrl);
});
afterAll(async () => {
  await standIn?.close();
  await o?.close();
});

describe('createConnectSession', () => {
  it('answers a session whose URL opens the Connect page for the end user', async () => {
    const session: ConnectSession = await keyward.createConnectSession({
      externalUserId: 'auth0|sdk ü',
      providers: ['acme', 'openai'],
      redirectUri: APP_REDIRECT,
      allowedOrigins: ['https://app.example'],
      expiresIn: 600,
      endUser: { displayName: 'Sdk User', email: 'sdk@example.test' },
    });
    expect(Object.keys(session).sort()).toEqual(['createdAt', 'expiresAt', 'externalUserId', 'id', 'url']);
    expect(session.id).toMatch(/^csn_/);
    expect(session.externalUserId).toBe('auth0|sdk ü');
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(600_000);
    const page = await fetch(session.url);
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('Connecting as <strong>Sdk User</strong>');
    expect(text).toContain('<h2>Acme</h2>');
    // The end user is made with the name and email given.
    const member = await keyward.getEndUser('auth0|sdk ü');
    expect(member).toMatchObject({ externalUserId: 'auth0|sdk ü', displayName: 'Sdk User', email: 'sdk@example.test', credentials: [] });
  });

  it('sends an Idempotency-Key of its own and keeps it across a retry, so one session is made', async () => {
    const through = new Keyward({ baseUrl: standIn.url, accountKey: o.tenant.accountKey, serverKey: o.tenant.serverKey, maxRetryDelayMs: 50 });
    standIn.script({ forwardThenAnswer: 503 });
    const session = await through.createConnectSession({ externalUserId: 'u_sdk_retry' });
    const sent = standIn.exchanges.filter((e) => e.url === '/v1/connect-sessions');
    expect(sent).toHaveLength(2);
    const [first, second] = sent.map((e) => e.requestHeaders['idempotency-key']);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toBe(first);
    expect(sent[1]!.upstream?.headers.get('idempotent-replayed')).toBe('true');
    const rows = await o.t.ctx.store.db.selectFrom('connect_sessions').select('id').where('external_user_id', '=', 'u_sdk_retry').execute();
    expect(rows.map((r) => r.id)).toEqual([session.id]);
  });

  it('throws a KeywardError with the contract code for a refused session', async () => {
    const refusal = await keyward.createConnectSession({ externalUserId: 'u_sdk_bad', allowedOrigins: ['https://app.example/path'] }).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(KeywardError);
    expect(refusal).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((refusal as KeywardError).errors).toEqual([
      { path: '/body/allowedOrigins/0', message: expect.stringMatching(/^allowedOrigins\[0\] must be an origin/) },
    ]);
  });
});
