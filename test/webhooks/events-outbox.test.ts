/**
 * The outbox's promises (CONTRACT 7), on both engines: an event is written in the transaction of its
 * change, so a change rolled back after its event was written sends nothing, and a form that loses
 * its race with a revoke tells nothing; and no secret (a typed value, a token, the client secret, the
 * whsec_ secret) is ever in a message, a body or header the receiver got, or a log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { storeCredential } from '../../src/services/credentials/credentials.js';
import { completeForm, openForm } from '../../src/services/providers/static-forms.js';
import { removeWebhookEndpoint, rotateWebhookSecret } from '../../src/services/webhooks/webhook-endpoints.js';
import { recordEvent } from '../../src/services/webhooks/webhook-events.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm } from '../helpers/form-session.js';
import { connectStatic, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { leaked } from '../helpers/secret-scan.js';
import { listedCredential, outboxRows, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const KEY_OLD = 'sk-proj-OLDVALUEabcdefghijklmnopqrstuvw';
const KEY_NEW = 'sk-proj-NEWVALUEabcdefghijklmnopqrstuvw';

describe.each(ENGINES)('the outbox on %s', (engine) => {
  let o: OAuthTenant;
  let all: Subscriber;
  beforeAll(async () => {
    // Access tokens that live 120 s: a read asking for 300 s of validity refreshes them.
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: 120 });
    all = await subscribe(o.t, o.tenant.serverId);
  });
  afterAll(async () => {
    await all.close();
    await o.close();
  });

  const listed = (externalUserId: string) => listedCredential(o.t.app, o.headers, externalUserId, 'openai');
  const types = async (externalUserId: string) => (await all.events(externalUserId)).map((e) => [e.type, e.data.credential?.id]);

  it('writes no message for a change whose transaction fails after its event was written', async () => {
    const at = o.t.clock.now().toISOString();
    let written: string[] = [];
    let seenInside: unknown;
    const change = o.t.ctx.store.transaction(async () => {
      written = await recordEvent(o.t.ctx, {
        type: 'credential.connected',
        serverId: o.tenant.serverId,
        at,
        data: {
          externalUserId: 'u_rolled_back',
          credential: { id: 'cred_rolledback', provider: 'openai', type: 'static', status: 'active', connectedAt: at, updatedAt: at },
        },
      });
      seenInside = await o.t.ctx.store.webhooks.message(written[0]!);
      // The change's next statement fails: an endpoint id that exists already.
      await o.t.ctx.store.webhooks.addEndpoint({ id: all.webhookId, server_id: o.tenant.serverId, url: all.receiver.url, events: null, created_at: at });
    });
    await expect(change).rejects.toThrow();
    // The message was written, in the transaction that then rolled back.
    expect(written).toHaveLength(1);
    expect(seenInside).toMatchObject({ id: written[0], status: 'pending' });
    expect(await o.t.ctx.store.webhooks.message(written[0]!)).toBeUndefined();
    expect(await outboxRows(o.t.ctx, 'u_rolled_back')).toEqual([]);
    expect(await all.events('u_rolled_back')).toEqual([]);
  });

  it("sends neither the replacement nor its revocation when storeCredential's transaction throws", async () => {
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_store_fails', values: { apiKey: KEY_OLD } });
    const old = await listed('u_store_fails');
    expect(await types('u_store_fails')).toEqual([['credential.connected', old.id]]);
    o.t.clock.advance(1);
    const change = o.t.ctx.store.transaction(async () => {
      await storeCredential(o.t.ctx, {
        accountId: o.tenant.accountId,
        serverId: o.tenant.serverId,
        externalUserId: 'u_store_fails',
        provider: 'openai',
        secret: { type: 'static', values: { apiKey: KEY_NEW } },
        actor: CLI_ACTOR,
        now: o.t.clock.now().toISOString(),
        origin: { sessionId: 'cfs_never' },
      });
      throw new Error('the change fails after storing the credential');
    });
    await expect(change).rejects.toThrow('the change fails after storing the credential');
    expect(await listed('u_store_fails')).toEqual(old);
    expect((await outboxRows(o.t.ctx, 'u_store_fails')).map((r) => r.event_type)).toEqual(['credential.connected']);
    expect(await types('u_store_fails')).toEqual([['credential.connected', old.id]]);
  });

  it('tells nothing of a hosted form whose POST lost its race with a revoke', async () => {
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_race', values: { apiKey: KEY_OLD } });
    const old = await listed('u_race');
    const form = await createForm(o.t.app, o.headers, { externalUserId: 'u_race' });
    const visit = await openHostedForm(o.t.app, form.url);
    // The POST has found the form open; the revoke commits before it writes.
    const open = await openForm(o.t.ctx, new URL(form.url).pathname.split('/').pop()!);
    if (open.state !== 'open') throw new Error('the form should be open');
    o.t.clock.advance(1);
    expect((await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_race', headers: o.headers })).statusCode).toBe(200);
    expect(await completeForm(o.t.ctx, open, { apiKey: KEY_NEW })).toEqual({ completed: false });
    // A POST arriving after the revoke finds the form gone.
    expect((await postHostedForm(o.t.app, visit, { apiKey: KEY_NEW })).statusCode).toBe(410);

    // Delivered in any order: the two messages were due together.
    const events = await all.events('u_race');
    expect(events.map((e) => [e.type, e.data.credential.id, e.data.reason]).sort()).toEqual([
      ['credential.connected', old.id, undefined],
      ['credential.revoked', old.id, 'revoked'],
    ]);
    expect(events.some((e) => e.data.sessionId === form.id)).toBe(false);
  });

  it('puts no secret in a message, in what the receiver got, or in a log line', async () => {
    // Its own endpoint, rotated: two whsec_ secrets sign every message meanwhile.
    const watcher = await subscribe(o.t, o.tenant.serverId);
    try {
      const rotated = await rotateWebhookSecret(o.t.ctx, { webhookId: watcher.webhookId, graceSeconds: 3600, actor: CLI_ACTOR });
      const secrets = [watcher.secret, rotated.secret, o.as.clients.basic.secret, KEY_OLD, KEY_NEW];
      // The key material too, without its prefix.
      secrets.push(...[watcher.secret, rotated.secret].map((s) => s.slice('whsec_'.length)));
      const tokensOf = async () => {
        const { accessToken, refreshToken } = await storedCredential(o, 'u_secrets');
        secrets.push(accessToken, refreshToken);
      };

      await connectStatic(o.t.app, o.headers, { externalUserId: 'u_secrets', values: { apiKey: KEY_OLD } });
      await connectStatic(o.t.app, o.headers, { externalUserId: 'u_secrets', values: { apiKey: KEY_NEW } }); // replaced
      await o.connect('u_secrets');
      await tokensOf();
      o.t.clock.advance(1);
      o.as.tokenEndpoint = 'unavailable';
      await o.read('u_secrets', 300); // refresh_failed
      o.as.tokenEndpoint = 'normal';
      o.t.clock.advance(30);
      await o.read('u_secrets', 300); // recovered, with new tokens
      await tokensOf();
      await o.connect('u_secrets'); // replaced, revoked at the provider
      await tokensOf();
      const denied = await o.start({ externalUserId: 'u_secrets' });
      await o.callback(await o.as.approve(denied.authorizationUrl, { deny: true }));
      await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_secrets', headers: o.headers });

      const events = await watcher.events('u_secrets');
      expect(new Set(events.map((e) => e.type))).toEqual(
        new Set(['credential.connected', 'credential.revoked', 'credential.refresh_failed', 'credential.recovered', 'connect.failed']),
      );
      const messages = JSON.stringify(await outboxRows(o.t.ctx));
      const received = JSON.stringify(watcher.receiver.received);
      const logs = o.t.logs.join('\n');
      // The scans can see what is there: ids and slugs are sent and stored as they are.
      for (const text of [messages, received]) expect(text).toContain('u_secrets');
      expect(logs.length).toBeGreaterThan(0);
      expect(leaked(messages, secrets)).toEqual([]);
      expect(leaked(received, secrets)).toEqual([]);
      expect(leaked(logs, secrets)).toEqual([]);
    } finally {
      o.as.tokenEndpoint = 'normal';
      await removeWebhookEndpoint(o.t.ctx, { webhookId: watcher.webhookId, actor: CLI_ACTOR });
      await watcher.close();
    }
  });
});
