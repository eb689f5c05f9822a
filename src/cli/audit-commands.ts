/** `keyward audit export`: an account's audit trail as JSON lines, oldest first (CONTRACT 4 and 9). */
import { exportAudit } from '../services/audit/audit-export.js';
import { type LinesCommand, optional, str } from './commands.js';
import { UsageError } from './parse-options.js';

/** A time as the trail stores it (ISO 8601, UTC); a date alone is its day's start. */
function time(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const at = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?Z)?$/.test(value) ? new Date(value.length === 10 ? `${value}T00:00:00Z` : value) : null;
  if (!at || Number.isNaN(at.getTime())) throw new UsageError(`--${name} must be a UTC time such as 2026-01-31T09:00:00Z, or a date such as 2026-01-31`);
  return at.toISOString();
}

export const commands: Record<string, LinesCommand> = {
  'audit export': {
    usage: 'audit export --account A [--since T] [--until T]',
    options: { account: { type: 'string', required: true }, since: { type: 'string' }, until: { type: 'string' } },
    lines: (ctx, o) =>
      exportAudit(ctx, str(o, 'account'), {
        since: time(optional(o, 'since'), 'since'),
        until: time(optional(o, 'until'), 'until'),
      }),
  },
};
