/** OAuth flows, hosted static-credential form sessions, and idempotency records of the POST routes. */
import { Repository } from './repository.js';

export class FlowsRepository extends Repository {}
