/**
 * The dispatcher's held messages (services/webhooks/claimed-ahead.ts), alone: what is taken, what has
 * waited too long, and the counts the dispatcher bounds its claims by.
 */
import { describe, expect, it } from 'vitest';
import { ClaimedAhead } from '../../src/services/webhooks/claimed-ahead.js';

const MAX_WAIT_MS = 2000;
const target = Promise.resolve('target');

function held(...messages: string[]) {
  return messages.map((message) => ({ message, accountId: 'acc_1', target }));
}

describe('held messages', () => {
  it('gives the longest held first, at most as many as asked, and keeps the rest', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', held('m1', 'm2'), 0);
    ahead.hold('ep_1', held('m3'), 10);
    expect(ahead.size).toBe(3);
    expect(ahead.count('ep_1')).toBe(3);
    const { ready, expired } = ahead.take('ep_1', 2, 20);
    expect(ready.map((h) => h.message)).toEqual(['m1', 'm2']);
    expect(ready[0]).toMatchObject({ accountId: 'acc_1', target });
    expect(expired).toEqual([]);
    expect(ahead.count('ep_1')).toBe(1);
    expect(ahead.take('ep_1', 0, 20)).toEqual({ ready: [], expired: [] });
    expect(ahead.take('ep_1', 5, 20).ready.map((h) => h.message)).toEqual(['m3']);
    expect(ahead.size).toBe(0);
    expect(ahead.endpoints()).toEqual([]);
  });

  it('hands back what waited longer than its bound, to give back rather than start', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', held('old'), 0);
    ahead.hold('ep_1', held('new'), 1500);
    const { ready, expired } = ahead.take('ep_1', 0, MAX_WAIT_MS + 1);
    expect(ready).toEqual([]);
    expect(expired).toEqual(['old']);
    expect(ahead.count('ep_1')).toBe(1);
    // Exactly at the bound is not too long.
    expect(ahead.take('ep_1', 1, 1500 + MAX_WAIT_MS).ready.map((h) => h.message)).toEqual(['new']);
  });

  it('drops an endpoint whole, or everything, keeping the counts', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', held('a1', 'a2'), 0);
    ahead.hold('ep_2', [{ message: 'b1', accountId: 'acc_2', target }], 0);
    ahead.hold('ep_3', [], 0);
    expect(ahead.endpoints()).toEqual([
      { endpointId: 'ep_1', accountId: 'acc_1' },
      { endpointId: 'ep_2', accountId: 'acc_2' },
    ]);
    expect(ahead.drop('ep_1')).toEqual(['a1', 'a2']);
    expect(ahead.drop('ep_1')).toEqual([]);
    expect(ahead.size).toBe(1);
    expect(ahead.dropAll()).toEqual(['b1']);
    expect(ahead.size).toBe(0);
    expect(ahead.count('ep_2')).toBe(0);
  });
});
