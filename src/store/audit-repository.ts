/** The audit trail (audit_events). */
import { Repository } from './repository.js';

export class AuditRepository extends Repository {}
