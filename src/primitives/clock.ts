/** The service reads the time only through a Clock, so tests can move it forward instead of waiting. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Times are stored and sent as RFC 3339 UTC with milliseconds: fixed width, so text order is time order. */
export function iso(date: Date): string {
  return date.toISOString();
}

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}
