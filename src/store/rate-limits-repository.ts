/** The per-key rate limit shared by every node on one database. */
import { Repository } from './repository.js';

export class RateLimitsRepository extends Repository {}
