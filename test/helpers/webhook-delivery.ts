/**
 * For the delivery suites: a message's delivery as the service lists it, the test clock moved to a
 * point in time, and a wait for something the dispatcher does on its own (start()ed, or in a process).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceContext } from '../../src/services/context.js';
import { type DeliveryView, listDeliveries } from '../../src/services/webhooks/webhook-endpoints.js';
import type { TestClock } from './test-app.js';

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
