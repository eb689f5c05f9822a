/** Accounts and the members who sign in to their dashboard (tables accounts, members). */
import { Repository } from './repository.js';

export class AccountsRepository extends Repository {}
