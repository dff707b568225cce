import type { FeatureModule } from '../module';
import { memberRoutes } from './member.rest';
import { MemberFieldValueResolver, MemberResolver } from './member.resolver';

export const membersModule: FeatureModule = { resolvers: [MemberResolver, MemberFieldValueResolver], routes: memberRoutes };
