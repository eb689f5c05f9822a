/**
 * Retries and Idempotency-Key, against a real Keyward behind a real stand-in server that can lose or
 * replace its answers: a real rate limit's 429 waited out as Retry-After says, 5xx and broken
 * connections retried with backoff, a POST whose answer was lost answered by a replay, and no retry
 * where another attempt would be answered the same.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Keyward, KeywardError } from '../../src/sdk/index.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { type StandIn, startStandIn } from './stand-in.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const problem = (code: string) =>
  JSON.stringify({ type: `/errors/${code}`, title: code, status: 503, detail: 'Down for maintenance.', code, requestId: 'req_standin' });

let t: TestApp;
let tenant: Tenant;
let standIn: StandIn;
let keyward: Keyward;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant('sqlite', { rateLimitPerMinute: 3 }));
  standIn = await startStandIn(await t.app.listen({ host: '127.0.0.1', port: 0 }));
  keyward = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey, maxRetryDelayMs: 5000 });
});
afterAll(async () => {
  await standIn?.close();
  await t?.close();
});
// Each test starts in a fresh rate-limit window of 3 requests, with nothing recorded.
beforeEach(() => {
  t.clock.advance(61);
  standIn.exchanges.length = 0;
});

describe('429 and Retry-After', () => {
  it('waits as long as a real rate limit says, then succeeds', async () => {
    await keyward.listEndUsers();
    await keyward.listEndUsers();
    await keyward.listEndUsers();
    t.clock.advance(58);
    // Keyward's window ends 2 s on; its clock reaches that point 1 s from now in real time, so a
    // retry sooner than Retry-After is refused again, and one as late as it says succeeds.
    const moved = setTimeout(() => t.clock.advance(5), 1000);
    try {
      const page = await keyward.listEndUsers();
      expect(page.data).toEqual([]);
    } finally {
      clearTimeout(moved);
    }
    const [limited, retried] = standIn.exchanges.slice(3);
    expect(standIn.exchanges).toHaveLength(5);
    expect(limited!.upstream).toMatchObject({ status: 429 });
    expect(limited!.upstream!.headers.get('retry-after')).toBe('2');
    expect(retried!.upstream).toMatchObject({ status: 200 });
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(2000);
  });

  it('throws at once where Retry-After asks for longer than maxRetryDelayMs', async () => {
    standIn.script({ status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': '120' }, body: problem('maintenance') });
    const started = Date.now();
    const error = await keyward.listEndUsers().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeywardError);
    expect(error).toMatchObject({ status: 503, code: 'maintenance', requestId: 'req_standin', detail: 'Down for maintenance.' });
    expect(standIn.exchanges).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    standIn.script({ status: 503, headers: { 'retry-after': inTwoSeconds }, body: problem('maintenance') });
    await keyward.listEndUsers();
    const [first, second] = standIn.exchanges;
    // An HTTP date counts in whole seconds: at least one second, at most two.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    expect(second!.upstream).toMatchObject({ status: 200 });
  });
});

describe('5xx and broken connections', () => {
  it('retries a 503 after a backoff and returns the answer that followed', async () => {
    standIn.script({ status: 503, body: problem('maintenance') });
    const member = await keyward.listEndUsers({ limit: 5 });
    expect(member.hasMore).toBe(false);
    expect(standIn.exchanges.map((e) => e.status)).toEqual([503, 200]);
    // Half of the first backoff (500 ms) is fixed, half is jitter.
    expect(standIn.exchanges[1]!.at - standIn.exchanges[0]!.at).toBeGreaterThanOrEqual(250);
  });

  it('retries a connection closed without an answer', async () => {
    standIn.script('reset');
    await keyward.listEndUsers();
    expect(standIn.exchanges.map((e) => e.status)).toEqual([null, 200]);
  });

  it('retries a 200 whose body was cut off half-way', async () => {
    standIn.script('cut');
    const page = await keyward.listEndUsers();
    expect(page.hasMore).toBe(false);
    expect(standIn.exchanges.map((e) => e.status)).toEqual([200, 200]);
  });

  it('gives up after maxAttempts with the last error', async () => {
    const client = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey, maxAttempts: 3, maxRetryDelayMs: 100 });
    standIn.script({ status: 500, body: problem('first') }, { status: 502, body: problem('second') }, { status: 503, body: problem('third') });
    const error = await client.listEndUsers().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'third', status: 503 });
    expect(standIn.exchanges).toHaveLength(3);
  });

  it('does not retry an answer another attempt would repeat (a 404)', async () => {
    const error = await keyward.getEndUser('nobody').catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: 'end_user_not_found' });
    expect(standIn.exchanges).toHaveLength(1);
  });
});

describe('Idempotency-Key', () => {
  it("a POST whose answer was lost is retried with the same generated key, and Keyward's replay is returned", async () => {
    standIn.script({ forwardThenAnswer: 503 });
    const session = await keyward.connectStatic('openai', { externalUserId: 'lost-answer' });
    const [lost, replayed] = standIn.exchanges;
    expect(standIn.exchanges).toHaveLength(2);
    const key = lost!.requestHeaders['idempotency-key'];
    expect(key).toMatch(UUID);
    expect(replayed!.requestHeaders['idempotency-key']).toBe(key);
    // Keyward made the form once: the first answer it gave (lost on the way) is the one replayed.
    expect(lost!.upstream!.status).toBe(201);
    expect(JSON.parse(lost!.upstream!.body).id).toBe(session.id);
    expect(replayed!.upstream!.headers.get('idempotent-replayed')).toBe('true');
  });

  it('each call gets a key of its own', async () => {
    await keyward.connectStatic('openai', { externalUserId: 'k1' });
    await keyward.connectStatic('openai', { externalUserId: 'k1' });
    const [a, b] = standIn.exchanges.map((e) => e.requestHeaders['idempotency-key']);
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
    expect(standIn.exchanges.map((e) => e.upstream!.headers.get('idempotent-replayed'))).toEqual([null, null]);
  });

  it('a given key is sent as it is: the same call again is a replay, another body with it is refused', async () => {
    const first = await keyward.connectStatic('openai', { externalUserId: 'order-42' }, { idempotencyKey: 'order-42 create' });
    const again = await keyward.connectStatic('openai', { externalUserId: 'order-42' }, { idempotencyKey: 'order-42 create' });
    expect(again).toEqual(first);
    expect(standIn.exchanges.map((e) => e.requestHeaders['idempotency-key'])).toEqual(['order-42 create', 'order-42 create']);
    expect(standIn.exchanges[1]!.upstream!.headers.get('idempotent-replayed')).toBe('true');
    const reused = await keyward.connectStatic('openai', { externalUserId: 'someone-else' }, { idempotencyKey: 'order-42 create' }).catch((e: unknown) => e);
    expect(reused).toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });

  it('GET and DELETE carry no key', async () => {
    await keyward.listEndUsers();
    await keyward.revokeEndUser('nobody').catch(() => undefined);
    expect(standIn.exchanges.map((e) => e.requestHeaders['idempotency-key'])).toEqual([undefined, undefined]);
  });
});
