/**
 * Reads a Prometheus scrape the way a scraper does: GET over a real socket, then the text exposition
 * format parsed into samples, so a test asserts series and label values rather than substrings.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** The value of the one sample of `name` with exactly these labels; 0 when there is none (a counter not yet seen). */
  value(name: string, labels?: Record<string, string>): number;
  /** Every sample of `name`. */
  all(name: string): Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, raw] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = raw!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
  return {
    text,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && same(s.labels, labels));
      if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
      return found[0]?.value ?? 0;
    },
    all: (name) => samples.filter((s) => s.name === name),
  };
}

export async function scrape(metricsAddress: string): Promise<Scrape> {
  const response = await fetch(`${metricsAddress}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parseExposition(await response.text());
}

/**
 * Scrapes until `name`'s samples add up to `total`: a request is counted when its response has been
 * sent (onResponse), which a client may see a moment before the count. Fails after 5 s.
 */
export async function scrapeWhen(metricsAddress: string, name: string, total: number): Promise<Scrape> {
  for (let waited = 0; ; waited += 20) {
    const now = await scrape(metricsAddress);
    const sum = now.all(name).reduce((s, x) => s + x.value, 0);
    if (sum === total || waited > 5000) return now;
    await sleep(20);
  }
}

/** The sum of every sample of `name`. */
export function total(s: Scrape, name: string): number {
  return s.all(name).reduce((sum, x) => sum + x.value, 0);
}
