/**
 * `keyward <command>`: the operator CLI. With --json a command prints one JSON object on stdout and
 * nothing else; every error is one line on stderr and a non-zero exit (1: refused, 2: usage).
 *
 * A command loads only its own group's module (and serve the server), through import(): `key list`
 * never loads Fastify, the pages, the OAuth client or the password hashing, so it starts in a
 * fraction of the time (bench/cli-startup.ts).
 */
import { once } from 'node:events';
import { ConfigError, loadConfig } from '../config.js';
import { openContext } from '../runtime.js';
import { DomainError } from '../services/domain-error.js';
import { DatabaseUnavailable, isRetiredMasterKeyRefusal } from '../store/store-errors.js';
import type { Command, LinesCommand, OptionSpec } from './commands.js';
import { HelpAsked, parseOptions, UsageError, usageLine } from './parse-options.js';

type Group = () => Promise<{ commands: Record<string, Command | LinesCommand> }>;

/** Each group of commands by its first word, in the order the usage lists them. */
const GROUPS: Record<string, Group> = {
  account: () => import('./account-commands.js'),
  user: () => import('./user-commands.js'),
  server: () => import('./server-commands.js'),
  key: () => import('./key-commands.js'),
  provider: () => import('./provider-commands.js'),
  webhook: () => import('./webhook-commands.js'),
  'master-key': () => import('./master-key-commands.js'),
  audit: () => import('./audit-commands.js'),
};

/** The two commands that are not a group's: the service itself, and the migrations alone. */
const SERVE = {
  usage: 'serve [--port N] [--host H]',
  options: { port: { type: 'string' }, host: { type: 'string' } } satisfies Record<string, OptionSpec>,
  noJson: true,
};
const MIGRATE = { usage: 'migrate', options: {} };

export interface CommandShape {
  usage: string;
  options: Record<string, OptionSpec>;
  noJson?: boolean;
}

/** Every command by its name (`serve`, `key list`, …): the usage's lines, and what tests iterate. */
export async function commandTable(): Promise<Record<string, CommandShape>> {
  const groups = await Promise.all(Object.values(GROUPS).map((load) => load()));
  return Object.assign({ serve: SERVE, migrate: MIGRATE }, ...groups.map((g) => g.commands));
}

/** The whole usage: the one place that loads every group. */
async function usage(): Promise<string> {
  return usageOf(await commandTable());
}

/** The usage of these commands: every command's, or a group's (`keyward server --help`). */
function usageOf(commands: Record<string, CommandShape>): string {
  return ['Usage:', ...Object.values(commands).map((c) => `  ${usageLine(c)}`)].join('\n');
}

async function runCommand(group: string, name: string, args: string[]): Promise<void> {
  const load = Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
  const commands = load ? (await load()).commands : undefined;
  if (commands && (name === `${group} --help` || name === `${group} help`)) throw new HelpAsked(usageOf(commands));
  const command = commands && Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command "${name}"\n${await usage()}`);
  const options = parseOptions(command, args);
  const input = 'input' in command && command.input ? await command.input() : undefined;
  const { ctx } = await openContext(loadConfig());
  try {
    if ('lines' in command) {
      await writeLines(command.lines(ctx, options));
      return;
    }
    const result = await command.run(ctx, options, input);
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${command.text(result)}\n`);
    const notice = options.json ? undefined : command.notice?.(options, result);
    if (notice) process.stderr.write(`keyward: ${notice}\n`);
  } finally {
    await ctx.store.close();
  }
}

/** Lines are written in strings of about this many characters (one write call, not one a line). */
const LINES_WRITE_CHARS = 65_536;

/**
 * Prints each object as a JSON line, as the reader takes them: a slow reader holds the command back
 * instead of filling memory. Lines go out joined in strings of ~64 KiB: one write a line would leave
 * hundreds of small pending writes alive whenever the reader lags, and V8 would grow its young
 * generation with the export's length (bench/RESULTS.md, "The audit trail at a million events").
 */
async function writeLines(chunks: AsyncIterable<Iterable<object>>): Promise<void> {
  let text = '';
  for await (const chunk of chunks) {
    for (const line of chunk) {
      text += `${JSON.stringify(line)}\n`;
      if (text.length < LINES_WRITE_CHARS) continue;
      const more = process.stdout.write(text);
      text = '';
      if (!more) await once(process.stdout, 'drain');
    }
  }
  if (text) process.stdout.write(text);
}

async function migrate(args: string[]): Promise<void> {
  const options = parseOptions(MIGRATE, args);
  const { ctx, migrations } = await openContext(loadConfig());
  await ctx.store.close();
  process.stdout.write(
    options.json ? `${JSON.stringify({ applied: migrations })}\n` : migrations.length ? `Applied: ${migrations.join(', ')}\n` : 'The database is up to date.\n',
  );
}

const PORT = /^\d{1,5}$/;

/**
 * `serve`'s flags win over KEYWARD_PORT and KEYWARD_HOST: they are handed to loadConfig as those
 * variables, so KEYWARD_PUBLIC_URL's default follows the port and every check applies alike.
 */
function serveEnvironment(args: string[]): NodeJS.ProcessEnv {
  const options = parseOptions(SERVE, args);
  const port = options.port as string | undefined;
  const host = options.host as string | undefined;
  if (port !== undefined && (!PORT.test(port) || Number(port) > 65535)) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(port)}`);
  }
  if (host === '') throw new UsageError('--host needs a value');
  return { ...process.env, ...(port !== undefined ? { KEYWARD_PORT: String(Number(port)) } : {}), ...(host !== undefined ? { KEYWARD_HOST: host } : {}) };
}

export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  try {
    if (first === '--help' || first === 'help') {
      process.stdout.write(`${await usage()}\n`);
      return 0;
    }
    // No command is a usage error: the usage goes where errors go (CONTRACT 4).
    if (!first) throw new UsageError(`a command is needed\n${await usage()}`);
    if (first === 'serve') {
      const env = serveEnvironment(argv.slice(1));
      const { serve } = await import('../serve.js');
      await serve(loadConfig(env));
      return -1;
    }
    if (first === 'migrate') {
      await migrate(argv.slice(1));
      return 0;
    }
    await runCommand(first, `${first} ${second ?? ''}`.trim(), rest);
    return 0;
  } catch (error) {
    if (error instanceof HelpAsked) {
      process.stdout.write(`${error.message}\n`);
      return 0;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`keyward: ${error.message}\n`);
      return 2;
    }
    if (error instanceof DomainError) {
      process.stderr.write(`keyward: ${error.detail}\n`);
      return 1;
    }
    if (error instanceof DatabaseUnavailable) {
      // Only the reason's code: the driver's own message can name the host and the user.
      process.stderr.write(
        `keyward: ${error.message}. Try again in a moment; if it persists, check that the database KEYWARD_DATABASE_URL names is running and reachable.\n`,
      );
      return 1;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`keyward: ${error.message}\n`);
      return 1;
    }
    if (isRetiredMasterKeyRefusal(error)) {
      // A rotation retired this process's key while it ran: nothing was written.
      process.stderr.write(`keyward: KEYWARD_MASTER_KEY: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`keyward: unexpected error: ${(error as Error).message}\n`);
    return 1;
  }
}
