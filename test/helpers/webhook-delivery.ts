/**
 * For the delivery suites: a message's delivery as the service lists it, the test clock moved to a
 * point in time, and a wait for something the dispatcher does on its own (start()ed, or in a process).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceContext } from '../../src/services/context.js';
import { type DeliveryView, listDeliveries } from '../../src/services/webhooks/webhook-endpoints.js';
import type { TestClock } from './test-app.js';

/**
 * An endpoint whose connections are always refused: port 1 of the loopback, where nothing listens,
 * and which no listener on port 0 is ever given (those come from the ephemeral range). A port found
 * free a moment before is no such thing: the next `listen(0)`, in this test file or another, may be
 * handed it, and the "refused" deliveries then reach that server.
 */
export const REFUSED_ENDPOINT_URL = 'http://127.0.0.1:1/hook';

/** The endpoint's delivery of one message, with its attempts (listDeliveries, as the CLI and dashboard show it). */
export async function deliveryOf(ctx: ServiceContext, webhookId: string, messageId: string): Promise<DeliveryView> {
  const { deliveries } = await listDeliveries(ctx, { webhookId });
  const found = deliveries.find((d) => d.messageId === messageId);
  if (!found) throw new Error(`${webhookId} lists no delivery of ${messageId}`);
  return found;
}

/**
 * Moves the clock to `offsetMs` from `at`. The offsets are a few ms, not 0: the clock counts in
 * fractions of a second and a Date drops the fraction, so "exactly at" could land 1 ms early.
 */
export function moveClockTo(clock: TestClock, at: string, offsetMs: number): void {
  clock.advance((Date.parse(at) + offsetMs - clock.now().getTime()) / 1000);
}

/** Resolves once `condition` holds; fails naming `what` if it does not within `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await sleep(10);
  }
}
