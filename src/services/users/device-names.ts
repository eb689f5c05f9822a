/**
 * A short name a person recognises for the browser a dashboard session was signed in from ("Chrome on
 * macOS", "curl", "Unknown device"), read from its User-Agent for the "Security" page's list of
 * sessions and the sign-in audit (CONTRACT 9). A User-Agent is the browser's own claim: the name is a
 * reminder of which device is which, never evidence of it.
 *
 * No library: the few families below cover what people sign in with, and anything else reads as
 * "Unknown device" rather than as a wrong guess. Every test is a plain substring or an anchored
 * pattern without nested repetition, so no header, however long, makes it slow.
 */

/** Each entry names what its patterns (all of them) match. */
type Names = [test: RegExp | RegExp[], name: string][];

/** Browsers, most specific first: Edge, Opera and Samsung Internet also say "Chrome", and Chrome also says "Safari". */
const BROWSERS: Names = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\b(OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bVivaldi\//, 'Vivaldi'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(Headless)?Chrome\/|\bCriOS\//, 'Chrome'],
  // Safari alone says "Version/…" as well as "Safari/…".
  [[/\bVersion\/\d/, /\bSafari\//], 'Safari'],
  [/\bTrident\/|\bMSIE /, 'Internet Explorer'],
];

/** Systems, most specific first: iOS says "like Mac OS X", Android and ChromeOS say "Linux". */
const SYSTEMS: Names = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

/** Programs that are not browsers, named by the product token they start with. */
const PROGRAMS: Names = [
  [/^curl\//i, 'curl'],
  [/^Wget\//i, 'Wget'],
  [/^HTTPie\//i, 'HTTPie'],
  [/^PostmanRuntime\//, 'Postman'],
  [/^python-requests\//i, 'Python requests'],
];

export const UNKNOWN_DEVICE = 'Unknown device';

/** How much of a User-Agent a session keeps: the header is the browser's to choose. */
export const KEPT_USER_AGENT_LENGTH = 300;

/** The name of the table's first entry whose patterns all match. */
function first(table: Names, userAgent: string): string | undefined {
  return table.find(([tests]) => [tests].flat().every((test) => test.test(userAgent)))?.[1];
}

/** The device's name from its User-Agent header (absent, empty or unrecognised: "Unknown device"). */
export function deviceName(userAgent: string | null | undefined): string {
  const ua = (userAgent ?? '').slice(0, KEPT_USER_AGENT_LENGTH).trim();
  if (!ua) return UNKNOWN_DEVICE;
  const program = first(PROGRAMS, ua);
  if (program) return program;
  const browser = first(BROWSERS, ua);
  const system = first(SYSTEMS, ua);
  if (browser && system) return `${browser} on ${system}`;
  if (browser) return browser;
  if (system) return `A browser on ${system}`;
  return UNKNOWN_DEVICE;
}
