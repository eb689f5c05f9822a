/**
 * Every failure reaches the caller as a KeywardError: Keyward's problem documents with their status,
 * code, request id, detail and field errors, and the SDK's own codes where no problem came back.
 */

import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyward, KeywardError, SDK_ERROR_CODES } from '../../src/sdk/index.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { generateKey } from '../../src/services/keys/key-format.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { createTenant, keys, newAccountKey, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { type StandIn, startStandIn } from './stand-in.js';

let t: TestApp;
let tenant: Tenant;
let baseUrl: string;
let keyward: Keyward;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant('sqlite'));
  baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keyward = new Keyward({ baseUrl, accountKey: tenant.accountKey, serverKey: tenant.serverKey });
});
afterAll(() => t?.close());

/** The KeywardError `promise` rejects with (fails the test where it resolves or throws anything else). */
async function failure(promise: Promise<unknown>): Promise<KeywardError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KeywardError);
  return error as KeywardError;
}

/** The request id the service logged for its answer with `status`, so the error's id can be matched to it. */
function loggedRequestIds(status: number): string[] {
  return t.logs
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'request' && line.statusCode === status)
    .map((line) => line.reqId);
}

describe("Keyward's problems", () => {
  it('404 end_user_not_found, with every field of the problem and the request id the service logged', async () => {
    const error = await failure(keyward.getEndUser('nobody'));
    expect(error).toMatchObject({
      name: 'KeywardError',
      status: 404,
      code: 'end_user_not_found',
      type: '/errors/end_user_not_found',
      title: expect.any(String),
      detail: expect.any(String),
      errors: undefined,
    });
    expect(error.requestId).toMatch(/^req_/);
    expect(loggedRequestIds(404)).toContain(error.requestId);
    expect(error.message).toBe(`end_user_not_found: ${error.detail}`);
  });

  it('400 validation_failed with the refused field', async () => {
    const error = await failure(keyward.connectStatic('openai', { externalUserId: 'bad\u0001id' }));
    expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(error.errors).toEqual([expect.objectContaining({ path: '/body/externalUserId' })]);
    const range = await failure(keyward.listEndUsers({ limit: 101 }));
    expect(range.errors).toEqual([expect.objectContaining({ path: '/query/limit' })]);
  });

  it('404 provider_not_found, 422 provider_auth_mismatch, 404 credential_not_found and 400 invalid_cursor', async () => {
    expect(await failure(keyward.startOAuth('no-such-provider', { externalUserId: 'u1' }))).toMatchObject({ status: 404, code: 'provider_not_found' });
    expect(await failure(keyward.startOAuth('openai', { externalUserId: 'u1' }))).toMatchObject({ status: 422, code: 'provider_auth_mismatch' });
    expect(await failure(keyward.listEndUsers({ cursor: 'not-a-cursor' }))).toMatchObject({ status: 400, code: 'invalid_cursor' });
    const session = await keyward.connectStatic('openai', { externalUserId: 'u1' });
    expect(session.status).toBe('pending');
    // A pending form is no credential: the member does not exist until the form is filled in.
    expect(await failure(keyward.revokeEndUser('u1', { provider: 'openai' }))).toMatchObject({ status: 404, code: 'end_user_not_found' });
    await connectStatic(t.app, keys(tenant), { externalUserId: 'u1', values: { apiKey: 'sk-proj-errors-openaiopenaiopenaiopenai' } });
    expect(await failure(keyward.revokeEndUser('u1', { provider: 'github' }))).toMatchObject({ status: 404, code: 'credential_not_found' });
  });

  it('401 from the guard: an unknown account key, a revoked one, and the keys swapped', async () => {
    const unknown = new Keyward({ baseUrl, accountKey: generateKey('account'), serverKey: tenant.serverKey });
    expect(await failure(unknown.listEndUsers())).toMatchObject({ status: 401, code: 'account_key_invalid' });
    const revoked = await newAccountKey(t.ctx, tenant, { label: 'revoked' });
    await revokeAccountKey(t.ctx, revoked.keyId, CLI_ACTOR);
    const client = new Keyward({ baseUrl, accountKey: revoked.key, serverKey: tenant.serverKey });
    expect(await failure(client.getEndUser('u1'))).toMatchObject({ status: 401, code: 'account_key_revoked' });
    const swapped = new Keyward({ baseUrl, accountKey: tenant.serverKey, serverKey: tenant.accountKey });
    const error = await failure(swapped.listEndUsers());
    expect(error).toMatchObject({ status: 401, code: 'keys_swapped' });
    // No key in the error, anywhere.
    const everything = JSON.stringify({ ...error, message: error.message });
    expect(everything).not.toContain(tenant.accountKey);
    expect(everything).not.toContain(tenant.serverKey);
  });

  it('403 server_not_business_mode', async () => {
    const personal = await createTenant(t.ctx, { mode: 'personal' });
    const client = new Keyward({ baseUrl, accountKey: personal.accountKey, serverKey: personal.serverKey });
    expect(await failure(client.getEndUser('u1'))).toMatchObject({ status: 403, code: 'server_not_business_mode' });
  });
});

describe("the SDK's own codes", () => {
  let standIn: StandIn;
  beforeAll(async () => {
    standIn = await startStandIn(baseUrl);
  });
  afterAll(() => standIn?.close());

  it('network_error where nothing listens, after its retries', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new Keyward({
      baseUrl: `http://127.0.0.1:${port}`,
      accountKey: tenant.accountKey,
      serverKey: tenant.serverKey,
      maxAttempts: 2,
      maxRetryDelayMs: 50,
    });
    const error = await failure(client.listEndUsers());
    expect(error).toMatchObject({ status: null, code: SDK_ERROR_CODES.network, requestId: null });
    expect(error.detail).toContain('ECONNREFUSED');
  });

  it('timeout where no answer comes in time', async () => {
    standIn.script('hang');
    const client = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey, maxAttempts: 1, timeoutMs: 200 });
    const error = await failure(client.listEndUsers());
    expect(error).toMatchObject({ status: null, code: SDK_ERROR_CODES.timeout });
  });

  it("invalid_response for a proxy's HTML error page, kept after the retries of a 5xx", async () => {
    const page = { status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' };
    standIn.script(page, page);
    const client = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey, maxAttempts: 2, maxRetryDelayMs: 50 });
    const error = await failure(client.listEndUsers());
    expect(error).toMatchObject({ status: 502, code: SDK_ERROR_CODES.invalidResponse, detail: 'Keyward answered 502 with text/html, not a problem document.' });
  });

  it('invalid_response for a 2xx whose body is not JSON', async () => {
    standIn.script({ status: 200, headers: { 'content-type': 'text/plain', 'x-request-id': 'req_proxy' }, body: 'OK' });
    const error = await failure(new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey }).listEndUsers());
    expect(error).toMatchObject({ status: 200, code: SDK_ERROR_CODES.invalidResponse, requestId: 'req_proxy' });
  });

  it('a TypeError for a client made without its keys', () => {
    expect(() => new Keyward({ baseUrl, accountKey: '', serverKey: tenant.serverKey })).toThrow('accountKey is required');
  });
});
