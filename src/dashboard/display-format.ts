/**
 * How the dashboard writes values for a person: times, durations, kinds, hints, sentences. Every view
 * uses these, so a time reads the same on the audit page as on a server's or an endpoint's.
 */
import { html, type SafeHtml } from '../web/html.js';

/** A stored time (UTC ISO text): readable to the minute, with the exact instant for machines. */
export function timeOf(at: string): SafeHtml {
  return html`<time datetime="${at}">${at.slice(0, 10)} ${at.slice(11, 16)} UTC</time>`;
}

/** A time that may be missing: a dash when it is. */
export function shownDate(value: string | null | undefined): SafeHtml | string {
  return value ? timeOf(value) : '—';
}

/** "10:45 UTC": the time of day of a stored time, for a moment later today (a lock's end). */
export function clockTime(at: string): string {
  return `${at.slice(11, 16)} UTC`;
}

/** A period in words, in the largest whole unit: 86400 → "1 day", 7200 → "2 hours". */
export function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size} ${unit}${seconds / size === 1 ? '' : 's'}`;
  }
  return `${seconds} seconds`;
}

export function kindLabel(kind: 'oauth2' | 'static'): string {
  return kind === 'oauth2' ? 'OAuth' : 'Static';
}

/** A key's hint after its name, muted: " (service_acct_…a1b2)"; nothing when there is none. */
export function hintAside(hint: string): SafeHtml | string {
  return hint ? html` <span class="muted mono">(${hint})</span>` : '';
}

/** A service message ("the mode must be …") as a sentence beside a field or above a form. */
export function sentence(message: string): string {
  const text = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/**
 * A provider named by its slug: its name in the catalog, else the slug itself (a slug the catalog does
 * not know, such as a server's own provider's).
 */
export function catalogName(catalog: (slug: string) => { name: string } | undefined, slug: string): string {
  return catalog(slug)?.name ?? slug;
}
