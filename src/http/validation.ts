/**
 * Request validation. Bodies are checked strictly (no type coercion, unknown fields refused, not
 * silently removed as Fastify's default would); query strings and path parameters arrive as text, so
 * their numbers are coerced.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from '../errors.js';

const shared: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };
const bodyAjv = new Ajv({ ...shared, coerceTypes: false });
const textAjv = new Ajv({ ...shared, coerceTypes: true });
for (const ajv of [bodyAjv, textAjv]) ajv.addKeyword('kind').addKeyword('modifier');

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

function describe(error: ErrorObject): { suffix: string; message: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      // The name is the client's own text: a key pasted as a field name must not come back.
      return { suffix: `/${String(params.additionalProperty).replace(/service_(acct|srv)_\w*/g, '[redacted]')}`, message: 'is not a known field' };
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
