import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR } from '../src/services/context.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import { addWebhookEndpoint } from '../src/services/webhooks/webhook-endpoints.js';

const url = process.argv[2] ?? `sqlite:/tmp/kw/stmt-${Date.now()}.db`;
const { ctx } = await openContext(
  loadConfig({ KEYWARD_DATABASE_URL: url, KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'), KEYWARD_ALLOW_PRIVATE_URLS: 'true' }),
);
const { accountId } = await createAccount(ctx, { name: 'B', email: 'b@example.test' });
const { serverId } = await createServer(ctx, { accountId, name: 'b', mode: 'business', actor: CLI_ACTOR });
const eps: string[] = [];
for (let e = 0; e < Number(process.env.EPS ?? 1); e++)
  eps.push((await addWebhookEndpoint(ctx, { serverId, url: `http://127.0.0.1:1/${e}`, actor: CLI_ACTOR })).webhookId);
const now = new Date().toISOString();
for (let b = 0; b < 5; b++)
  await ctx.store.webhooks.addMessages(
    Array.from({ length: 1000 }, (_, i) => ({
      id: `msg_${b}_${i}`,
      endpoint_id: eps[i % eps.length]!,
      server_id: serverId,
      event_type: 'x',
      payload: '{"a":1}',
      status: 'pending' as const,
      created_at: now,
      schedule_start: now,
      failures: 0,
      next_attempt_at: now,
    })),
  );
const w = ctx.store.webhooks;
async function time(name: string, n: number, fn: () => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await fn();
  const t = performance.now();
  for (let i = 0; i < n; i++) await fn();
  console.log(name.padEnd(20), (((performance.now() - t) * 1000) / n).toFixed(1), 'µs');
}
const later = new Date(Date.now() + 1000).toISOString();
await time('dueEndpoints', 2000, () => w.dueEndpoints(later, { endpoints: [], accounts: [] }, 4));
await time('deliveryTarget', 2000, () => w.deliveryTarget(eps[0]!, later));

let k = 0;
await time('claim 2', 1000, () => w.claim(eps[0]!, 2, { holder: `h${k++}`, until: later, now: later }));
await ctx.store.close();
