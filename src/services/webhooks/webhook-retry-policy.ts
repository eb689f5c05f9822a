/**
 * What a webhook delivery attempt's answer means, and when the next attempt is due (CONTRACT 7): a 2xx
 * within the timeout is delivered; a timeout, a network error, 408, 429 and 5xx are retried on a
 * growing schedule for 24 hours, later where Retry-After says so; anything else fails at once. Pure
 * rules: the dispatcher (webhook-delivery.ts) makes the calls and writes what these decide.
 */
import type { OutboundError } from '../../outbound/outbound-http.js';
import { addSeconds, iso } from '../../primitives/clock.js';

/** A 2xx within this long is delivered; longer is a timeout (retried). */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** The delay after each failure in a row: about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h. */
export const RETRY_DELAYS_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200] as const;
/** Retries stop this long after the message was written (or resent); it is then `failed`. */
export const RETRY_WINDOW_SECONDS = 24 * 3600;
/** A Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_SECONDS = 3600;
/** Delays get up to this fraction more, at random, so that messages failed together do not retry together. */
const JITTER = 0.1;

/** The delay before the next attempt after `failures` failures in a row (1 = the first), with jitter. */
export function retryDelaySeconds(failures: number, random = Math.random): number {
  const base = RETRY_DELAYS_SECONDS[Math.min(failures, RETRY_DELAYS_SECONDS.length) - 1]!;
  return base * (1 + JITTER * random());
}

/** Retry-After as seconds (a number, or an HTTP date), at most an hour; null where absent or unreadable. */
export function retryAfterSeconds(header: string | null, now: Date): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  let seconds: number;
  if (/^\d+$/.test(trimmed)) seconds = Number(trimmed);
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return null;
    seconds = Math.ceil((date - now.getTime()) / 1000);
  }
  return Math.min(Math.max(seconds, 1), MAX_RETRY_AFTER_SECONDS);
}

const RETRIED_STATUSES = new Set([408, 429]);

/** What one attempt came to. */
export interface AttemptResult {
  statusCode: number | null;
  /** Why no answer came (`internal`: Keyward's side); null when the endpoint answered. */
  failure: OutboundError['kind'] | 'internal' | null;
  /** The stored attempt's text: the failure and its message. */
  error: string | null;
  retryAfter: number | null;
  delivered: boolean;
  retryable: boolean;
}

export function answered(status: number, retryAfter: number | null): AttemptResult {
  const delivered = status >= 200 && status < 300;
  return { statusCode: status, failure: null, error: null, retryAfter, delivered, retryable: !delivered && (RETRIED_STATUSES.has(status) || status >= 500) };
}

/** A call that produced no answer: timeouts and network errors are retried; a refused address or a redirect is not. */
export function unanswered(error: OutboundError): AttemptResult {
  const retryable = error.kind === 'timeout' || error.kind === 'network';
  return { statusCode: null, failure: error.kind, error: `${error.kind}: ${error.message}`, retryAfter: null, delivered: false, retryable };
}

/**
 * A failure on Keyward's side (a secret that no master key given opens, say): retried like an outage,
 * so the 24 hours still end in `failed`, instead of the message coming back forever. The text is fixed:
 * the cause goes to the log, never into the stored attempt.
 */
export function ours(): AttemptResult {
  return {
    statusCode: null,
    failure: 'internal',
    error: 'internal: Keyward could not send this message; see its log',
    retryAfter: null,
    delivered: false,
    retryable: true,
  };
}

/**
 * What an attempt changes on its message: delivered, failed for good, or pending until the next
 * attempt. The rules own this type; the store writes any value of it as the message's columns.
 */
export type MessageSettlement =
  | { status: 'delivered'; ended_at: string }
  | { status: 'failed'; failures: number; ended_at: string }
  | { status: 'pending'; failures: number; next_attempt_at: string };

/** The message's next state after an attempt that ended at `ended`. */
export function nextState(message: { failures: number; schedule_start: string }, result: AttemptResult, ended: Date): MessageSettlement {
  if (result.delivered) return { status: 'delivered', ended_at: iso(ended) };
  const failures = message.failures + 1;
  // Retry-After says "not before": it can push the next attempt later than the schedule, never
  // sooner, or an endpoint answering `Retry-After: 0` would be called every second for a day.
  const next = addSeconds(ended, Math.max(result.retryAfter ?? 0, retryDelaySeconds(failures)));
  const giveUp = !result.retryable || next.getTime() > addSeconds(new Date(message.schedule_start), RETRY_WINDOW_SECONDS).getTime();
  return giveUp ? { status: 'failed', failures, ended_at: iso(ended) } : { status: 'pending', failures, next_attempt_at: iso(next) };
}
