/**
 * Request validation. Bodies are checked strictly (no type coercion, unknown fields refused, not
 * silently removed as Fastify's default would); query strings and path parameters arrive as text, so
 * their numbers are coerced.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { redactKeys } from '../services/keys/key-format.js';
import { type FieldError, Problem } from './problem.js';

const shared: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };
const bodyAjv = new Ajv({ ...shared, coerceTypes: false });
const textAjv = new Ajv({ ...shared, coerceTypes: true });
for (const ajv of [bodyAjv, textAjv]) ajv.addKeyword('kind').addKeyword('modifier');

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

function describe(error: ErrorObject): { suffix: string; message: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      // The name is the client's own text: a key pasted as a field name must not come back.
      return { suffix: `/${redactKeys(String(params.additionalProperty))}`, message: 'is not a known field' };
    case 'required':
      return { suffix: `/${String(params.missingProperty)}`, message: 'is required' };
    case 'pattern':
      return { suffix: '', message: 'has characters or a form that is not allowed' };
    default:
      return { suffix: '', message: error.message ?? 'is not valid' };
  }
}

/** Turns Ajv's errors into the contract's `errors` array: `{ path: "/body/externalUserId", message }`. */
export function fieldErrors(errors: ErrorObject[], context: string): FieldError[] {
  const part = PART_NAMES[context] ?? context;
  const seen = new Set<string>();
  const result: FieldError[] = [];
  for (const error of errors) {
    if (error.keyword === 'anyOf' || error.keyword === 'if') continue;
    const { suffix, message } = describe(error);
    const path = `/${part}${error.instancePath}${suffix}`;
    const key = `${path} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    result.push({ path, message });
  }
  return result;
}

/**
 * Fastify's query parser keeps an undecodable value as its raw text, so `prefix=alice%ED%A0%80` (a
 * lone surrogate, percent-encoded) would silently mean the literal characters. The API refuses it,
 * as it refuses the same thing in a path or a body.
 */
export function checkQueryEncoding(url: string): void {
  const start = url.indexOf('?');
  if (start < 0) return;
  for (const pair of url
    .slice(start + 1)
    .split('#', 1)[0]!
    .split('&')) {
    const [name = '', value = ''] = pair.split(/=(.*)/s);
    const bad = [name, value].some((part) => {
      try {
        decodeURIComponent(part.replaceAll('+', ' '));
        return false;
      } catch {
        return true;
      }
    });
    if (!bad) continue;
    let field = '(name)';
    try {
      field = decodeURIComponent(name.replaceAll('+', ' '));
    } catch {
      // The name itself is undecodable: the error names no field.
    }
    // The name is the client's own text: a key pasted as a parameter name must not come back.
    field = redactKeys(field)
      .replace(/[^\x20-\x7E]/g, '?')
      .slice(0, 64);
    throw new Problem('validation_failed', 'A query parameter is not valid percent-encoded UTF-8.', {
      errors: [{ path: `/query/${field}`, message: 'is not valid percent-encoded UTF-8' }],
    });
  }
}
