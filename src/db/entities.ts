import { ApiKey } from '../auth/api-key.entity';
import { AdditionalField } from '../modules/additional-fields/additional-field.entity';
import { Community } from '../modules/communities/community.entity';
import { Group } from '../modules/groups/group.entity';
import { Member, MemberFieldValue } from '../modules/members/member.entity';
import { GroupMembership } from '../modules/memberships/membership.entity';

/** Every entity, listed once (discovery never scans folders). */
export const entities = [Community, ApiKey, Group, Member, MemberFieldValue, AdditionalField, GroupMembership];
