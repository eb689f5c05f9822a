/**
 * The dispatcher's held messages (services/webhooks/claimed-ahead.ts), alone: what is taken, what has
 * waited too long, and the counts the dispatcher bounds its claims by.
 */
import { describe, expect, it } from 'vitest';
import { ClaimedAhead } from '../../src/services/webhooks/claimed-ahead.js';

const MAX_WAIT_MS = 2000;
const target = Promise.resolve('target');

describe('held messages', () => {
  it('gives the longest held first, at most as many as asked, and keeps the rest', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', 'acc_1', ['m1', 'm2'], target, 0);
    ahead.hold('ep_1', 'acc_1', ['m3'], target, 10);
    expect(ahead.size).toBe(3);
    expect(ahead.count('ep_1')).toBe(3);
    expect(ahead.countOfAccount('acc_1')).toBe(3);
    const { ready, expired } = ahead.take('ep_1', 2, 20);
    expect(ready.map((h) => h.message)).toEqual(['m1', 'm2']);
    expect(ready[0]).toEqual({ message: 'm1', target, claimedAt: 0 });
    expect(expired).toEqual([]);
    expect(ahead.count('ep_1')).toBe(1);
    expect(ahead.countOfAccount('acc_1')).toBe(1);
    expect(ahead.take('ep_1', 0, 20)).toEqual({ ready: [], expired: [] });
    expect(ahead.take('ep_1', 5, 20).ready.map((h) => h.message)).toEqual(['m3']);
    expect(ahead.size).toBe(0);
    expect(ahead.countOfAccount('acc_1')).toBe(0);
    expect(ahead.endpoints()).toEqual([]);
  });

  it('hands back what waited longer than its bound, to give back rather than start', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', 'acc_1', ['old'], target, 0);
    ahead.hold('ep_1', 'acc_1', ['new'], target, 1500);
    const { ready, expired } = ahead.take('ep_1', 0, MAX_WAIT_MS + 1);
    expect(ready).toEqual([]);
    expect(expired).toEqual(['old']);
    expect(ahead.count('ep_1')).toBe(1);
    // Exactly at the bound is not too long.
    expect(ahead.take('ep_1', 1, 1500 + MAX_WAIT_MS).ready.map((h) => h.message)).toEqual(['new']);
    expect(ahead.size).toBe(0);
  });

  it('drops an endpoint whole, or everything, keeping the counts by endpoint and by account', () => {
    const ahead = new ClaimedAhead<string, string>(MAX_WAIT_MS);
    ahead.hold('ep_1', 'acc_1', ['a1', 'a2'], target, 0);
    ahead.hold('ep_2', 'acc_2', ['b1'], target, 0);
    ahead.hold('ep_3', 'acc_1', ['c1'], target, 0);
    ahead.hold('ep_4', 'acc_2', [], target, 0);
    expect(ahead.endpoints()).toEqual([
      { endpointId: 'ep_1', accountId: 'acc_1' },
      { endpointId: 'ep_2', accountId: 'acc_2' },
      { endpointId: 'ep_3', accountId: 'acc_1' },
    ]);
    expect(ahead.countOfAccount('acc_1')).toBe(3);
    expect(ahead.drop('ep_1')).toEqual(['a1', 'a2']);
    expect(ahead.drop('ep_1')).toEqual([]);
    expect(ahead.size).toBe(2);
    expect(ahead.countOfAccount('acc_1')).toBe(1);
    expect(ahead.dropAll()).toEqual(['b1', 'c1']);
    expect(ahead.size).toBe(0);
    expect(ahead.countOfAccount('acc_2')).toBe(0);
    expect(ahead.count('ep_2')).toBe(0);
  });
});
