import { modules } from '../modules';
import type { RouteSpec } from './route';

/** Every /api/v1 route, in mounting order (each module lists literal segments before params). */
export const routes: RouteSpec[] = modules.flatMap((m) => m.routes);
