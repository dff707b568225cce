import { ApiKey } from '../auth/api-key.entity';
import { AdditionalField } from '../modules/additional-fields/additional-field.entity';
import { Community } from '../modules/communities/community.entity';
import { Group } from '../modules/groups/group.entity';
import { Member, MemberFieldValue } from '../modules/members/member.entity';
import { GroupMembership } from '../modules/memberships/membership.entity';
import { ImportJob, ImportRowError } from '../modules/imports/import-job.entity';
import { Notification, NotificationDelivery, NotificationRecipient } from '../modules/notifications/notification.entity';
import { WebhookDelivery, WebhookEndpoint } from '../modules/webhooks/webhook.entity';

/** Every entity, listed once (discovery never scans folders). */
export const entities = [Community, ApiKey, Group, Member, MemberFieldValue, AdditionalField, GroupMembership,
  Notification, NotificationRecipient, NotificationDelivery, ImportJob, ImportRowError,
  WebhookEndpoint, WebhookDelivery];
