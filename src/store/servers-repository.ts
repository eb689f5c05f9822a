/** Servers and their allowed redirect URIs. */
import { Repository } from './repository.js';

export class ServersRepository extends Repository {}
