/**
 * Ids (primitives/ids.ts) draw their random part from a page of the CSPRNG's bytes, each byte used
 * once: across many pages no random part repeats (a pool that handed out the same bytes twice would
 * make guessable, colliding ids), and the time prefix still orders them.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/primitives/ids.js';

describe('ids', () => {
  it('have a time prefix and 16 hex of randomness that never repeats across many pools', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('att', 0x0123456789a));
    for (const id of ids.slice(0, 3)) expect(id).toMatch(/^att_00123456789a[0-9a-f]{16}$/);
    const randomParts = new Set(ids.map((id) => id.slice(-16)));
    expect(randomParts.size).toBe(ids.length);
    // Not drawn from a short cycle either: every hex digit appears in every position.
    for (let position = 0; position < 16; position++) expect(new Set(ids.map((id) => id.slice(-16)[position])).size).toBe(16);
  });

  it('sort by their creation time', () => {
    const earlier = newId('msg', 1_000);
    const later = newId('msg', 1_001);
    expect(earlier < later).toBe(true);
  });
});
