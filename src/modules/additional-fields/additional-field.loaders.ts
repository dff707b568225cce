import { rowsById } from '../../loaders';
import { AdditionalField } from './additional-field.entity';

/** Additional field by id, as a plain row (MemberFieldValue.field). */
export const additionalFieldById = rowsById(AdditionalField);
