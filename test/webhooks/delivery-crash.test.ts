/**
 * Delivery survives a SIGKILL (issue 10 item 3): a real `keyward serve` completes a hosted form (the
 * event commits with the credential), sends the event to an endpoint that holds the request without
 * answering, and is killed before it can write the outcome. A new process on the same database sends
 * the same webhook-id once the dead node's lease has run out, and records the delivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_TIMEOUT_MS } from '../../src/services/webhooks/webhook-retry-policy.js';
import { cliEnv, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { formPath } from '../helpers/hosted-form.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { deliveryOf, until } from '../helpers/webhook-delivery.js';
import { subscribe } from '../helpers/webhook-events.js';
import { verifiedEvent } from '../helpers/webhook-receiver.js';

const SLOW = 120_000;
const LEASE_MS = WEBHOOK_TIMEOUT_MS + 5000;
const API_KEY = 'sk-proj-KILLEDNODEabcdefghijklmnopqrstu';

/** The hosted form over the process's real HTTP port, as a browser completes it: create, GET (cookie, csrf), POST. */
async function completeForm(base: string, headers: Record<string, string>, externalUserId: string): Promise<string> {
  const created = await fetch(`${base}/v1/credentials/static/openai/connect`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ externalUserId }),
  });
  expect(created.status).toBe(201);
  const { id, url } = (await created.json()) as { id: string; url: string };
  const page = await fetch(`${base}${formPath(url)}`);
  const cookie = page.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const posted = await fetch(`${base}${formPath(url)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ csrf, apiKey: API_KEY }),
  });
  expect(posted.status).toBe(200);
  await posted.arrayBuffer();
  return id;
}

describe.each(ENGINES)('a node killed mid-delivery on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  const serves: ServeProcess[] = [];
  beforeAll(async () => {
    ({ t, tenant, headers } = await startWithTenant(engine));
  }, SLOW);
  afterAll(async () => {
    for (const serve of serves) await serve.stop().catch(() => undefined);
    await t?.close();
  }, SLOW);

  it('has its event delivered after a restart, with the same webhook-id', { timeout: SLOW }, async () => {
    const s = await subscribe(t, tenant.serverId);
    try {
      s.receiver.script('hang');
      const env = cliEnv({
        KEYWARD_DATABASE_URL: t.database.url,
        KEYWARD_MASTER_KEY: t.masterKey.toString('base64'),
        KEYWARD_ALLOW_PRIVATE_URLS: 'true',
        KEYWARD_HOST: '127.0.0.1',
        KEYWARD_PORT: '0',
      });
      const first = await startServe(env);
      serves.push(first);
      const exited = new Promise<NodeJS.Signals | null>((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));

      const sessionId = await completeForm(first.address, headers, 'u_killed');
      // The node sent the event and waits for an answer that does not come.
      await until(() => s.receiver.hanging === 1, 'the first node to send the event');
      const messageId = String(s.receiver.received[0]!.headers['webhook-id']);
      first.child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      // Nothing of the attempt was written: the message is pending, leased to a node that is gone.
      expect(await deliveryOf(t.ctx, s.webhookId, messageId)).toMatchObject({ status: 'pending', attempts: [] });

      const second = await startServe(env);
      serves.push(second);
      const [sent, resent] = await s.receiver.waitFor(2, LEASE_MS + 30_000);
      expect(s.receiver.received).toHaveLength(2);
      expect(resent!.headers['webhook-id']).toBe(messageId);
      // Not before the lease ran out (taken just before the first send): one node at a time.
      expect(resent!.receivedAt - sent!.receivedAt).toBeGreaterThanOrEqual(LEASE_MS - 1000);
      const event = verifiedEvent(s.secret, resent!);
      expect(event).toMatchObject({ type: 'credential.connected', data: { serverId: tenant.serverId, externalUserId: 'u_killed', sessionId } });
      expect(resent!.body).toBe(sent!.body);

      await until(async () => (await deliveryOf(t.ctx, s.webhookId, messageId)).status === 'delivered', 'the delivery to be recorded');
      expect((await deliveryOf(t.ctx, s.webhookId, messageId)).attempts).toMatchObject([{ statusCode: 204, error: null }]);
      const stopped = await second.stop();
      expect(stopped.code).toBe(0);
    } finally {
      await s.close();
    }
  });
});
