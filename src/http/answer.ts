/** A complete answer: what the facade sends, and what is stored for a key. */
export interface Answer {
  status: number;
  /** Empty for 204/304. */
  contentType: string;
  body: string;
  headers?: Record<string, string>;
  /** Status deciding storage when it differs from `status` (GraphQL answers errors with 200). */
  classifyAs?: number;
  /** Set on an answer whose effects were rolled back and that was not stored. */
  discarded?: boolean;
  /** Set on the 503 of an operation that deadlocked: its transaction can be run again as a whole. */
  deadlocked?: boolean;
}

export const jsonAnswer = (status: number, value: unknown, contentType = 'application/json'): Answer => ({
  status,
  contentType,
  body: JSON.stringify(value),
});
