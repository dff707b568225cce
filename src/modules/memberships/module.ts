import type { FeatureModule } from '../module';
import { GroupMembership } from './membership.entity';
import { groupMembershipPages, memberMembershipPages } from './membership.loaders';
import { GroupMembershipRelations, GroupMembershipsField, MemberMembershipsField } from './membership.relations';
import { GroupMembershipResolver } from './membership.resolver';
import { membershipRoutes } from './membership.rest';

export const membershipsModule: FeatureModule = {
  resolvers: [GroupMembershipResolver, GroupMembershipRelations, GroupMembershipsField, MemberMembershipsField],
  routes: membershipRoutes,
  entities: [GroupMembership],
  versioned: [GroupMembership],
  loaders: [groupMembershipPages, memberMembershipPages],
};
