import { randomUUID } from 'node:crypto';

export const newId = (): string => randomUUID();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are opaque to clients; anything that is not one of ours simply matches nothing. */
export const isId = (value: string): boolean => UUID.test(value);
