import { Arg, Authorized, Ctx, Int, Query, Resolver, Root, Subscription } from 'type-graphql';
import { Community, communityOf, type Context } from '../../context';
import { AppError } from '../../errors/app-error';
import { Event, EventPage } from './event.entity';
import { EventService, typesFor } from './event.service';
import { EVENT_HUB } from './hub';

const scopesOf = (ctx: Context) => (ctx.caller?.kind === 'key' ? ctx.caller.scopes : new Set<string>());

@Resolver(() => Event)
export class EventResolver {
  @Authorized('events:read')
  @Query(() => EventPage, { description: 'The event feed: committed changes after `after`, oldest first in commit order.' })
  events(
    @Arg('after', () => String, { nullable: true, description: 'The id of the last event already read.' }) after: string | null,
    @Arg('limit', () => Int, { nullable: true, description: '1-100, default 20.' }) limit: number | null,
    @Arg('types', () => [String], { nullable: true, description: 'Only these event types.' }) types: string[] | null,
    @Community() communityId: string,
    @Ctx() ctx: Context,
  ) {
    return ctx.service(EventService).feed(communityId, scopesOf(ctx), { after, limit, types });
  }

  @Authorized('events:read')
  @Subscription(() => Event, {
    name: 'events',
    description: 'Events as they commit, on any instance (graphql-ws on /graphql; the key in connection params `{ apiKey }`).',
    subscribe: async ({ args, context }) => {
      const ctx = context as Context;
      // Checked here too: authorization on the field runs per event, a refusal belongs at the start.
      if (!scopesOf(ctx).has('events:read')) throw new AppError('FORBIDDEN', 'The API key lacks the scope events:read');
      const types = typesFor(scopesOf(ctx), args.types as string[] | null);
      const hub = ctx.state.find(EVENT_HUB);
      if (!hub) throw new AppError('UNAVAILABLE', 'Subscriptions are not available');
      // The subscribe hook is no resolver: parameter decorators such as @Community() do not run here.
      return hub.subscribe(communityOf(ctx), types);
    },
  })
  eventsSubscription(
    @Root() event: Event,
    @Arg('types', () => [String], { nullable: true, description: 'Only these event types.' }) _types: string[] | null,
  ): Event {
    // Executed without a source stream: the operation came over HTTP POST, not graphql-ws.
    if (!event) throw new AppError('VALIDATION', 'Subscriptions are offered over WebSocket only (graphql-ws on /graphql)');
    return event;
  }
}
