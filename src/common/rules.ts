import { Extensions } from 'type-graphql';

/**
 * Input rules, declared once. The services check values with these objects (`Checks`),
 * and the OpenAPI generator writes the same objects into the document (src/openapi/
 * json-schema.ts reads them from the GraphQL field's `rule` extension). So a limit,
 * pattern or format changes in one place for both.
 */
export interface TextRule {
  kind: 'text';
  min?: number;
  max: number;
  pattern?: RegExp;
  /** How the 400 names the pattern. */
  patternText?: string;
  format?: 'email';
  /** JSON null is accepted: false for optional fields that must not be null. */
  nullable?: boolean;
  example?: unknown;
}

export interface IntRule {
  kind: 'int';
  min: number;
  max: number;
  nullable?: boolean;
  example?: unknown;
}

export interface ListRule {
  kind: 'list';
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  example?: unknown;
}

/** Any other field: only its null handling, default and example are declared. */
export interface ValueRule {
  kind: 'value';
  nullable?: boolean;
  default?: unknown;
  example?: unknown;
}

export type FieldRule = TextRule | IntRule | ListRule | ValueRule;

/** An "at least one of" rule of an input object: each alternative lists fields that must be present and not null. */
export interface ObjectRule {
  /** The component name in the OpenAPI document (e.g. ApiGroupInput). */
  name?: string;
  anyOf?: string[][];
  example?: Record<string, unknown>;
}

export const text = (r: Omit<TextRule, 'kind'>): TextRule => ({ kind: 'text', ...r });
export const int = (r: Omit<IntRule, 'kind'>): IntRule => ({ kind: 'int', ...r });
export const list = (r: Omit<ListRule, 'kind'>): ListRule => ({ kind: 'list', ...r });
export const value = (r: Omit<ValueRule, 'kind'>): ValueRule => ({ kind: 'value', ...r });

/** Attaches a rule to a GraphQL input field (or an ObjectRule to an input type) for the document. */
export const Rule = (rule: FieldRule | ObjectRule) => Extensions({ rule });

export const ruleOf = (extensions: Record<string, unknown> | null | undefined) =>
  (extensions?.rule as FieldRule | ObjectRule | undefined) ?? undefined;

/** Service-assigned ids the document's examples use (records addressed by id only). */
export const EXAMPLE_IDS = {
  additionalField: '3f1c2a9e-8d4b-4e6f-9a1b-2c3d4e5f6a7b',
  member: '5b2d7c1e-3a4f-4b6c-8d9e-0f1a2b3c4d5e',
  importJob: '7c3e9a2b-1d4f-4a6b-9c8d-2e3f4a5b6c7d',
  webhookEndpoint: '9d4f1b3c-2e5a-4c7d-8e9f-3a4b5c6d7e8f',
};

// ---- shared field rules ----

export const EXTERNAL_ID = text({
  min: 1,
  max: 128,
  pattern: /^[A-Za-z0-9@_.-]+$/,
  patternText: '^[A-Za-z0-9@_.-]+$',
  nullable: true,
  example: 'ext-1',
});

/** Names of groups, additional fields, notification titles. */
export const NAME = text({ min: 1, max: 256, nullable: false, example: 'Example' });

/** Pragmatic, not RFC 5322: one @, no spaces or quotes, a dotted domain of DNS labels. */
export const EMAIL_PATTERN =
  /^[^\s@"(),:;<>[\]\\]{1,64}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** Bulk bodies (members, memberships) carry 1 to MAX_BULK items, all or nothing. */
export const MAX_BULK = 1000;

export const MEMBER = {
  externalId: { ...EXTERNAL_ID, example: 'ada-lovelace' },
  firstName: text({ min: 1, max: 256, nullable: true, example: 'Ada' }),
  lastName: text({ min: 1, max: 256, nullable: true, example: 'Lovelace' }),
  emailAddress: text({
    min: 3,
    max: 254,
    pattern: EMAIL_PATTERN,
    patternText: 'a valid email address',
    format: 'email',
    nullable: true,
    example: 'ada@example.com',
  }),
  additionalFields: list({ nullable: false }),
  bulk: list({ minItems: 1, maxItems: MAX_BULK }),
  fieldValue: text({ max: 2048, nullable: true, example: 'Engineering' }),
};

/**
 * List filters (docs/api.md, "Finding members and groups"). `q` is checked after trimming;
 * `fields` holds at most MAX_FIELD_FILTERS `field.<id>=` filters (each a condition of the one
 * page statement).
 */
export const MAX_SEARCH_TEXT = 100;
export const MAX_FIELD_FILTERS = 20;
export const SEARCH = {
  q: text({ min: 1, max: MAX_SEARCH_TEXT, nullable: true, example: 'lovel' }),
  emailAddress: { ...MEMBER.emailAddress, example: 'ada@example.com' },
  fields: list({ maxItems: MAX_FIELD_FILTERS, nullable: true }),
  fieldValue: text({ max: 2048, nullable: false, example: 'Berlin' }),
};

export const MAX_ORDER_NUMBER = 1_000_000_000;

export const ADDITIONAL_FIELD = {
  name: { ...NAME, example: 'Department' },
  placeholder: text({ max: 256, nullable: true, example: 'e.g. Engineering' }),
  unicode: text({ min: 1, max: 6, pattern: /^[0-9A-Fa-f]{1,6}$/, patternText: '1-6 hexadecimal digits', nullable: false, example: 'f007' }),
  isEditableByMember: value({ nullable: false, default: true, example: true }),
  isMandatoryForMember: value({ nullable: false, default: false, example: false }),
  isVisibleInApp: value({ nullable: false, default: true, example: true }),
  // Far below the integer column's limit, so pushing fields back can never overflow.
  orderNumber: int({ min: 0, max: MAX_ORDER_NUMBER, nullable: false, example: 1 }),
};

export const MAX_MEMBERSHIPS_BULK = MAX_BULK;

export const MEMBERSHIP = {
  externalId: { ...EXTERNAL_ID, example: 'ada-in-berlin' },
  title: text({ max: 256, nullable: true, example: 'Team lead' }),
  bulk: list({ minItems: 1, maxItems: MAX_MEMBERSHIPS_BULK }),
};

export const MAX_IMPORT_ROWS = 100_000;
export const IMPORT_ROWS = list({ minItems: 1, maxItems: MAX_IMPORT_ROWS });

export const MAX_RECIPIENTS = 10_000;

export const NOTIFICATION = {
  title: { ...NAME, example: 'Office closed on Friday' },
  message: text({ min: 1, max: 10_000, nullable: false, example: 'The Berlin office is closed this Friday.' }),
  recipients: list({ maxItems: MAX_RECIPIENTS, nullable: true }),
};

/**
 * Webhook endpoints. The url's example names example.com (reserved for documentation,
 * RFC 2606): it passes the destination guard wherever it is sent, since it resolves to public
 * addresses, and a name that does not resolve at write time is checked again at connect
 * time (docs/events.md, "The example endpoint").
 */
export const WEBHOOK = {
  url: text({
    min: 1,
    max: 2048,
    pattern: /^https?:\/\/\S+$/,
    patternText: 'an absolute http:// or https:// URL',
    nullable: false,
    example: 'https://example.com/webhooks',
  }),
  // A type the examples never cause: running them sends nothing to the example url.
  events: list({ minItems: 1, nullable: false, example: ['import_job.failed'] }),
  description: text({ max: 1024, nullable: true, example: 'On-call team: failed imports' }),
  enabled: value({ nullable: false, example: true }),
};
