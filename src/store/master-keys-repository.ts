/** The master keys the data was sealed under, and the resealing of every sealed column. */
import { Repository } from './repository.js';

export class MasterKeysRepository extends Repository {}
