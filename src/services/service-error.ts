/**
 * A rule of the service was broken (unknown id, taken name, limit reached). The HTTP layer and the CLI
 * each turn it into their own kind of error.
 */
export class ServiceError extends Error {
  constructor(
    readonly reason: 'not_found' | 'conflict' | 'invalid' | 'limit',
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}
