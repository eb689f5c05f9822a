/**
 * A read kept in memory (store/reads-until-change.ts), as a test sees it: the same object handed out
 * twice in a row. On PostgreSQL a node keeps nothing until its change feed holds a lease, a moment
 * after its first read, so a test waits for that.
 */
import { until } from './webhook-delivery.js';

export async function keptRead<T>(read: () => Promise<T>): Promise<T> {
  let kept: T | undefined;
  await until(
    async () => {
      kept = await read();
      return (await read()) === kept;
    },
    'a read kept in memory',
    10_000,
  );
  return kept!;
}
