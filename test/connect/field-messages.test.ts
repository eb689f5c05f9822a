/**
 * What the hosted form says beside a value that breaks a catalog field's pattern: the whole rule, in
 * one sentence with one full stop. A value may start right and still be refused for its length (an
 * OpenAI key "sk-short"), so a hint that gives only the start misleads; a hint that already ends in
 * "…" or "." must not get a second stop.
 */
import { describe, expect, it } from 'vitest';
import { STATIC_PROVIDERS } from '../../src/catalog/catalog.js';
import { fieldError } from '../../src/services/providers/static-forms.js';

const PATTERNED = STATIC_PROVIDERS.flatMap((provider) =>
  provider.fields.filter((f) => f.pattern).map((field) => ({ provider: provider.slug, name: field.name, field })),
);

describe('the hosted form’s message for a value the pattern refuses', () => {
  it('tells an OpenAI key that starts with "sk-" but is too short the length rule', () => {
    const openai = STATIC_PROVIDERS.find((p) => p.slug === 'openai')!;
    const apiKey = openai.fields.find((f) => f.name === 'apiKey')!;
    expect(fieldError(apiKey, 'sk-short-7f3a')).toBe(
      'API key does not look right: it must be "sk-" followed by at least 20 letters, digits, "-" or "_" (e.g. sk-proj-…).',
    );
  });

  it.each(PATTERNED)('$provider $name: one sentence, one full stop, every minimum length named', ({ field }) => {
    const message = fieldError(field, '\u2603 not a value of any pattern')!;
    expect(message.endsWith('.')).toBe(true);
    expect(message).not.toMatch(/[.…]\s*\.$/);
    // A minimum length in the pattern ({20,}) is part of the rule the message states.
    for (const [, least] of field.pattern!.matchAll(/\{(\d+),\}/g)) expect(message, field.pattern).toContain(`at least ${least}`);
  });
});
