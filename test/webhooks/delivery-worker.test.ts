/**
 * `keyward serve` delivers from a worker thread (src/jobs/webhook-dispatch.ts): a real process sends a
 * message written to the outbox, its outcome reaches the metrics the main thread serves, no log line
 * carries the master key, and SIGTERM stops the worker with the rest (exit code 0).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { deliveryOf, until } from '../helpers/webhook-delivery.js';
import { delivered, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';

const SLOW = 120_000;

describe.each(ENGINES)('keyward serve delivering from its worker thread on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let serve: ServeProcess | undefined;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
  }, SLOW);
  afterAll(async () => {
    await serve?.stop().catch(() => undefined);
    await t?.close();
  }, SLOW);

  it('sends the message, counts the delivery in /metrics, and stops cleanly', { timeout: SLOW }, async () => {
    const s = await subscribe(t, tenant.serverId);
    try {
      const masterKey = t.masterKey.toString('base64');
      serve = await startServe(
        cliEnv({
          KEYWARD_DATABASE_URL: t.database.url,
          KEYWARD_MASTER_KEY: masterKey,
          KEYWARD_ALLOW_PRIVATE_URLS: 'true',
          KEYWARD_HOST: '127.0.0.1',
          KEYWARD_PORT: '0',
          KEYWARD_METRICS_PORT: '0',
        }),
      );
      const listening = JSON.parse(serve.lines.find((line) => line.includes('Keyward is listening'))!) as { metrics: string };

      const [messageId] = await writeEvent(t, tenant.serverId, 'u_worker');
      const [webhook] = await s.receiver.waitFor(1, 30_000);
      expect(webhook!.headers['webhook-id']).toBe(messageId);
      expect(delivered(t, s.secret, webhook!).type).toBe('connect.failed');
      await until(async () => (await deliveryOf(t.ctx, s.webhookId, messageId!)).status === 'delivered', 'the delivery to be recorded');

      // The worker's outcome, relayed to the main thread's counters.
      await until(async () => {
        const text = await (await fetch(listening.metrics)).text();
        return /keyward_webhook_deliveries_total\{outcome="delivered"\} 1\b/.test(text);
      }, 'the delivery to be counted in /metrics');

      const stopped = await serve.stop();
      expect(stopped.code).toBe(0);
      expect(serve.lines.join('\n')).not.toContain(masterKey);
    } finally {
      await s.close();
    }
  });
});
