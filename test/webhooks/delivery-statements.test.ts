/**
 * The dispatcher's own statements on both engines (store/webhook-delivery-repository.ts): a batch of
 * outcomes is written per message only where this node still holds the message's lease (one statement
 * on PostgreSQL, a transaction on SQLite), a lease is given back only by the lease itself, and the walk of endpoints with something due reads the
 * outbox by endpoint, never every pending message (PostgreSQL planned the EXISTS it once was as a
 * semi-join over all of them).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addWebhookEndpoint, removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import type { NewWebhookMessage } from '../../src/store/webhooks-repository.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const T0 = Date.UTC(2026, 0, 1, 12);
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

describe.each(ENGINES)('the webhook dispatcher statements on %s', (engine) => {
  let t: TestApp;
  let serverId: string;
  beforeAll(async () => {
    const started = await startWithTenant(engine);
    t = started.t;
    serverId = started.tenant.serverId;
  });
  afterAll(() => t.close());

  const endpoint = async () => (await addWebhookEndpoint(t.ctx, { serverId, url: 'https://hooks.example.test/in', actor: CLI_ACTOR })).webhookId;
  const message = (endpointId: string, id: string, dueSeconds: number, failures = 0): NewWebhookMessage => ({
    id,
    endpoint_id: endpointId,
    server_id: serverId,
    event_type: 'credential.connected',
    payload: '{}',
    status: 'pending',
    created_at: at(-100),
    schedule_start: at(-100),
    failures,
    next_attempt_at: at(dueSeconds),
  });
  const row = (id: string) => t.ctx.store.db.selectFrom('webhook_messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attemptsOf = (id: string) => t.ctx.store.db.selectFrom('webhook_attempts').selectAll().where('message_id', '=', id).execute();
  const attempt = (id: string, statusCode: number | null, error: string | null) => ({
    id,
    attempted_at: at(1),
    status_code: statusCode,
    error,
    duration_ms: 7,
  });

  it('writes each outcome of a batch only where this node still holds the lease, and keeps what the outcome leaves out', async () => {
    const { webhooks, webhookDelivery } = t.ctx.store;
    const endpointId = await endpoint();
    await webhooks.addMessages([
      message(endpointId, 'msg_s1', -4),
      message(endpointId, 'msg_s2', -3),
      message(endpointId, 'msg_s3', -2),
      message(endpointId, 'msg_s4', -1, 2),
    ]);
    const claimedByA = await webhookDelivery.claim(endpointId, 10, { holder: 'node-a', until: at(15), now: at(0) });
    expect(claimedByA.map((m) => m.id).sort()).toEqual(['msg_s1', 'msg_s2', 'msg_s3', 'msg_s4']);
    // Node a's leases run out; node b takes the oldest message.
    const claimedByB = await webhookDelivery.claim(endpointId, 1, { holder: 'node-b', until: at(35), now: at(20) });
    expect(claimedByB.map((m) => m.id)).toEqual(['msg_s1']);

    const written = await webhookDelivery.settleAll('node-a', [
      { messageId: 'msg_s1', settlement: { status: 'delivered', ended_at: at(21) }, attempt: attempt('att_s1', 204, null) },
      { messageId: 'msg_s2', settlement: { status: 'pending', failures: 1, next_attempt_at: at(60) }, attempt: attempt('att_s2', 503, null) },
      { messageId: 'msg_s3', settlement: { status: 'failed', failures: 1, ended_at: at(21) }, attempt: attempt('att_s3', null, 'timeout') },
      { messageId: 'msg_s4', settlement: { status: 'delivered', ended_at: at(21) }, attempt: attempt('att_s4', 200, null) },
    ]);
    expect(written).toEqual([false, true, true, true]);

    // b's message: untouched, and no attempt of a's recorded for it.
    expect(await row('msg_s1')).toMatchObject({ status: 'pending', failures: 0, lease_holder: 'node-b', lease_until: at(35), ended_at: null });
    expect(await attemptsOf('msg_s1')).toEqual([]);
    expect(await row('msg_s2')).toMatchObject({
      status: 'pending',
      failures: 1,
      next_attempt_at: at(60),
      lease_holder: null,
      lease_until: null,
      ended_at: null,
    });
    expect(await row('msg_s3')).toMatchObject({ status: 'failed', failures: 1, next_attempt_at: at(-2), lease_holder: null, ended_at: at(21) });
    // A delivery keeps the failures before it and the time it was due.
    expect(await row('msg_s4')).toMatchObject({ status: 'delivered', failures: 2, next_attempt_at: at(-1), lease_holder: null, ended_at: at(21) });
    expect(await attemptsOf('msg_s2')).toEqual([{ id: 'att_s2', message_id: 'msg_s2', attempted_at: at(1), status_code: 503, error: null, duration_ms: 7 }]);
    expect(await attemptsOf('msg_s3')).toEqual([
      { id: 'att_s3', message_id: 'msg_s3', attempted_at: at(1), status_code: null, error: 'timeout', duration_ms: 7 },
    ]);
    expect((await attemptsOf('msg_s4')).map((a) => a.id)).toEqual(['att_s4']);
  });

  it('gives a lease back only where that very lease still holds the message, not a newer one of the same holder', async () => {
    const { webhooks, webhookDelivery } = t.ctx.store;
    const endpointId = await endpoint();
    await webhooks.addMessages([message(endpointId, 'msg_r1', -1)]);
    const [first] = await webhookDelivery.claim(endpointId, 1, { holder: 'node-a', until: at(15), now: at(0) });
    expect(first!.lease_until).toBe(at(15));
    // The lease ran out and the same node claimed the message again: the first lease's late give-back
    // leaves the second alone.
    const [again] = await webhookDelivery.claim(endpointId, 1, { holder: 'node-a', until: at(35), now: at(20) });
    await webhookDelivery.releaseLease('msg_r1', { holder: 'node-a', until: first!.lease_until });
    expect(await row('msg_r1')).toMatchObject({ lease_holder: 'node-a', lease_until: at(35) });
    await webhookDelivery.releaseLease('msg_r1', { holder: 'node-b', until: again!.lease_until });
    expect(await row('msg_r1')).toMatchObject({ lease_holder: 'node-a', lease_until: at(35) });
    await webhookDelivery.releaseLease('msg_r1', { holder: 'node-a', until: again!.lease_until });
    expect(await row('msg_r1')).toMatchObject({ status: 'pending', lease_holder: null, lease_until: null });
    expect(await attemptsOf('msg_r1')).toEqual([]);
    // Due again at once: gone with its endpoint, so that the later tests' walks do not see it.
    await removeWebhookEndpoint(t.ctx, { webhookId: endpointId, actor: CLI_ACTOR });
  });

  it('writes nothing of a batch whose statement fails', async () => {
    const { webhooks, webhookDelivery } = t.ctx.store;
    const endpointId = await endpoint();
    await webhooks.addMessages([message(endpointId, 'msg_f1', -2), message(endpointId, 'msg_f2', -1)]);
    await webhookDelivery.claim(endpointId, 10, { holder: 'node-a', until: at(15), now: at(0) });
    // The second attempt's id is taken already (the first's): the insert fails, and the settles with it.
    await expect(
      webhookDelivery.settleAll('node-a', [
        { messageId: 'msg_f1', settlement: { status: 'delivered', ended_at: at(2) }, attempt: attempt('att_s2', 204, null) },
        { messageId: 'msg_f2', settlement: { status: 'delivered', ended_at: at(2) }, attempt: attempt('att_f2', 204, null) },
      ]),
    ).rejects.toThrow();
    for (const id of ['msg_f1', 'msg_f2']) {
      expect(await row(id)).toMatchObject({ status: 'pending', lease_holder: 'node-a' });
      expect(await attemptsOf(id)).toEqual([]);
    }
  });

  it('finds the endpoints with something due by endpoint, never by reading every pending message', async () => {
    const { webhooks, webhookDelivery } = t.ctx.store;
    const db = t.ctx.store.db;
    const endpoints = [await endpoint(), await endpoint(), await endpoint()];
    await webhooks.addMessages(endpoints.map((id, i) => message(id, `msg_p${i}`, -1)));
    // Statistics taken while the outbox is small, then a backlog: as when a burst of events lands
    // between two of autovacuum's analyses. (Autovacuum is off for this table here, so it cannot
    // analyze midway.)
    if (engine === 'postgres') await sql`alter table webhook_messages set (autovacuum_enabled = false)`.execute(db);
    await sql`analyze`.execute(db);
    for (let batch = 0; batch < 5; batch++) {
      await webhooks.addMessages(Array.from({ length: 1000 }, (_, i) => message(endpoints[i % 3]!, `msg_b${batch}_${i}`, -1)));
    }
    const plan = await queryPlan({ db, engine }, webhookDelivery.dueEndpointsQuery(at(0), [endpoints[2]!], [], 32));
    if (engine === 'postgres') {
      // No semi-join at all: given one, the planner may choose (and in the benchmark chose) to hash
      // every pending message of every endpoint on each call; a subquery per endpoint cannot.
      expect(plan).not.toMatch(/Semi Join|Seq Scan on webhook_messages|Bitmap Heap Scan on webhook_messages/);
      expect(plan).toMatch(/Index (Only )?Scan using webhook_messages_endpoint_due/);
    } else {
      expect(plan).not.toMatch(/SCAN (m|webhook_messages)\b(?! USING)/);
      expect(plan).toMatch(/SEARCH m USING (COVERING )?INDEX webhook_messages_endpoint_due/);
    }
    // And it answers: the two endpoints not busy, each once.
    expect((await webhookDelivery.dueEndpoints(at(0), { endpoints: [endpoints[2]!], accounts: [] }, 32)).map((e) => e.id).sort()).toEqual(
      endpoints.slice(0, 2).sort(),
    );
  });
});
