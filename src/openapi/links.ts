import type { CompiledRoute } from '../rest/compile';

/** The path (OpenAPI form), path parameters and key switches of a route. */
interface Located {
  route: CompiledRoute;
  path: string;
  params: string[];
  /** Path parameter -> its key switch (`key`, `groupsKey`), for parameters that have one. */
  keys: Map<string, string>;
}

/**
 * OpenAPI `links` from each create (201/202 with an `id`) to the operations that take that
 * id: the record's own operations (`/groups` -> `/groups/{identifier}`, and the nested
 * `/groups/{groupIdentifier}/memberships...`), or the address its `location` names
 * (imports -> `/import_jobs/{identifier}`). The id goes into the target's parameter with its
 * key switch set to `id`; the target's other path parameters (and their key switches) are
 * the create request's own. A bulk create links its first record. Contract testers and
 * generated clients follow these to chain requests with real ids.
 */
export function createLinks(routes: Located[]): Map<CompiledRoute, Record<string, object>> {
  const out = new Map<CompiledRoute, Record<string, object>>();
  for (const create of routes) {
    const { route } = create;
    if (route.method !== 'POST' || (route.status !== 201 && route.status !== 202)) continue;
    const bulk = create.path.endsWith('/_bulk');
    const collection = route.location
      ? route.location.replace(/\/\{id\}$/, '')
      : create.path.replace(/\/_bulk$/, '');
    const idExpression = bulk ? '$response.body#/0/id' : '$response.body#/id';
    const links: Record<string, object> = {};
    for (const target of routes) {
      const rest = target.path.slice(collection.length);
      if (!target.path.startsWith(collection) || !/^\/\{\w+\}(\/|$)/.test(rest)) continue;
      const param = /^\/\{(\w+)\}/.exec(rest)![1];
      // Every other path parameter must be one the create request itself had.
      if (!target.params.every((p) => p === param || create.params.includes(p))) continue;
      const parameters: Record<string, string> = { [param]: idExpression };
      const key = target.keys.get(param);
      if (key) parameters[key] = 'id';
      for (const p of target.params) {
        if (p === param) continue;
        parameters[p] = `$request.path.${p}`;
        const inherited = target.keys.get(p);
        if (inherited) parameters[inherited] = `$request.query.${inherited}`;
      }
      links[target.route.operationId] = {
        operationId: target.route.operationId,
        parameters,
        description: `\`${param}\` is the id this ${bulk ? 'bulk create answers first' : 'operation answers'}.`,
      };
    }
    if (Object.keys(links).length) out.set(route, links);
  }
  return out;
}

export type { Located };
