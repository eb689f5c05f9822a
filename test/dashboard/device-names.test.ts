/**
 * The device names of the "Security" page's sessions, read from real User-Agent headers: each browser
 * family on each system it ships on, the browsers that also say "Chrome" or "Safari" named as
 * themselves, the common command-line programs, and anything else "Unknown device". A pure function:
 * no database.
 */
import { describe, expect, it } from 'vitest';
import { deviceName } from '../../src/services/users/device-names.js';

const NAMED: [userAgent: string, name: string][] = [
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'Chrome on macOS'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', 'Firefox on Windows'],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15', 'Safari on macOS'],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
    'Safari on iOS',
  ],
  ['Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36', 'Chrome on Android'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.0.0', 'Edge on Windows'],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0', 'Firefox on Linux'],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
    'Chrome on iOS',
  ],
  ['Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/125.0 Mobile/15E148 Safari/605.1.15', 'Firefox on iOS'],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 OPR/109.0.0.0', 'Opera on Windows'],
  [
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
    'Samsung Internet on Android',
  ],
  ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'Chrome on ChromeOS'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.6367.29 Safari/537.36', 'Chrome on Linux'],
  ['Mozilla/5.0 (Windows NT 10.0; WOW64; Trident/7.0; rv:11.0) like Gecko', 'Internet Explorer on Windows'],
  ['curl/8.5.0', 'curl'],
  ['Wget/1.21.4', 'Wget'],
  ['python-requests/2.31.0', 'Python requests'],
  ['PostmanRuntime/7.37.3', 'Postman'],
  ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) SomeNewBrowser/1.0', 'A browser on Linux'],
];

describe('device names from User-Agent headers', () => {
  it.each(NAMED)('names %s "%s"', (userAgent, name) => {
    expect(deviceName(userAgent)).toBe(name);
  });

  it('calls a missing, empty or unrecognised header "Unknown device"', () => {
    for (const userAgent of [undefined, null, '', '   ', 'lightMyRequest', 'Go-http-client/1.1 <script>']) {
      expect(deviceName(userAgent)).toBe('Unknown device');
    }
  });

  it('reads only the start a session keeps of a long header, and answers at once however it is made', () => {
    expect(deviceName(`curl/8.5.0 ${'x'.repeat(100_000)}`)).toBe('curl');
    // A browser's name past the kept start is not read.
    expect(deviceName(`${'x '.repeat(200)}Firefox/125.0 (Windows)`)).toBe('Unknown device');
    const started = performance.now();
    for (const piece of ['Version/1 ', 'Safari/ ', '1.', 'Mac OS X ']) deviceName(piece.repeat(10_000));
    expect(performance.now() - started).toBeLessThan(200);
  });
});
