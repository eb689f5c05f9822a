/**
 * Deliveries for the suites that show them (CLI, dashboard): an event written to the outbox the way a
 * change writes it (recordEvent in the change's transaction), then sent by the test node's real
 * dispatcher to a real receiver, whose answer decides the outcome (a 400 fails the message at once).
 */
import { iso } from '../../src/primitives/clock.js';
import { recordEvent } from '../../src/services/webhooks/webhook-events.js';
import type { TestApp } from './test-app.js';

/** Writes a `connect.failed` event on the server, as a flow ending failed does; the ids of its messages. */
export function writeEvent(t: Pick<TestApp, 'ctx' | 'clock'>, serverId: string, externalUserId = 'u_42'): Promise<string[]> {
  return t.ctx.store.transaction(() =>
    recordEvent(t.ctx, {
      type: 'connect.failed',
      serverId,
      at: iso(t.clock.now()),
      data: { externalUserId, provider: 'github', flowId: 'oflow_000000000000aaaaaaaaaaaaaaaa', error: 'access_denied' },
    }),
  );
}

/** Writes an event and has the node deliver it now; the ids of its messages (each settled by its endpoint's answer). */
export async function writeAndDeliver(t: Pick<TestApp, 'ctx' | 'clock' | 'webhooks'>, serverId: string, externalUserId?: string): Promise<string[]> {
  const ids = await writeEvent(t, serverId, externalUserId);
  await t.webhooks.drain();
  return ids;
}

/** A message's stored status. */
export async function messageStatus(t: Pick<TestApp, 'ctx'>, messageId: string): Promise<string> {
  const row = await t.ctx.store.db.selectFrom('webhook_messages').select('status').where('id', '=', messageId).executeTakeFirstOrThrow();
  return row.status;
}
