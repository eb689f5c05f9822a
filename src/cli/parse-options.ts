/**
 * A command's flags, read strictly (CONTRACT 4): a flag the command does not know, a value missing or
 * given to a flag that takes none, a word where no word belongs, a flag given twice, is a usage error
 * (exit 2) whose one line names it. An ignored flag would leave the operator believing it took
 * effect (`serve --port 4999` once listened on 4000).
 */
import { parseArgs } from 'node:util';
import type { OptionSpec, Options } from './commands.js';

export class UsageError extends Error {}

/** `--help` among a command's (otherwise well-formed) flags: its usage goes to stdout and the command exits 0 without running. */
export class HelpAsked extends Error {}

/** A command's line of the usage. */
export function usageLine(command: { usage: string; noJson?: boolean }): string {
  return `keyward ${command.usage}${command.noJson ? '' : ' [--json]'}`;
}

/** Every command also takes --json, unless it says otherwise (serve prints no object). */
const JSON_FLAG: Record<string, OptionSpec> = { json: { type: 'boolean' } };

export function parseOptions(command: { usage: string; options: Record<string, OptionSpec>; noJson?: boolean }, args: string[]): Options {
  const specs = command.noJson ? command.options : { ...JSON_FLAG, ...command.options };
  const refuse = (problem: string) => new UsageError(`${problem} (usage: ${usageLine(command)})`);
  // Not strict: parseArgs' own messages run to several sentences; each case gets one clause below.
  const { tokens } = parseArgs({
    args,
    options: Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, { type: spec.type, multiple: spec.multiple === true }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Options = {};
  let helpAsked = false;
  for (const token of tokens) {
    // Not repeated: a stray word is often a value typed without its flag, a password among them.
    if (token.kind === 'positional') throw refuse(`unexpected argument at position ${token.index + 1} (a value goes after its flag)`);
    if (token.kind === 'option-terminator') throw refuse('unexpected --');
    // Every command's: its usage, once the rest of the line is known to be well formed (then no flag
    // is required: help is not the command running).
    if (token.name === 'help' && !Object.hasOwn(specs, 'help')) {
      if (token.inlineValue) throw refuse(`${token.rawName} takes no value`);
      helpAsked = true;
      continue;
    }
    const spec = Object.hasOwn(specs, token.name) ? specs[token.name] : undefined;
    if (!spec) throw refuse(`unknown option ${token.rawName}`);
    if (spec.type === 'boolean') {
      if (token.inlineValue) throw refuse(`${token.rawName} takes no value`);
      values[token.name] = true;
      continue;
    }
    // `--name --email x`: the next flag is not a value. A value that starts with "-" is written --name=-….
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('-'))) throw refuse(`${token.rawName} needs a value`);
    if (spec.multiple) values[token.name] = [...((values[token.name] as string[] | undefined) ?? []), token.value];
    else if (values[token.name] !== undefined) throw refuse(`${token.rawName} is given twice`);
    else values[token.name] = token.value;
  }
  if (helpAsked) throw new HelpAsked(`Usage: ${usageLine(command)}`);
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && (values[name] === undefined || values[name] === '')) throw refuse(`--${name} is required`);
  }
  return values;
}
