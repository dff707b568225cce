import { rowsById } from '../../loaders';
import { Group } from './group.entity';

/** Group by id, as a plain row (GroupMembership.group). */
export const groupById = rowsById(Group);
