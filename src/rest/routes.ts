import { groupRoutes } from '../modules/groups/group.rest';
import type { RouteSpec } from './route';

/** The whole REST contract at a glance: every /api/v1 route, in one table. */
export const routes: RouteSpec[] = [...groupRoutes];
