/** When the SDK tries a request again, and how long it waits first. */

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The longest wait between attempts. A Retry-After longer than this is not waited for: the error is thrown. */
  maxDelayMs: number;
}

const BASE_DELAY_MS = 500;

/** 429 and every 5xx: the request may succeed later. Anything else will answer the same again. */
export function retryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * Retry-After in milliseconds, as seconds or an HTTP date; null where absent or unreadable. (The
 * service reads its webhook endpoints' Retry-After the same way; the SDK keeps its own copy so that
 * it ships without any of the service's code.)
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * Exponential backoff with jitter after the `attempt`-th failure (1 = the first): half the doubled
 * delay fixed, half at random, so clients that failed together do not come back together.
 */
export function backoffMs(attempt: number, maxDelayMs: number, random = Math.random): number {
  const ceiling = Math.min(maxDelayMs, BASE_DELAY_MS * 2 ** (attempt - 1));
  return ceiling / 2 + (ceiling / 2) * random();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
