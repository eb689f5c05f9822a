/**
 * `keyward <command>`: the operator CLI. With --json a command prints one JSON object on stdout and
 * nothing else; every error is one line on stderr and a non-zero exit (1: refused, 2: usage).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { Problem } from '../errors.js';
import { openContext } from '../runtime.js';
import { serve } from '../serve.js';
import { ServiceError } from '../services/service-error.js';
import { COMMANDS, type Command } from './commands.js';

class UsageError extends Error {}

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  keyward ${c.usage} [--json]`);
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

async function runCommand(name: string, args: string[]): Promise<void> {
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"\n${usage()}`);
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
      process.stdout.write(`${usage()}\n`);
      return first ? 0 : 2;
    }
    if (first === 'serve') {
      await serve(loadConfig());
      return -1;
    }
    if (first === 'migrate') {
      await migrate(argv.slice(1));
      return 0;
    }
    await runCommand(`${first} ${second ?? ''}`.trim(), rest);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`keyward: ${error.message}\n`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof ServiceError || error instanceof Problem) {
      process.stderr.write(`keyward: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`keyward: unexpected error: ${(error as Error).message}\n`);
    return 1;
  }
}
