/**
 * The rules of a member's profile (CONTRACT 10), in one place for every caller: PATCH
 * /v1/end-users/{id}, a connect session's `endUser`, and the list's `tag=key:value` filter. Each
 * refusal is a DomainError naming the field, in a sentence that says what is allowed. What a client
 * typed is repeated only where it is a tag key that passed its pattern (so never a pasted secret).
 *
 * Chosen where the contract is silent: a display name is 1–200 characters (null clears it); an email
 * is `local@domain.tld` with no spaces, at most 254 characters (RFC 5321's limit; null clears it); a
 * tag value is 0–200 characters. Text is counted in characters (code points), and a control
 * character or a lone surrogate is refused in all three, as in an externalUserId.
 */
import { invalid } from '../domain-error.js';
import { redactKeys } from '../keys/key-format.js';
import { isWellFormedText } from '../well-formed.js';

export const MAX_DISPLAY_NAME = 200;
export const MAX_EMAIL = 254;
export const MAX_TAGS = 10;
export const MAX_TAG_VALUE = 200;
export const TAG_KEY_PATTERN = /^[a-z0-9_.-]{1,40}$/;
/** At most this many `tag=` filters in one list request (a member has at most MAX_TAGS tags anyway). */
export const MAX_TAG_FILTERS = MAX_TAGS;

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters (C0 and C1) is this check's purpose.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const PLAUSIBLE_EMAIL = /^[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/u;
const TAG_KEY_RULE = 'a tag key is 1 to 40 characters of a-z, 0-9, "_", "." and "-"';

const characters = (text: string) => [...text].length;

/** A client's text in a message: quoted, cut at 50 characters, and never a Keyward key pasted by mistake. */
const quoted = (text: string) => JSON.stringify(redactKeys([...text].slice(0, 50).join('')) + (characters(text) > 50 ? '…' : ''));

/** A profile change as its callers give it: a field left out stays, null clears (a tag set to null is removed). */
export interface ProfileChange {
  displayName?: string | null;
  email?: string | null;
  tags?: Record<string, string | null>;
}

/** Refuses a text that is not plain, well-formed text: what `label` is called in the message. */
function requirePlainText(field: string, label: string, value: string): void {
  if (CONTROL.test(value)) throw invalid(field, `${label} contains a control character (such as a line break or a tab); remove it.`);
  if (!isWellFormedText(value)) throw invalid(field, `${label} is not valid text: it holds a lone UTF-16 surrogate.`);
}

/**
 * The change, checked field by field: the first field that breaks a rule is refused. `at` is where
 * the caller's input holds the fields (`endUser/` for a connect session's), for the error's path.
 */
export function checkProfileChange(change: ProfileChange, at = ''): ProfileChange {
  const checked: ProfileChange = {};
  if (change.displayName !== undefined) {
    const field = `${at}displayName`;
    const name = change.displayName;
    if (name !== null) {
      if (typeof name !== 'string') throw invalid(field, 'displayName is a string, or null to clear it.');
      if (name.length === 0) throw invalid(field, 'displayName is empty: give 1 to 200 characters, or null to clear it.');
      if (characters(name) > MAX_DISPLAY_NAME)
        throw invalid(field, `displayName is ${characters(name)} characters long; at most ${MAX_DISPLAY_NAME} are allowed.`);
      requirePlainText(field, 'displayName', name);
    }
    checked.displayName = name;
  }
  if (change.email !== undefined) {
    const field = `${at}email`;
    const email = change.email;
    if (email !== null) {
      if (typeof email !== 'string') throw invalid(field, 'email is a string, or null to clear it.');
      if (characters(email) > MAX_EMAIL) throw invalid(field, `email is ${characters(email)} characters long; at most ${MAX_EMAIL} are allowed.`);
      requirePlainText(field, 'email', email);
      if (!PLAUSIBLE_EMAIL.test(email)) throw invalid(field, 'email is not an email address: give one such as name@example.com, or null to clear it.');
    }
    checked.email = email;
  }
  if (change.tags !== undefined) checked.tags = checkTagChange(change.tags, `${at}tags`);
  return checked;
}

function checkTagChange(tags: unknown, field: string): Record<string, string | null> {
  if (tags === null || typeof tags !== 'object' || Array.isArray(tags)) {
    throw invalid(field, 'tags is an object of tag keys and their values, such as {"plan": "pro"}; a value of null removes that tag.');
  }
  const checked: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(tags)) {
    if (!TAG_KEY_PATTERN.test(key)) throw invalid(field, `The tag key ${quoted(key)} is not allowed: ${TAG_KEY_RULE}.`);
    if (value !== null) {
      if (typeof value !== 'string') throw invalid(field, `The value of tag "${key}" is not a string: tag values are strings, or null to remove the tag.`);
      if (characters(value) > MAX_TAG_VALUE) {
        throw invalid(field, `The value of tag "${key}" is ${characters(value)} characters long; at most ${MAX_TAG_VALUE} are allowed.`);
      }
      requirePlainText(field, `The value of tag "${key}"`, value);
    }
    checked[key] = value;
  }
  return checked;
}

/** The member's tags after a change, merged key by key (null removes), refused when more than MAX_TAGS would remain. */
export function mergeTags(current: Record<string, string>, change: Record<string, string | null>, field = 'tags'): Record<string, string> {
  // A Map, not an object: a key such as "__proto__" is a tag like any other.
  const merged = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(change)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  if (merged.size > MAX_TAGS) {
    throw invalid(field, `An end user has at most ${MAX_TAGS} tags; with this change they would have ${merged.size}. Remove tags by setting them to null.`);
  }
  // Keys in order: how tags are stored and shown.
  return Object.fromEntries([...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** One `tag=key:value` filter of the list. */
export interface TagFilter {
  key: string;
  value: string;
}

/**
 * The list's `tag` parameter (one value or several): each `key:value`, split at the first colon (a
 * value may hold colons). Repeats are kept once.
 */
export function parseTagFilters(raw: string | readonly string[] | undefined): TagFilter[] {
  if (raw === undefined) return [];
  const texts = [...new Set(typeof raw === 'string' ? [raw] : raw)];
  if (texts.length > MAX_TAG_FILTERS) throw invalid('tag', `At most ${MAX_TAG_FILTERS} tag filters are allowed; ${texts.length} were given.`);
  return texts.map((text) => {
    const colon = text.indexOf(':');
    const key = colon < 0 ? text : text.slice(0, colon);
    if (colon < 0) throw invalid('tag', `Each tag filter is key:value, such as tag=plan:pro; ${quoted(text)} has no colon.`);
    if (!TAG_KEY_PATTERN.test(key)) throw invalid('tag', `The tag filter's key ${quoted(key)} is not allowed: ${TAG_KEY_RULE}.`);
    const value = text.slice(colon + 1);
    if (characters(value) > MAX_TAG_VALUE)
      throw invalid('tag', `The value of tag filter "${key}" is longer than ${MAX_TAG_VALUE} characters, so no end user can match it.`);
    requirePlainText('tag', `The value of tag filter "${key}"`, value);
    return { key, value };
  });
}
