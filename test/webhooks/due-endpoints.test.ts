/**
 * The dispatcher's kept list of endpoints with something due (services/webhooks/due-endpoints.ts):
 * reused while it cannot have left out an endpoint that could be claimed from, and given up where it
 * could have.
 */
import { describe, expect, it } from 'vitest';
import { DueEndpointList } from '../../src/services/webhooks/due-endpoints.js';

const a1 = { id: 'wh_a1', accountId: 'acct_a' };
const a2 = { id: 'wh_a2', accountId: 'acct_a' };
const b1 = { id: 'wh_b1', accountId: 'acct_b' };
const none = { endpoints: [], accounts: [] };

describe('the kept list of endpoints with something due', () => {
  it('is read first: nothing is kept before a read', () => {
    expect(new DueEndpointList().reusable(none)).toBeNull();
  });

  it('is reused while what the read passed over as busy is still busy, whatever else became busy since', () => {
    const list = new DueEndpointList();
    list.remember([a1, b1], { endpoints: ['wh_c1'], accounts: ['acct_d'] }, true);
    expect(list.reusable({ endpoints: ['wh_c1'], accounts: ['acct_d'] })).toEqual([a1, b1]);
    // The node's own claims made a1 and account b busy: the list still holds all that could be claimed from.
    expect(list.reusable({ endpoints: ['wh_c1', 'wh_a1'], accounts: ['acct_d', 'acct_b'] })).toEqual([a1, b1]);
  });

  it('is read again once an endpoint or an account it passed over as busy has room', () => {
    const list = new DueEndpointList();
    list.remember([a1], { endpoints: ['wh_c1'], accounts: [] }, true);
    expect(list.reusable(none)).toBeNull();
    list.remember([a1], { endpoints: [], accounts: ['acct_d'] }, true);
    expect(list.reusable({ endpoints: ['wh_c1'], accounts: [] })).toBeNull();
  });

  it('drops an endpoint that ran dry, and is read again once all have', () => {
    const list = new DueEndpointList();
    list.remember([a1, a2, b1], none, true);
    list.ranDry('wh_a2');
    expect(list.reusable(none)).toEqual([a1, b1]);
    list.ranDry('wh_a1');
    list.ranDry('wh_b1');
    expect(list.reusable(none)).toBeNull();
  });

  it('serves the endpoints on it in turn: one claimed from waits behind the others', () => {
    const list = new DueEndpointList();
    list.remember([a1, a2, b1], none, true);
    list.servedLast('wh_a1');
    expect(list.reusable(none)).toEqual([a2, b1, a1]);
    list.servedLast('wh_b1');
    expect(list.reusable(none)).toEqual([a2, a1, b1]);
  });

  it('gives a round a list of its own to walk: serving an endpoint while walking it skips none', () => {
    const list = new DueEndpointList();
    list.remember([a1, a2, b1], none, true);
    const walked: string[] = [];
    for (const endpoint of list.reusable(none) ?? []) {
      walked.push(endpoint.id);
      list.servedLast(endpoint.id);
    }
    expect(walked).toEqual(['wh_a1', 'wh_a2', 'wh_b1']);
    expect(list.reusable(none)).toEqual([a1, a2, b1]);
  });

  it('cut at its limit, is read again once an endpoint or account on it is busy (more may be due beyond it)', () => {
    const list = new DueEndpointList();
    list.remember([a1, b1], none, false);
    expect(list.reusable(none)).toEqual([a1, b1]);
    expect(list.reusable({ endpoints: ['wh_a1'], accounts: [] })).toBeNull();
    expect(list.reusable({ endpoints: [], accounts: ['acct_b'] })).toBeNull();
    // Complete, it holds every endpoint with something due: those on it being busy changes nothing.
    list.remember([a1, b1], none, true);
    expect(list.reusable({ endpoints: ['wh_a1'], accounts: ['acct_b'] })).toEqual([a1, b1]);
  });

  it('is read again after forget (every poll)', () => {
    const list = new DueEndpointList();
    list.remember([a1], none, true);
    list.forget();
    expect(list.reusable(none)).toBeNull();
  });
});
