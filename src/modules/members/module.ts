import type { FeatureModule } from '../module';
import { Member, MemberFieldValue } from './member.entity';
import { memberById, memberFieldValues } from './member.loaders';
import { memberRoutes } from './member.rest';
import { MemberFieldValueResolver, MemberResolver } from './member.resolver';

export const membersModule: FeatureModule = {
  resolvers: [MemberResolver, MemberFieldValueResolver],
  routes: memberRoutes,
  entities: [Member, MemberFieldValue],
  versioned: [Member],
  loaders: [memberById, memberFieldValues],
};
