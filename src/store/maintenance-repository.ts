/** Statements that span tables: the sweeps of rows nothing needs any more, the health probe. */
import { Repository } from './repository.js';

export class MaintenanceRepository extends Repository {}
