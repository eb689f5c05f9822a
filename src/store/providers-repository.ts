/** The providers enabled on a server (server_providers) and its custom providers. */
import { Repository } from './repository.js';

export class ProvidersRepository extends Repository {}
