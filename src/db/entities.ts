import { modules } from '../modules';

/** Every entity, as the feature modules declare them (discovery never scans folders). */
export const entities = modules.flatMap((m) => m.entities);
