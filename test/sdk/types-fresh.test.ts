/**
 * src/sdk/openapi-types.ts is generated from the app's OpenAPI document and checked in; this renders
 * it again from the app as it is and fails when the checked-in file differs, so a route's schema
 * cannot change without the SDK's types following.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { renderSdkTypes, SDK_TYPES_PATH } from '../../scripts/generate-sdk-types.js';

it('the checked-in SDK types are those the current routes generate', async () => {
  const fresh = await renderSdkTypes();
  const checkedIn = readFileSync(SDK_TYPES_PATH, 'utf8');
  expect(fresh.length).toBeGreaterThan(1000);
  if (checkedIn !== fresh) {
    // toBe's diff shows which lines moved; the message says what to do about it.
    expect(checkedIn, 'src/sdk/openapi-types.ts is stale: run `npm run sdk:types` and commit the result').toBe(fresh);
  }
});
