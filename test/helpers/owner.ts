import { asOwner } from '../../src/db/tenancy';

/**
 * A test's own look at the database across communities (what the API does not show): the
 * service's one bypass (src/db/tenancy.ts), as the admin CLI and the cross-community jobs use it.
 */
export const asTestOwner = <T>(work: () => T): T => asOwner('test: look across communities', () => undefined, work);
