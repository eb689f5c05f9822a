/**
 * ReadsUntilChange on a real SQLite file in WAL mode, its change mark the real `PRAGMA data_version`
 * of a read-only connection, as store/open.ts makes it: a value is kept while nothing is committed by
 * another connection, read again after a commit, never kept when another call saw the mark move while
 * it was being read, kept only where worth it, and for a minute at most; the mark taken once a turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type KeptBounds, ReadsUntilChange } from '../../src/store/reads-until-change.js';

/** At most `values` values, and bytes counted as the value's characters. */
const bounds = (values: number, more: Partial<KeptBounds<{ value: string }>> = {}): KeptBounds<{ value: string }> => ({
  values,
  bytes: 1024 * 1024,
  bytesOf: (read) => read.value.length,
  ...more,
});

describe('reads kept until the database changes (SQLite)', () => {
  let dir: string;
  let writer: Database.Database;
  let reader: Database.Database;
  let changeMark: () => number;
  /** The value as the reader sees it now, with how many times it was read. */
  let reads = 0;
  const readValue = async () => {
    reads++;
    return { value: reader.prepare('select value from t where id = 1').pluck().get() as string };
  };
  const write = (value: string) => writer.prepare('update t set value = ? where id = 1').run(value);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-reads-'));
    writer = new Database(join(dir, 'k.db'));
    writer.pragma('journal_mode = WAL');
    writer.exec("create table t (id integer primary key, value text); insert into t values (1, 'first')");
    reader = new Database(join(dir, 'k.db'), { readonly: true });
    const mark = reader.prepare('pragma data_version').pluck();
    changeMark = () => mark.get() as number;
  });
  afterAll(() => {
    reader.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands out the same value while nothing is committed, and reads again after a commit', async () => {
    const reads0 = reads;
    const kept = new ReadsUntilChange(changeMark, bounds(10));
    const first = await kept.get('k', readValue);
    expect(await kept.get('k', readValue)).toBe(first);
    expect(reads - reads0).toBe(1);
    write('second');
    expect(await kept.get('k', readValue)).toEqual({ value: 'second' });
    expect(reads - reads0).toBe(2);
  });

  it('does not keep a value read before a commit that another call has already seen', async () => {
    write('before');
    const kept = new ReadsUntilChange(changeMark, bounds(10));
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const readStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    // A read whose statement runs at once and whose caller resumes only later, as the store's do.
    const slowRead = async () => {
      const read = await readValue();
      started();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return read;
    };
    const slow = kept.get('k', slowRead);
    await readStarted;
    write('after');
    // Another call sees the mark move (and keeps what it reads), while the slow one is still out.
    expect(await kept.get('other', readValue)).toEqual({ value: 'after' });
    release();
    expect(await slow).toEqual({ value: 'before' });
    // The slow read's older value was not kept: the key is read again.
    expect(await kept.get('k', readValue)).toEqual({ value: 'after' });
  });

  it('takes the mark once a turn for the calls that asked in it, after the last of them asked', async () => {
    write('asked first');
    let marks = 0;
    const kept = new ReadsUntilChange(() => {
      marks++;
      return changeMark();
    }, bounds(10));
    // Two calls ask in the same turn, a commit between them: the mark is taken after both asked, so
    // the second call (and the first) read what was committed before the second asked.
    const first = kept.get('a', readValue);
    write('committed between');
    const second = kept.get('b', readValue);
    expect(await first).toEqual({ value: 'committed between' });
    expect(await second).toEqual({ value: 'committed between' });
    expect(marks).toBe(1);
    // A later turn takes its own mark, which sees the next commit.
    write('next turn');
    expect(await kept.get('a', readValue)).toEqual({ value: 'next turn' });
    expect(marks).toBe(2);
  });

  it('keeps only what is worth keeping, and at most its capacity, the oldest going first', async () => {
    const kept = new ReadsUntilChange(changeMark, bounds(2, { worthKeeping: (read) => read.value !== 'nothing' }));
    write('nothing');
    const reads0 = reads;
    await kept.get('a', readValue);
    await kept.get('a', readValue);
    expect(reads - reads0).toBe(2);
    write('something');
    const a = await kept.get('a', readValue);
    await kept.get('b', readValue);
    await kept.get('c', readValue);
    const reads1 = reads;
    expect(await kept.get('c', readValue)).toBeDefined();
    expect(reads).toBe(reads1);
    expect(await kept.get('a', readValue)).not.toBe(a);
    expect(reads).toBe(reads1 + 1);
  });

  it('keeps at most its bytes, the oldest going first, and never a value larger than them all', async () => {
    const kept = new ReadsUntilChange(changeMark, bounds(100, { bytes: 20 }));
    write('eight ch');
    const reads0 = reads;
    await kept.get('a', readValue);
    await kept.get('b', readValue);
    expect(kept.bytesKept).toBe(16);
    // A third value of 8 would make 24: the oldest goes.
    await kept.get('c', readValue);
    expect(kept.bytesKept).toBe(16);
    const reads1 = reads;
    await kept.get('b', readValue);
    await kept.get('c', readValue);
    expect(reads).toBe(reads1);
    await kept.get('a', readValue);
    expect(reads).toBe(reads1 + 1);
    // 'a' kept again made room by letting 'b' go, the oldest then.
    expect(kept.bytesKept).toBe(16);
    await kept.get('b', readValue);
    expect(reads).toBe(reads1 + 2);
    expect(reads - reads0).toBe(5);

    write('twenty-one characters');
    await kept.get('big', readValue);
    await kept.get('big', readValue);
    expect(kept.bytesKept).toBe(0);
    expect(reads).toBe(reads1 + 4);
  });

  it('lets go of everything it kept a minute later, however quiet the database', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const kept = new ReadsUntilChange(changeMark, bounds(10));
      const reads0 = reads;
      const first = await kept.get('k', readValue);
      vi.advanceTimersByTime(59_000);
      expect(await kept.get('k', readValue)).toBe(first);
      vi.advanceTimersByTime(1_000);
      expect(await kept.get('k', readValue)).not.toBe(first);
      expect(reads - reads0).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads every time without a change mark (PostgreSQL)', async () => {
    const kept = new ReadsUntilChange(null, bounds(10));
    const reads0 = reads;
    const first = await kept.get('k', readValue);
    expect(await kept.get('k', readValue)).not.toBe(first);
    expect(reads - reads0).toBe(2);
  });
});
