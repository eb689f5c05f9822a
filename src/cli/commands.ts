/**
 * What every operator command is made of (CONTRACT 4): its usage and options, `run` (which reads
 * the options, calls the same services as the HTTP API and returns the object `--json` prints) and
 * `text` (the same for a person); and the option readers they share. The commands themselves live in
 * one module per group (`key-commands.ts`, …), which main.ts loads only when one of them is run.
 */
import type { ServiceContext } from '../services/context.js';
import { UsageError } from './parse-options.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  required?: boolean;
}

export type Options = Record<string, string | string[] | boolean | undefined>;

export interface Command {
  usage: string;
  options: Record<string, OptionSpec>;
  /** What the command reads from standard input, read before the database is opened (a password). */
  input?(): Promise<string>;
  run(ctx: ServiceContext, options: Options, input?: string): Promise<Record<string, unknown>>;
  text(result: Record<string, unknown>): string;
  /** A line for the person at the terminal, on stderr, never with --json (whose stdout is one object). */
  notice?(options: Options, result: Record<string, unknown>): string | undefined;
}

/**
 * A command whose output is a stream of JSON objects, one a line, printed as they come (with or without
 * --json: the lines are the format), so that its memory does not grow with what it prints.
 */
export interface LinesCommand {
  usage: string;
  options: Record<string, OptionSpec>;
  /** Chunks of lines (store/connections.ts ChunkReader), each made as it is read. */
  lines(ctx: ServiceContext, options: Options): AsyncIterable<Iterable<object>>;
}

export const str = (options: Options, name: string): string => options[name] as string;
export const optional = (options: Options, name: string): string | undefined => options[name] as string | undefined;
export const list = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

export const SHOWN_ONCE = 'shown once: store it now, only its hint is kept';

/**
 * A whole-number option; the service that takes it says what range it accepts (a refusal, exit 1).
 * A value that is no whole number at all is malformed: a usage error (exit 2, CONTRACT 4).
 */
export function count(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

/** An option's value where it is one of `allowed` (undefined where not given); anything else is a usage error naming the option. */
export function oneOf<T extends string>(options: Options, name: string, allowed: readonly T[]): T | undefined {
  const value = options[name] as string | undefined;
  if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
  throw new UsageError(`--${name} must be ${allowed.join(' or ')}, got ${JSON.stringify(value)}`);
}

/**
 * An option's value (each, where it is given several times) checked for its shape alone: `why` says
 * what is wrong with one, or null. A value of the wrong shape is malformed, a usage error naming the
 * option (exit 2); one of the right shape that the service then refuses is a refusal (exit 1).
 */
export function wellFormed(options: Options, name: string, why: (value: string) => string | null): void {
  for (const value of [options[name] ?? []].flat()) {
    if (typeof value !== 'string') continue;
    const problem = why(value);
    if (problem !== null) throw new UsageError(`--${name} ${problem}, got ${JSON.stringify(value)}`);
  }
}

/** A `true` or `false` option's value; anything else is a usage error naming the option. */
export function trueOrFalse(options: Options, name: string): boolean {
  const value = options[name];
  if (value === 'true' || value === 'false') return value === 'true';
  throw new UsageError(`--${name} must be true or false`);
}
