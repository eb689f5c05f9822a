/**
 * Free text that reaches storage must be well-formed Unicode. A lone UTF-16 surrogate (`\ud800`,
 * which JSON can carry) cannot be stored faithfully: SQLite and PostgreSQL each replace it, so two
 * different texts would come back as one. Refusing it where it enters is the only safe answer.
 */
import { invalid } from './domain-error.js';

// With the `u` flag the surrogate range matches only a surrogate that is not half of a pair.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/**
 * Refuses the first input that is not well-formed. Each entry is keyed by the input's field name and
 * gives the words the message calls it by; the message names a dotted path into objects and arrays.
 */
export function requireWellFormed(fields: Record<string, [label: string, value: unknown]>): void {
  for (const [field, [label, value]] of Object.entries(fields)) {
    const bad = firstIllFormed(value, label);
    if (bad !== null) throw invalid(field, `the ${bad} is not valid text (it holds a lone UTF-16 surrogate)`);
  }
}

function firstIllFormed(value: unknown, path: string): string | null {
  if (typeof value === 'string') return isWellFormedText(value) ? null : path;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const bad = firstIllFormed(item, `${path}[${i}]`);
      if (bad !== null) return bad;
    }
  } else if (value && typeof value === 'object') {
    for (const [name, item] of Object.entries(value)) {
      const bad = firstIllFormed(item, path ? `${path}.${name}` : name);
      if (bad !== null) return bad;
    }
  }
  return null;
}
