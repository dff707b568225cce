import type { FeatureModule } from '../module';
import { GroupMembershipRelations, GroupMembershipsField, MemberMembershipsField } from './membership.relations';
import { GroupMembershipResolver } from './membership.resolver';
import { membershipRoutes } from './membership.rest';

export const membershipsModule: FeatureModule = {
  resolvers: [GroupMembershipResolver, GroupMembershipRelations, GroupMembershipsField, MemberMembershipsField],
  routes: membershipRoutes,
};
