/**
 * The type of a field resolver's `@Root()`: the parent as it came, a row. type-graphql converts
 * a root whose parameter type is a class into an instance of it (`new Target()` and
 * `Object.assign`, its `convertToType`); for an entity class that ran MikroORM's property
 * setters and built an entity wrapper for every parent of a page (100 for a page of members
 * with `additionalFields`; docs/performance.md, "Decisions"). A mapped type is reflected as
 * `Object`, which type-graphql passes through as it is.
 */
export type Parent<T> = Pick<T, keyof T>;
