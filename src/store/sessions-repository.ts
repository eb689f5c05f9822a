/** Dashboard sign-in state: sessions, sign-in attempts per email, used one-time form nonces. */
import { Repository } from './repository.js';

export class SessionsRepository extends Repository {}
