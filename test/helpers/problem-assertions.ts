/** Checks an error response against the contract's problem shape (CONTRACT 2.2). */
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/web/problem.js';

export interface ProblemJson {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: { path: string; message: string }[];
}

/**
 * Asserts status, code and every field of the problem body; with `errorPath`, also that the
 * first validation error names that field. Returns the parsed body for further checks.
 */
export function expectProblem(response: LightMyRequestResponse, status: number, code: ErrorCode, errorPath?: string): ProblemJson {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = response.json() as ProblemJson;
  expect(body.code).toBe(code);
  expect(body.type).toBe(`/errors/${code}`);
  expect(body.title).toBe(ERRORS[code].title);
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(body.requestId).toMatch(/^req_/);
  expect(body.requestId).toBe(response.headers['x-request-id']);
  if (code === 'validation_failed') {
    expect(Array.isArray(body.errors)).toBe(true);
    if (errorPath !== undefined) expect(body.errors![0]!.path).toBe(errorPath);
  } else {
    expect(body.errors).toBeUndefined();
  }
  return body;
}
