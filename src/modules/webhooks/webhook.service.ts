import dns from 'node:dns/promises';
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { leanFindOne, leanPage } from '../../db/lean';
import { pageWindow, type Page } from '../../common/pagination';
import { isId, newId } from '../../common/ids';
import { WEBHOOK } from '../../common/rules';
import { Checks } from '../../common/validate';
import { notFound, orNotFound } from '../../errors/app-error';
import { EVENT_TYPES } from '../events/event-types';
import { EVENT_SETTINGS } from '../events/settings';
import type { RuntimeState } from '../../state';
import { isPublicAddress, literalAddress } from './ssrf';
import { WebhookDelivery, WebhookEndpoint, type CreatedWebhookEndpoint, type RotatedWebhookSecret } from './webhook.entity';
import { LockMode } from '@mikro-orm/core';
import { transaction } from '../../db/transaction';
import { newSecret, ROTATION_OVERLAP_MS, sealSecret } from './webhook-secrets';
import { SECRET_BOX } from '../../security/secret-box';
import type { CreateWebhookEndpointInput, UpdateWebhookEndpointInput, WebhookDeliveryListArgs, WebhookEndpointListArgs } from './webhook.inputs';

/** The destination rules, at write time; delivery checks the connected address again (ssrf.ts). */
async function checkUrl(checks: Checks, url: string | null | undefined, allowPrivateNetworks: boolean): Promise<void> {
  if (url === undefined) return;
  const own = new Checks().string('url', url, WEBHOOK.url);
  if (!own.ok || url === null) return void checks.nest([], own.issues);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return void checks.add(['url'], 'url must be an absolute http or https URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return void checks.add(['url'], 'url must use http or https');
  if (parsed.username || parsed.password) return void checks.add(['url'], 'url must not carry credentials');
  if (allowPrivateNetworks) return;
  const literal = literalAddress(parsed.hostname);
  const refused = 'url must name a public address (private, loopback and link-local destinations are refused)';
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) checks.add(['url'], refused);
    return;
  }
  try {
    const addresses = await dns.lookup(parsed.hostname, { all: true });
    if (addresses.some((a) => !isPublicAddress(a.address))) checks.add(['url'], refused);
  } catch {
    // A name that does not resolve now may later: delivery checks again at connect time.
  }
}

function checkEvents(checks: Checks, events: string[] | null | undefined): void {
  if (events === undefined) return;
  if (events === null || !events.length) return void checks.add(['events'], 'events must list at least one event type, or "*"');
  if (events.includes('*') && events.length > 1) return void checks.add(['events'], '"*" stands alone: it already means every type');
  events.forEach((t, i) => {
    if (t !== '*' && !EVENT_TYPES.includes(t)) checks.add(['events', i], `unknown event type "${t}"; known types: ${EVENT_TYPES.join(', ')}`);
  });
}

export class WebhookService {
  constructor(
    private readonly em: EntityManager,
    private readonly state: RuntimeState,
  ) {}

  list(communityId: string, args: WebhookEndpointListArgs): Promise<Page<WebhookEndpoint>> {
    return leanPage(this.em, WebhookEndpoint, { communityId }, pageWindow(args));
  }

  /** For output: a plain row. 404, not 403, for another community's endpoint; a non-UUID id matches nothing. */
  async read(communityId: string, id: string): Promise<WebhookEndpoint> {
    return orNotFound(isId(id) && (await leanFindOne(this.em, WebhookEndpoint, { id: id.toLowerCase(), communityId })), 'Webhook endpoint');
  }

  /** The entity, to change it (no lock). */
  async find(communityId: string, id: string): Promise<WebhookEndpoint> {
    return orNotFound(isId(id) && (await this.em.findOne(WebhookEndpoint, { id: id.toLowerCase(), communityId })), 'Webhook endpoint');
  }

  async create(communityId: string, input: CreateWebhookEndpointInput): Promise<CreatedWebhookEndpoint> {
    const checks = new Checks().string('description', input.description, WEBHOOK.description);
    checkEvents(checks, input.events);
    await checkUrl(checks, input.url, this.state.get(EVENT_SETTINGS).allowPrivateNetworks);
    checks.done(['input']);
    const id = newId();
    const secret = newSecret();
    this.em.create(WebhookEndpoint, {
      id,
      communityId,
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      secret: sealSecret(this.state.get(SECRET_BOX), id, secret),
    });
    await this.em.flush();
    return { id, externalId: null, secret };
  }

  async update(communityId: string, id: string, input: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
    const checks = new Checks().string('description', input.description, WEBHOOK.description).nullable('enabled', input.enabled, WEBHOOK.enabled);
    checkEvents(checks, input.events);
    await checkUrl(checks, input.url, this.state.get(EVENT_SETTINGS).allowPrivateNetworks);
    checks.done(['input']);
    const endpoint = await this.find(communityId, id);
    // Enabling a disabled endpoint forgets why the service disabled it.
    const enabling = input.enabled === true && !endpoint.enabled;
    // PATCH: absent fields stay (the checks refused null for the non-nullable ones); MikroORM
    // writes only what changed and then sets modifiedAt.
    wrap(endpoint).assign({ ...input, ...(enabling ? { disabledReason: null, failingSince: null } : {}) }, { ignoreUndefined: true });
    await this.em.flush();
    return endpoint;
  }

  /**
   * A new secret, shown only in this answer. The former one keeps signing beside it for
   * ROTATION_OVERLAP_MS (deliveries carry both signatures, new first); a second rotation within
   * the overlap keeps only the secret it replaces. The row is locked, so concurrent rotations
   * follow one another.
   */
  async rotateSecret(communityId: string, id: string): Promise<RotatedWebhookSecret> {
    if (!isId(id)) throw notFound('Webhook endpoint');
    return transaction(this.em, async (tem) => {
      const endpoint = await tem.findOne(WebhookEndpoint, { id: id.toLowerCase(), communityId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!endpoint) throw notFound('Webhook endpoint');
      const secret = newSecret();
      endpoint.previousSecret = endpoint.secret;
      endpoint.previousSecretUntil = new Date(Date.now() + ROTATION_OVERLAP_MS);
      endpoint.secret = sealSecret(this.state.get(SECRET_BOX), endpoint.id, secret);
      endpoint.modifiedAt = new Date();
      return { id: endpoint.id, secret };
    });
  }

  async remove(communityId: string, id: string): Promise<boolean> {
    const deleted = isId(id) ? await this.em.nativeDelete(WebhookEndpoint, { id: id.toLowerCase(), communityId }) : 0;
    if (!deleted) throw notFound('Webhook endpoint');
    return true;
  }

  async deliveries(communityId: string, id: string, args: WebhookDeliveryListArgs): Promise<Page<WebhookDelivery>> {
    const window = pageWindow(args);
    const endpoint = await this.read(communityId, id);
    return leanPage(this.em, WebhookDelivery, { communityId, endpointId: endpoint.id }, window);
  }
}
