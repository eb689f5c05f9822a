/**
 * keyward.updateEndUser and the `tags` option of listEndUsers / endUsers (CONTRACT 10) against a real
 * Keyward on a real socket: what they send (a PATCH with the JSON body; one `tag=key:value` per pair),
 * what they answer through the SDK's own types, a PATCH retried after a lost answer, and a refusal as
 * a KeywardError with the contract's code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EndUserSummary, Keyward, KeywardError, type UpdatedEndUser } from '../../src/sdk/index.js';
import { setEndUserProfile } from '../../src/services/audience/end-user-profile.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { type StandIn, startStandIn } from './stand-in.js';

let t: TestApp;
let tenant: Tenant;
let keyward: Keyward;
let standIn: StandIn;

beforeAll(async () => {
  ({ t, tenant } = await startWithTenant('sqlite'));
  t.ctx.publicUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keyward = new Keyward({ baseUrl: t.ctx.publicUrl, accountKey: tenant.accountKey, serverKey: tenant.serverKey });
  standIn = await startStandIn(t.ctx.publicUrl);
  for (const [id, tags] of [
    ['sdk-1', { plan: 'pro', region: 'eu' }],
    ['sdk-2', { plan: 'free', region: 'eu' }],
    ['sdk-3', { plan: 'pro', region: 'us' }],
    ['sdk-4', { plan: 'pro', region: 'eu' }],
  ] as const) {
    t.clock.advance(1);
    await setEndUserProfile(t.ctx, {
      accountId: tenant.accountId,
      serverId: tenant.serverId,
      externalUserId: id,
      change: { tags },
      makeIfNew: true,
      actor: CLI_ACTOR,
    });
  }
});
afterAll(async () => {
  await standIn?.close();
  await t?.close();
});

describe('updateEndUser', () => {
  it('sets, merges and clears the profile, answering the end user as the list shows them', async () => {
    const updated: UpdatedEndUser = await keyward.updateEndUser('sdk-1', {
      displayName: 'Sdk One',
      email: 'one@example.test',
      tags: { region: null, tier: 'gold' },
    });
    expect(updated).toMatchObject({
      externalUserId: 'sdk-1',
      displayName: 'Sdk One',
      email: 'one@example.test',
      tags: { plan: 'pro', tier: 'gold' },
      credentials: [],
    });
    const cleared = await keyward.updateEndUser('sdk-1', { email: null });
    expect(cleared).toMatchObject({ displayName: 'Sdk One', email: null });
    expect(await keyward.getEndUser('sdk-1')).toMatchObject({ displayName: 'Sdk One', email: null, tags: { plan: 'pro', tier: 'gold' } });
  });

  it('sends a PATCH with the JSON body, and sends it again after a lost answer with the same outcome', async () => {
    const through = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey, maxRetryDelayMs: 50 });
    standIn.script({ forwardThenAnswer: 503 });
    const from = standIn.exchanges.length;
    const updated = await through.updateEndUser('sdk-2', { displayName: 'Sdk Two', tags: { plan: 'pro' } });
    const sent = standIn.exchanges.slice(from);
    expect(sent.map((e) => [e.method, e.url, e.requestHeaders['content-type']])).toEqual([
      ['PATCH', '/v1/end-users/sdk-2', 'application/json'],
      ['PATCH', '/v1/end-users/sdk-2', 'application/json'],
    ]);
    expect(updated).toMatchObject({ displayName: 'Sdk Two', tags: { plan: 'pro', region: 'eu' } });
  });

  it('throws a KeywardError with the contract’s code for a bad input and for an unknown end user', async () => {
    const bad = await keyward.updateEndUser('sdk-3', { tags: { 'Bad Key': 'x' } }).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(KeywardError);
    expect(bad).toMatchObject({ status: 400, code: 'validation_failed' });
    expect((bad as KeywardError).detail).toContain('The tag key "Bad Key" is not allowed');
    const missing = await keyward.updateEndUser('nobody', { displayName: 'x' }).catch((error: unknown) => error);
    expect(missing).toMatchObject({ status: 404, code: 'end_user_not_found' });
  });
});

describe('the tags option of the list', () => {
  it('sends one tag=key:value per pair and lists only the end users with all of them', async () => {
    const through = new Keyward({ baseUrl: standIn.url, accountKey: tenant.accountKey, serverKey: tenant.serverKey });
    const from = standIn.exchanges.length;
    const page = await through.listEndUsers({ tags: { plan: 'pro', region: 'eu' }, limit: 10 });
    expect(standIn.exchanges[from]!.url).toBe('/v1/end-users?limit=10&tag=plan%3Apro&tag=region%3Aeu');
    expect(page.data.map((m) => m.externalUserId)).toEqual(['sdk-2', 'sdk-4']);
    expect(page.data[0]!.tags).toEqual({ plan: 'pro', region: 'eu' });
  });

  it('pages through every match with endUsers', async () => {
    const seen: EndUserSummary[] = [];
    for await (const member of keyward.endUsers({ tags: { plan: 'pro' }, limit: 1 })) seen.push(member);
    expect(seen.map((m) => m.externalUserId)).toEqual(['sdk-1', 'sdk-2', 'sdk-3', 'sdk-4']);
  });
});
