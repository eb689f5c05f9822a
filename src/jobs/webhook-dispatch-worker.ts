/**
 * The worker thread of webhook-dispatch.ts: opens its own context (database connections, vault) from
 * the Config it was given, runs the webhook dispatcher on its own outbound HTTP as serve did in the
 * API's thread, reports outcomes and errors to the main thread, and stops when told.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config.js';
import { createOutbound } from '../outbound/outbound-http.js';
import { openCheckedContext } from '../runtime.js';
import type { DeliveryOutcome, ServiceObserver } from '../services/observer.js';
import { WebhookDispatcher } from '../services/webhooks/webhook-delivery.js';
import { WEBHOOK_TIMEOUT_MS } from '../services/webhooks/webhook-retry-policy.js';
import type { DispatchWorkerData, FromDispatchWorker, ToDispatchWorker } from './webhook-dispatch.js';

/**
 * PostgreSQL: the dispatcher writes one batch of outcomes at a time (one statement), claims in
 * sequence, and reads targets and gives leases back beside them; a few connections serve it. Each node's worker adds
 * these to the API's pool on the server, so the pool is kept small rather than a second API-sized one.
 */
const WORKER_POOL_MAX = 4;

/**
 * The nice value this thread runs at (Linux keeps it per thread: the API's thread keeps its own). Where
 * the cores are busy, the kernel then runs an API request before more delivery work: deliveries may
 * wait (nobody waits on them), a request should not. On an idle machine it changes nothing.
 */
const DISPATCH_NICE = 10;

const port = parentPort;
if (!port) throw new Error('webhook-dispatch-worker.ts runs only as a worker thread (see webhook-dispatch.ts)');
const { config, countDeliveries } = workerData as DispatchWorkerData;
const post = (message: FromDispatchWorker) => port.postMessage(message);

/** workerData's structured clone turns each Buffer into a plain Uint8Array: a Buffer view of the same bytes again (no copy). */
function revived(given: DispatchWorkerData['config']): Config {
  const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    ...given,
    database: { ...given.database, poolMax: WORKER_POOL_MAX },
    masterKey: asBuffer(given.masterKey),
    oldMasterKeys: given.oldMasterKeys.map(asBuffer),
    warnings: [],
  };
}

/** Outcomes counted here and reported once an event-loop turn: one message for many attempts. */
const counts: Record<DeliveryOutcome, number> = { delivered: 0, retrying: 0, failed: 0 };
let reportAsked = false;
function report(): void {
  reportAsked = false;
  if (counts.delivered + counts.retrying + counts.failed === 0) return;
  post({ kind: 'deliveries', counts: { ...counts } });
  counts.delivered = counts.retrying = counts.failed = 0;
}
const observer: ServiceObserver = {
  webhookDelivery(outcome) {
    counts[outcome] += 1;
    if (reportAsked) return;
    reportAsked = true;
    setImmediate(report);
  },
  // The dispatcher reports only deliveries.
  tokenRefresh: () => undefined,
  authFailure: () => undefined,
  proxyCall: () => undefined,
};

async function start(): Promise<() => Promise<void>> {
  try {
    setPriority(DISPATCH_NICE);
  } catch {
    // A system that refuses it delivers at the API's priority, as before the worker existed.
  }
  // serve's own openContext migrated the database and proved the key, with this Config, before
  // starting this thread. The ping (a read: no write lock taken) ends a start whose database cannot be
  // reached, as a failed start, so that the next one waits out the restart's growing pause.
  const ctx = openCheckedContext(revived(config));
  try {
    await ctx.store.maintenance.ping();
  } catch (error) {
    await ctx.store.close();
    throw error;
  }
  if (countDeliveries) ctx.observer = observer;
  // Webhooks get their own connection pool and timeout: a slow endpoint cannot hold a provider call's connections.
  const outbound = createOutbound({ allowPrivateUrls: config.allowPrivateUrls, timeoutMs: WEBHOOK_TIMEOUT_MS });
  const dispatcher = new WebhookDispatcher(ctx, outbound, {}, { onError: (error) => post({ kind: 'error', message: error.message }) });
  dispatcher.start();
  return async () => {
    await dispatcher.stop();
    await outbound.close();
    await ctx.store.close();
    await ctx.outbound.close();
    report();
  };
}

// A start that fails (the database unreachable) is thrown: the worker ends with that error, and the
// main thread logs it and starts a new worker later.
const started = start();
port.on('message', (message: ToDispatchWorker) => {
  if (message.kind !== 'stop') return;
  started
    .then(
      (stop) => stop(),
      () => undefined,
    )
    // Nothing else holds the thread's event loop open: with the port closed, the worker ends.
    .finally(() => port.close());
});
