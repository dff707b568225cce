import { modules } from '../modules';
import type { TaskHandler } from './queue';

/** Every background task by its queue name, as the feature modules declare them; a worker serves all of them. */
export const tasks: Record<string, TaskHandler> = Object.assign({}, ...modules.map((m) => m.tasks ?? {}));
