import { Field, ID, InputType } from 'type-graphql';
import { invalid } from '../errors/app-error';
import { isId } from './ids';

@InputType({ description: 'Addresses a record by its service id or by the externalId the client chose: exactly one.' })
export class RecordRef {
  @Field(() => ID, { nullable: true })
  id?: string | null;

  @Field(() => String, { nullable: true })
  externalId?: string | null;
}

/** The WHERE fragment for a ref, or null when it cannot match anything. */
export function refWhere(ref: RecordRef, arg = 'ref'): { id: string } | { externalId: string } | null {
  const hasId = ref.id != null;
  const hasExt = ref.externalId != null;
  if (hasId === hasExt) throw invalid([{ path: [arg], detail: `${arg} needs exactly one of id and externalId` }]);
  if (hasId) return isId(ref.id!) ? { id: ref.id! } : null;
  // PostgreSQL text cannot hold NUL, and no stored externalId has one: match nothing (404), not a 500.
  return ref.externalId!.includes('\u0000') ? null : { externalId: ref.externalId! };
}
