/**
 * verifyWebhook's edges (issue 17 item 5), against the standardwebhooks package as the reference:
 * messages are signed by it, and each spelling of the signature header is verified by both, which
 * must agree. A tolerance that is not a finite number of seconds 0 or more (NaN from an unset
 * variable turned the replay window off) is a TypeError at the call; a body that is neither a string
 * nor bytes is a KeywardError.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { KeywardError, verifyWebhook } from '../../src/sdk/index.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const reference = new Webhook(SECRET);
const BODY = JSON.stringify({ type: 'connect.failed', timestamp: '2026-11-25T10:00:00Z', data: { serverId: 'srv_1', externalUserId: 'u_42' } });

/** A message signed by the reference at `at`, with its headers; its MAC in canonical base64. */
function signed(at = new Date(), id = `msg_${randomBytes(8).toString('hex')}`) {
  const signature = reference.sign(id, at, BODY);
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
  return { headers, mac: signature.slice('v1,'.length) };
}

/** The KeywardError verifyWebhook refused with, or null where it accepted; any other error is thrown on. */
function ours(headers: Record<string, string>, body: unknown, options = {}): KeywardError | null {
  try {
    verifyWebhook(headers, body as string, SECRET, options);
    return null;
  } catch (error) {
    if (error instanceof KeywardError) return error;
    throw error;
  }
}

function referenceAccepts(headers: Record<string, string>, body: unknown): boolean {
  try {
    reference.verify(body as string, headers);
    return true;
  } catch {
    return false;
  }
}

describe('the tolerance', () => {
  const dayOld = () => signed(new Date(Date.now() - 24 * 3600 * 1000)).headers;

  it('refuses a day-old delivery with the default, as the reference does', () => {
    expect(referenceAccepts(dayOld(), BODY)).toBe(false);
    expect(ours(dayOld(), BODY)?.detail).toBe('The webhook-timestamp is more than 300 seconds from now.');
  });

  it('is a TypeError at the call when it is NaN (an unset variable), infinite, negative or not a number', () => {
    const fromUnsetVariable = Number(process.env.KEYWARD_TEST_UNSET_TOLERANCE);
    expect(fromUnsetVariable).toBeNaN();
    for (const toleranceSeconds of [fromUnsetVariable, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, '300']) {
      // The call is refused, whatever the request: a fresh one as much as the day-old one.
      for (const headers of [dayOld(), signed().headers]) {
        expect(() => verifyWebhook(headers, BODY, SECRET, { toleranceSeconds: toleranceSeconds as number }), String(toleranceSeconds)).toThrow(TypeError);
        expect(() => verifyWebhook(headers, BODY, SECRET, { toleranceSeconds: toleranceSeconds as number })).toThrow(
          /toleranceSeconds must be a finite number/,
        );
      }
    }
  });

  it('is a TypeError for an invalid Date as `now`, which turned the window off the same way', () => {
    expect(() => verifyWebhook(dayOld(), BODY, SECRET, { now: new Date(Number.NaN) })).toThrow(TypeError);
  });

  it('takes 0 and a finite tolerance as given', () => {
    const at = new Date();
    const { headers } = signed(at);
    expect(ours(headers, BODY, { toleranceSeconds: 0, now: at })).toBeNull();
    expect(ours(headers, BODY, { toleranceSeconds: 0, now: new Date(at.getTime() + 2000) })?.detail).toBe(
      'The webhook-timestamp is more than 0 seconds from now.',
    );
    expect(ours(dayOld(), BODY, { toleranceSeconds: 2 * 24 * 3600 })).toBeNull();
  });
});

describe('the signature, decoded as strictly as the reference', () => {
  /** A message whose MAC has a `+` or `/`, so its base64url spelling differs from its base64 one. */
  function withUrlUnsafeMac() {
    for (;;) {
      const message = signed();
      if (/[+/]/.test(message.mac)) return message;
    }
  }
  /** The same 32 bytes, but the last base64 character with its unused low bits set: lenient decoders take it. */
  function nonCanonical(mac: string): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(mac[42]!);
    return `${mac.slice(0, 42)}${alphabet[last | 0b11]}=`;
  }

  const { headers, mac } = withUrlUnsafeMac();
  const other = signed().mac;
  const spellings: [string, string, boolean][] = [
    ['as sent', `v1,${mac}`, true],
    ['among other entries, during a rotation', `v1,${other} v2,${mac} v1,${mac}`, true],
    ['with trailing characters', `v1,${mac}!!!`, false],
    ['in base64url', `v1,${mac.replace(/\+/g, '-').replace(/\//g, '_')}`, false],
    ['in base64url without padding', `v1,${mac.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`, false],
    ['without padding', `v1,${mac.replace(/=+$/, '')}`, false],
    ['with a non-canonical last character', `v1,${nonCanonical(mac)}`, false],
    ['with a space inside', `v1,${mac.slice(0, 20)} ${mac.slice(20)}`, false],
    ['with a newline inside', `v1,${mac.slice(0, 20)}\n${mac.slice(20)}`, false],
    ['under another version', `v2,${mac}`, false],
    ['under an upper-case version', `V1,${mac}`, false],
    ['with no version', mac, false],
    ['as the raw bytes in hex', `v1,${Buffer.from(mac, 'base64').toString('hex')}`, false],
  ];

  it.each(spellings)('%s: accepted as the reference does', (_, signature, accepted) => {
    const spelled = { ...headers, 'webhook-signature': signature };
    expect(referenceAccepts(spelled, BODY)).toBe(accepted);
    expect(ours(spelled, BODY) === null).toBe(accepted);
  });

  it('refuses what follows a second comma, where the reference reads only up to it', () => {
    const spelled = { ...headers, 'webhook-signature': `v1,${mac},junk` };
    expect(referenceAccepts(spelled, BODY)).toBe(true);
    expect(ours(spelled, BODY)?.detail).toBe('No signature matches this secret and body.');
  });
});

describe('the body', () => {
  it('is refused with a KeywardError unless it is a string or bytes, as the reference refuses it', () => {
    const { headers } = signed();
    for (const body of [JSON.parse(BODY), null, undefined, 42, new TextEncoder().encode(BODY).buffer]) {
      expect(referenceAccepts(headers, body)).toBe(false);
      const refusal = ours(headers, body);
      expect(refusal, String(body)).toMatchObject({ code: 'webhook_verification_failed', status: null });
      expect(refusal!.detail).toContain('raw request body');
    }
  });

  it('is taken as a string, a Buffer or a Uint8Array view into a larger buffer', () => {
    const { headers } = signed();
    const padded = Buffer.concat([Buffer.from('xx'), Buffer.from(BODY), Buffer.from('yy')]);
    const view = new Uint8Array(padded.buffer, padded.byteOffset + 2, Buffer.byteLength(BODY));
    for (const body of [BODY, Buffer.from(BODY), view]) expect(ours(headers, body)).toBeNull();
    expect(referenceAccepts(headers, Buffer.from(BODY))).toBe(true);
  });
});
