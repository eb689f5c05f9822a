/**
 * keyward/sdk: a typed client for Keyward's management API and the verification of its webhooks,
 * for a company's backend on Node 20 or later. It depends on nothing but Node itself (fetch,
 * node:crypto) and imports nothing from the service: it ships as it is to customers.
 *
 *   import { Keyward } from 'keyward/sdk';
 *   const keyward = new Keyward({ baseUrl, accountKey, serverKey });
 */

export type * from './bodies.js';
export { type EndUserListOptions, Keyward, type KeywardOptions, type PostOptions, type ProxyRequest } from './client.js';
export { KeywardError, type KeywardErrorFields, SDK_ERROR_CODES } from './keyward-error.js';
export type { components, paths, webhooks } from './openapi-types.js';
export { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from './webhooks.js';
