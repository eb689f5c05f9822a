/**
 * The base of the errors that are answers, not faults: a refusal the service means to give (a
 * Problem, a DomainError). No stack trace is captured for them: none is ever read, and capturing one
 * is the most expensive part of refusing a request.
 */
export class Answer extends Error {
  constructor(message: string) {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
  }
}
