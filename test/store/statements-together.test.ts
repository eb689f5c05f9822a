/**
 * StatementsTogether (store/statements-together.ts): calls that ask in the same turn share one
 * statement, a key asked twice goes in once, and a call never takes the answer of a statement sent
 * before it asked (so a commit acknowledged before the call is always seen). The statement here is a
 * function that records what it was asked and answers when the test says; the repositories' real
 * statements are tested in test/gateway/proxy-reads-until-change.test.ts (the proxied call's read on
 * PostgreSQL) and test/gateway/usage.test.ts (the uses written together).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { StatementsTogether } from '../../src/store/statements-together.js';

/** A statement over numbers that answers each with its square once `answer()` is called. */
function squares() {
  const sent: number[][] = [];
  const pending: (() => void)[] = [];
  let version = 0;
  const runAll = (args: readonly number[]) => {
    sent.push([...args]);
    // What the statement reads is the state when it was sent.
    const seen = version;
    return new Promise<{ square: number; version: number }[]>((resolve) => {
      pending.push(() => resolve(args.map((n) => ({ square: n * n, version: seen }))));
    });
  };
  const answer = () => {
    for (const resolve of pending.splice(0)) resolve();
  };
  const commit = () => {
    version += 1;
  };
  return { sent, runAll, answer, commit };
}

/** A call's value or its error's message. */
function settled<T>(call: Promise<T>): Promise<{ value: T } | { error: string }> {
  return call.then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );
}

describe('statements asked together', () => {
  it('sends the keys asked in one turn as one statement, a key asked twice once, each call its own value', async () => {
    const statement = squares();
    const together = new StatementsTogether(statement.runAll, 16, () => true);
    const calls = [2, 3, 2, 5].map((n) => together.get(String(n), n));
    expect(statement.sent).toEqual([]);
    await nextTurn();
    expect(statement.sent).toEqual([[2, 3, 5]]);
    statement.answer();
    const values = await Promise.all(calls);
    expect(values.map((value) => value.square)).toEqual([4, 9, 4, 25]);
    expect(values[0]).toBe(values[2]);
  });

  it('sends more keys than fit in one statement as several, all at once', async () => {
    const statement = squares();
    const together = new StatementsTogether(statement.runAll, 3, () => true);
    const calls = [1, 2, 3, 4, 5, 6, 7].map((n) => together.get(String(n), n));
    await nextTurn();
    expect(statement.sent).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    statement.answer();
    expect((await Promise.all(calls)).map((value) => value.square)).toEqual([1, 4, 9, 16, 25, 36, 49]);
  });

  it('never hands a call the answer of a statement sent before it asked', async () => {
    const statement = squares();
    const together = new StatementsTogether(statement.runAll, 16, () => true);
    const first = together.get('7', 7);
    await nextTurn();
    expect(statement.sent).toEqual([[7]]);
    // A revocation commits while the first statement is under way; a call that asks after it sees it.
    statement.commit();
    const second = together.get('7', 7);
    await nextTurn();
    expect(statement.sent).toEqual([[7], [7]]);
    statement.answer();
    expect((await first).version).toBe(0);
    expect((await second).version).toBe(1);
  });

  it('sends each key of a failed statement again alone, so one key the database refuses fails only its own call', async () => {
    const sent: number[][] = [];
    const together = new StatementsTogether<number, number>(
      async (args) => {
        sent.push([...args]);
        if (args.includes(13)) throw new Error('invalid byte sequence');
        return args;
      },
      16,
      () => true,
    );
    const calls = [1, 13, 2].map((n) => settled(together.get(String(n), n)));
    expect(await Promise.all(calls)).toEqual([{ value: 1 }, { error: 'invalid byte sequence' }, { value: 2 }]);
    expect(sent).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('fails every call of a statement at once where the failure is not one key’s (the database unreachable), and only those', async () => {
    let sent = 0;
    const together = new StatementsTogether<number, number>(
      async (args) => {
        sent += 1;
        if (sent === 1) throw new Error('the database is unavailable');
        return args;
      },
      2,
      () => false,
    );
    const calls = [1, 2, 3].map((n) => settled(together.get(String(n), n)));
    expect(await Promise.all(calls)).toEqual([{ error: 'the database is unavailable' }, { error: 'the database is unavailable' }, { value: 3 }]);
    expect(sent).toBe(2);
  });

  it('fails the calls of a statement that threw before it was sent, or answered too few values', async () => {
    const throwing = new StatementsTogether<number, number>(
      () => {
        throw new Error('not sent');
      },
      4,
      () => false,
    );
    await expect(throwing.get('1', 1)).rejects.toThrow('not sent');
    const short = new StatementsTogether<number, number>(
      async (args) => args.slice(1),
      4,
      () => false,
    );
    const calls = [short.get('1', 1), short.get('2', 2)];
    await expect(calls[0]).rejects.toThrow('a statement for 2 keys gave 1 values');
    await expect(calls[1]).rejects.toThrow('a statement for 2 keys gave 1 values');
  });

  it('sends a key asked while its answer is being handed out in a statement of its own', async () => {
    const statement = squares();
    const together = new StatementsTogether(statement.runAll, 16, () => true);
    const again = together.get('4', 4).then(() => together.get('4', 4));
    await nextTurn();
    statement.answer();
    await nextTurn();
    await nextTurn();
    expect(statement.sent).toEqual([[4], [4]]);
    statement.answer();
    expect((await again).square).toBe(16);
  });

  it('refuses a bound that is not a positive whole number', () => {
    const runAll = async (args: readonly number[]) => args;
    expect(() => new StatementsTogether(runAll, 0, () => true)).toThrow('mostTogether must be a positive integer');
    expect(() => new StatementsTogether(runAll, 1.5, () => true)).toThrow('mostTogether must be a positive integer');
  });
});
