/**
 * `keyward serve`'s webhook deliveries, in a worker thread (webhook-dispatch-worker.ts) with its own
 * database connections, vault and outbound HTTP: while a backlog drains, the sends, signing and outcome
 * writes run on the worker's event loop, and the API's requests do not queue behind them.
 *
 * This side starts the worker, relays what it reports (each attempt's outcome to the metrics, its
 * errors to the log), starts it again if it dies, and stops it with the service.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { ServiceContext } from '../services/context.js';
import type { DeliveryOutcome } from '../services/observer.js';

/** What the worker is started with: the Config it opens its own context from (the master key crosses only here). */
export interface DispatchWorkerData {
  config: Omit<Config, 'warnings'>;
  /** Whether to report outcomes at all: only when the metrics have a listener to count them. */
  countDeliveries: boolean;
}

export type ToDispatchWorker = { kind: 'stop' };

export type FromDispatchWorker =
  /** Outcomes written since the last report (reported once an event-loop turn, not once an attempt). */
  | { kind: 'deliveries'; counts: Record<DeliveryOutcome, number> }
  /** The dispatcher's onError: a failure on our side; only its message crosses, as only it is logged. */
  | { kind: 'error'; message: string };

/**
 * The worker runs the compiled .js under dist/; under tsx (benchmarks, scripts) this module is the .ts
 * source, and so is its neighbour (the worker inherits tsx's loader through execArgv). Loaded from
 * src/ by anything else (vitest), the .ts worker cannot start: tests use the built module.
 */
const WORKER_FILE = new URL(import.meta.url.endsWith('.ts') ? './webhook-dispatch-worker.ts' : './webhook-dispatch-worker.js', import.meta.url);

/**
 * A worker that died is started again after a pause, doubled at each death that follows a short life,
 * up to the maximum: one that dies at start (the database unreachable) would otherwise restart in a
 * tight loop, spending the API's CPU and filling the log, while waiting loses nothing (the messages
 * stay due in the outbox, and those it had leased are due again when their leases run out).
 */
const RESTART_DELAY_MS = 1000;
const RESTART_DELAY_MAX_MS = 30_000;

/**
 * How long stop() waits for the worker to give its leases back and close its connections. One that
 * has not ended by then (a database that does not answer) is terminated rather than hold the
 * service's exit; its leases run out and the messages are sent again (at least once, as after a crash).
 */
const STOP_TIMEOUT_MS = 15_000;

export interface WebhookDispatch {
  /** Stops the dispatcher in the worker (its attempts aborted and given back) and waits for the worker to end. */
  stop(): Promise<void>;
}

export function startWebhookDispatch(ctx: ServiceContext, config: Config, logger: Logger): WebhookDispatch {
  const { warnings: _warnings, ...workerConfig } = config;
  const data: DispatchWorkerData = { config: workerConfig, countDeliveries: config.metrics !== null };
  let worker: Worker | null = null;
  let exited: Promise<void> = Promise.resolve();
  let restartTimer: NodeJS.Timeout | null = null;
  let delayMs = RESTART_DELAY_MS;
  let stopping = false;

  const relay = (message: FromDispatchWorker) => {
    if (message.kind === 'error') {
      logger.warn({ err: { message: message.message } }, 'webhook delivery failed on our side; the message stays due');
      return;
    }
    const observer = ctx.observer;
    if (!observer) return;
    for (const outcome of ['delivered', 'retrying', 'failed'] as const) {
      for (let i = 0; i < message.counts[outcome]; i += 1) observer.webhookDelivery(outcome);
    }
  };

  const start = () => {
    restartTimer = null;
    const startedAt = Date.now();
    // env: the parent's, shared as it is (no copy made for the worker): the key is not added to it.
    const current = new Worker(WORKER_FILE, { workerData: data, name: 'keyward-webhooks' });
    worker = current;
    let lastError: Error | null = null;
    current.on('message', relay);
    current.on('error', (error) => {
      lastError = error;
    });
    exited = new Promise((resolve) => {
      current.once('exit', (exitCode) => {
        worker = null;
        resolve();
        if (stopping) return;
        delayMs = Date.now() - startedAt > RESTART_DELAY_MAX_MS ? RESTART_DELAY_MS : delayMs;
        logger.error(
          { err: lastError ? { message: lastError.message } : undefined, exitCode, restartInMs: delayMs },
          'the webhook dispatcher thread ended unexpectedly; it starts again shortly (the messages stay due)',
        );
        restartTimer = setTimeout(start, delayMs);
        delayMs = Math.min(delayMs * 2, RESTART_DELAY_MAX_MS);
      });
    });
  };
  start();

  return {
    async stop() {
      if (stopping) return exited;
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = worker;
      if (!running) return;
      running.postMessage({ kind: 'stop' } satisfies ToDispatchWorker);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
      });
      if ((await Promise.race([exited, late])) === 'late') {
        logger.warn('the webhook dispatcher did not stop in time; its thread was ended (its leases run out, the messages stay due)');
        await running.terminate();
      }
      clearTimeout(timer);
    },
  };
}
