/**
 * `keyward <command>`: the operator CLI. With --json a command prints one JSON object on stdout and
 * nothing else; every error is one line on stderr and a non-zero exit (1: refused, 2: usage).
 *
 * A command loads only its own group's module (and serve the server), through import(): `key list`
 * never loads Fastify, the pages, the OAuth client or the password hashing, so it starts in a
 * fraction of the time (bench/cli-startup.ts).
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { openContext } from '../runtime.js';
import { DomainError } from '../services/domain-error.js';
import { DatabaseUnavailable } from '../store/errors.js';
import type { Command } from './commands.js';

class UsageError extends Error {}

type Group = () => Promise<{ commands: Record<string, Command> }>;

/** Each group of commands by its first word, in the order the usage lists them. */
const GROUPS: Record<string, Group> = {
  account: () => import('./account-commands.js'),
  server: () => import('./server-commands.js'),
  key: () => import('./key-commands.js'),
  provider: () => import('./provider-commands.js'),
  webhook: () => import('./webhook-commands.js'),
  'master-key': () => import('./master-key-commands.js'),
};

/** The whole usage: the one place that loads every group. */
async function usage(): Promise<string> {
  const groups = await Promise.all(Object.values(GROUPS).map((load) => load()));
  const lines = groups.flatMap((g) => Object.values(g.commands)).map((c) => `  keyward ${c.usage} [--json]`);
  return ['Usage:', '  keyward serve', '  keyward migrate [--json]', ...lines].join('\n');
}

function parseCommand(command: Command, args: string[]) {
  const options: NonNullable<ParseArgsConfig['options']> = { json: { type: 'boolean' } };
  for (const [name, spec] of Object.entries(command.options)) options[name] = spec.multiple ? { type: spec.type, multiple: true } : { type: spec.type };
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nusage: keyward ${command.usage}`);
  }
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && (values[name] === undefined || values[name] === '')) {
      throw new UsageError(`--${name} is required\nusage: keyward ${command.usage}`);
    }
  }
  return values;
}

async function runCommand(group: string, name: string, args: string[]): Promise<void> {
  const load = Object.hasOwn(GROUPS, group) ? GROUPS[group] : undefined;
  const command = load ? (await load()).commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command "${name}"\n${await usage()}`);
  const options = parseCommand(command, args);
  const { ctx } = await openContext(loadConfig());
  try {
    const result = await command.run(ctx, options);
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${command.text(result)}\n`);
  } finally {
    await ctx.store.close();
  }
}

async function migrate(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } }, strict: true });
  const { ctx, migrations } = await openContext(loadConfig());
  await ctx.store.close();
  process.stdout.write(
    values.json ? `${JSON.stringify({ applied: migrations })}\n` : migrations.length ? `Applied: ${migrations.join(', ')}\n` : 'The database is up to date.\n',
  );
}

export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  try {
    if (!first || first === '--help' || first === 'help') {
      process.stdout.write(`${await usage()}\n`);
      return first ? 0 : 2;
    }
    if (first === 'serve') {
      const { serve } = await import('../serve.js');
      await serve(loadConfig());
      return -1;
    }
    if (first === 'migrate') {
      await migrate(argv.slice(1));
      return 0;
    }
    await runCommand(first, `${first} ${second ?? ''}`.trim(), rest);
    return 0;
  } catch (error) {
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
    process.stderr.write(`keyward: unexpected error: ${(error as Error).message}\n`);
    return 1;
  }
}
