import { Field, ID, Int, ObjectType } from 'type-graphql';
import { GraphQLJSONObject } from 'graphql-scalars';

@ObjectType({ description: 'One committed change: `<resource>.<action>`, the record as committed, the changed fields.', simpleResolvers: true })
export class Event {
  @Field(() => ID, { description: 'Also the webhook-id of its deliveries.' })
  id!: string;

  @Field({ description: '`<resource>.<action>`, e.g. `group.created`.' })
  type!: string;

  @Field()
  createdAt!: Date;

  @Field(() => GraphQLJSONObject, { description: 'The record as its REST GET returns it; for deleted: id, externalId (and groupId).' })
  data!: Record<string, unknown>;

  @Field(() => [String], { nullable: true, description: 'The changed fields; present on updated.' })
  changes?: string[] | null;
}

@ObjectType({ description: 'One page of the event feed, oldest first in commit order.', simpleResolvers: true })
export class EventPage {
  @Field(() => [Event])
  results!: Event[];

  @Field(() => Int)
  limit!: number;

  @Field(() => Int, { description: 'Number of events in this page.' })
  size!: number;

  @Field({ description: 'Whether more events were already committed after this page.' })
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: 'The cursor (`after`) of the next page: the id of the last event of this one.' })
  next?: string | null;
}
