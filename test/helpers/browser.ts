/**
 * Debian's Chromium driven by playwright-core (no browser download: the machine's /usr/bin/chromium).
 * In CI (CI=true) a missing Chromium fails the run; elsewhere the page suites are skipped with one
 * loud line saying how to install it.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.KEYWARD_CHROMIUM ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but no Chromium at ${CHROMIUM_PATH}: .ci/run installs Debian's chromium package`);
  process.stderr.write(`\n!!! PAGE TESTS SKIPPED: no Chromium at ${CHROMIUM_PATH}. Install it with: apt-get update && apt-get install -y chromium !!!\n\n`);
  return false;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // The machine's network is closed: without these, Chromium keeps trying to reach Google's hosts.
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
