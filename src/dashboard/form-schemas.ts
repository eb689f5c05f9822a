/**
 * The dashboard's form bodies and query strings are checked by schemas on the routes, as /v1's are, so
 * a handler gets typed values. A schema says the shape of a request: which fields a form sends, that
 * they are text (a list only for checkboxes), the choices of a select, and lengths that protect the
 * server. What may be created (a label's length, a URL's form…) is the services' to say.
 *
 * A failed schema is not a Problem: the routes are declared with `attachValidation`, so the session
 * and CSRF checks still run first, and the handler asks `formErrors` what the failure means. A field a
 * person can correct (a required one left empty, a text too long, a select's choice where the form
 * has words for it) gets the form's own message beside it and the page answers 422; anything else (a
 * field no form of ours has, a list where a text was expected) is a request our pages did not make,
 * and the answer is the dashboard's 400 page.
 *
 * The page files export their body schemas (`…Body`), so tests post the fields the forms have.
 */
import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { own } from '../web/form-fields.js';
import { Problem } from '../web/problem.js';
import type { FieldErrors } from './forms.js';

/** The longest text any field takes unless it says less: a bound for the server, not a rule. */
const TEXT_LIMIT = 4096;
/** CSRF tokens and one-time nonces: their checks (the preHandler's, createOnce's) judge the text. */
const TOKEN = Type.String();

/**
 * A text field a person may leave empty. A client that leaves an empty field out means the same, so
 * the field is optional and a handler reads it as `?? ''`.
 */
export function Text(maxLength = TEXT_LIMIT) {
  return Type.Optional(Type.String({ maxLength }));
}

/** A text field that must hold more than spaces: the form's own "Enter …" check. */
export function Filled(maxLength = TEXT_LIMIT) {
  return Type.String({ maxLength, pattern: '\\S' });
}

/** One of a select's options, or of a hidden field's fixed values. */
export function Choice<T extends string>(values: readonly T[]) {
  return Type.Union(values.map((value) => Type.Literal(value)));
}

/** Checkboxes of one name: a browser sends one checked box as a text, several as a list. */
export function Checked<T extends TSchema>(item: T) {
  return Type.Union([item, Type.Array(item, { maxItems: 64 })]);
}

/** A form of a signed-in page: its session's CSRF token (checked before the handler) and its fields. */
export function SignedInForm<P extends TProperties>(fields: P) {
  return Type.Object({ csrf: TOKEN, ...fields }, { additionalProperties: false });
}

/** A signed-in form that creates something: also its one-time nonce (form-once.ts). */
export function CreateForm<P extends TProperties>(fields: P) {
  // The nonce is optional here: createOnce answers a missing or malformed one itself (403, form expired).
  return Type.Object({ csrf: TOKEN, once: Type.Optional(TOKEN), ...fields }, { additionalProperties: false });
}

/** A public form (sign-in, sign-up): its anonymous CSRF token and its fields. */
export const PublicForm = SignedInForm;

/** A page's query string: the parameters it reads; any other is ignored, as a browser may add some. */
export function Query<P extends TProperties>(parameters: P) {
  return Type.Object(parameters);
}

/** A `?notice=` code: looked up in a fixed table, so any text is harmless and an unknown one shows nothing. */
export const Notice = Type.Optional(Type.String({ maxLength: 64 }));

/** Route options for a form or a page with a query: the schema checks, the handler answers a failure. */
export function formRoute<B extends TSchema>(body: B) {
  return { schema: { body }, attachValidation: true } as const;
}

export function queryRoute<Q extends TSchema>(querystring: Q) {
  return { schema: { querystring }, attachValidation: true } as const;
}

/**
 * Failures a person can correct in the form itself, when the form has words for the field: a required
 * field left empty, a select left on no option. Any other kind (a wrong type, an unknown field) means
 * the request was forged.
 */
const CORRECTABLE = new Set(['required', 'minLength', 'pattern', 'maxLength', 'const', 'anyOf', 'enum']);

/** The 400 page: a request none of the dashboard's forms or links would send. */
function forged(): Problem {
  return new Problem('validation_failed', 'This request could not be read.', { errors: [] });
}

/**
 * What the route's schema found: null when the request passed; else the message beside each field a
 * person can correct (`messages` gives the form's words for an empty required field; a text too long
 * says its limit). Throws the 400 page when the request is not one our pages make.
 */
export function formErrors(request: FastifyRequest, messages: Readonly<Record<string, string>> = {}): FieldErrors | null {
  const failure = request.validationError;
  if (!failure) return null;
  const errors: FieldErrors = {};
  for (const error of failure.validation ?? []) {
    const params = error.params as Record<string, unknown>;
    const field = error.keyword === 'required' ? String(params.missingProperty) : error.instancePath.split('/')[1];
    if (!field || !CORRECTABLE.has(error.keyword)) throw forged();
    if (error.keyword === 'maxLength') {
      errors[field] ??= `Use at most ${String(params.limit)} characters.`;
      continue;
    }
    const message = own(messages, field);
    if (!message) throw forged();
    errors[field] ??= message;
  }
  return errors;
}

/** For a query string or a form of hidden fields only: any failure is a request our pages did not make. */
export function refuseMalformed(request: FastifyRequest): void {
  if (request.validationError) throw forged();
}
