import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { GraphQLList, execute, getNullableType, type GraphQLSchema } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createContext, type Caller } from '../context';
import { appErrorOf } from '../errors/app-error';
import { isUnavailable } from '../errors/unavailable';
import { internalProblem, problem, sendProblem, STATUS } from '../errors/problem';
import type { Logger } from '../logger';
import { checkInputValue } from './input-check';
import { compileRoutes, type CompiledRoute } from './compile';
import { CSV_TYPES, csvBody, csvInput, csvRowType } from './csv';
import { cursorLinks, listLinks } from './links';
import { bodyPointer, intParam, pointerFor, single, sortParam, type QueryIssue } from './params';
import type { RouteSpec } from './route';

export interface FacadeDeps {
  schema: GraphQLSchema;
  em: EntityManager;
  logger: Logger;
  publicBaseUrl: string | undefined;
}

const KEY_VALUES = ['id', 'externalId'];
export const JSON_LIMIT = '1mb';
const jsonBody = express.json({ limit: JSON_LIMIT, strict: false, type: ['application/json', 'application/*+json'] });

function hasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Turns the request into the operation's variables; every problem is collected with its pointer. */
function bindVariables(route: CompiledRoute, req: Request, issues: QueryIssue[]) {
  const variables: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  // `key` and `groupsKey` take only id or externalId, on every route (API-DECISIONS.md).
  const by: Record<string, string> = {};
  for (const param of ['key', 'groupsKey']) {
    const value = single(req, param, issues);
    if (value === undefined) continue;
    if (!KEY_VALUES.includes(value)) issues.push({ pointer: `#/query/${param}`, detail: `${param} must be id or externalId` });
    else by[param] = value;
  }
  if (route.idOnly && by.key === 'externalId') {
    issues.push({ pointer: '#/query/key', detail: 'These records are addressed by id only; key must be id or absent' });
  }
  for (const [name, binding] of Object.entries(route.refs ?? {})) {
    const value = req.params[binding.param] as string;
    sources.set(name, `#/path/${binding.param}`);
    const externalId = binding.keyParam !== null && by[binding.keyParam] === 'externalId';
    variables[name] = externalId ? { externalId: value } : { id: value };
  }
  if (route.list) {
    for (const name of ['limit', 'skip'] as const) {
      variables[name] = intParam(req, name, issues);
      sources.set(name, `#/query/${name}`);
    }
    variables.sort = sortParam(req, route.sortFields, issues);
    sources.set('sort', '#/query/sort');
  }
  if (route.cursor) {
    variables.limit = intParam(req, 'limit', issues);
    sources.set('limit', '#/query/limit');
    for (const name of Object.keys(route.cursor)) {
      const value = single(req, name, issues);
      const list = getNullableType(route.variableTypes.get(name)!) instanceof GraphQLList;
      variables[name] = value === undefined ? undefined : list ? value.split(',').map((v) => v.trim()).filter(Boolean) : value;
      sources.set(name, `#/query/${name}`);
    }
  }
  if (route.body) {
    sources.set(route.body, 'body');
    let body: unknown = req.body;
    if (!hasBody(req)) body = {};
    else if (route.csv && req.is(CSV_TYPES)) body = csvInput(String(req.body ?? ''), route.variableTypes.get(route.body)!, route.csv, issues);
    else if (!req.is(['application/json', 'application/*+json'])) {
      const types = route.csv ? 'JSON or CSV (Content-Type: application/json or text/csv)' : 'JSON (Content-Type: application/json)';
      issues.push({ pointer: '/', detail: `The body must be ${types}` });
    }
    if (body !== undefined && issues.every((i) => i.pointer !== '/')) {
      for (const issue of checkInputValue(route.variableTypes.get(route.body)!, body)) {
        issues.push({ pointer: bodyPointer(issue.path) || '/', detail: issue.detail });
      }
    }
    variables[route.body] = body;
  }
  return { variables, sources };
}

/**
 * The key's scope is checked before the body is read, so a key that may not write never
 * learns how its body would have been judged. The core checks the same scope again
 * (`authChecker`), which is what GraphQL callers meet.
 */
function requireScope(route: RouteSpec) {
  const scope = `${route.resource}:${route.method === 'GET' ? 'read' : 'write'}`;
  return (_req: Request, res: Response, next: NextFunction) => {
    const caller = res.locals.caller as Caller | undefined;
    if (caller?.kind === 'key' && !caller.scopes.has(scope)) {
      sendProblem(res, problem(403, `The API key lacks the scope ${scope}`));
      return;
    }
    next();
  };
}

export function createFacade(specs: RouteSpec[], deps: FacadeDeps): Router {
  const router = express.Router();
  for (const route of compileRoutes(deps.schema, specs)) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
    // Only routes that take a body read one: a body sent with a GET is ignored, not parsed.
    const parsers = route.body ? [jsonBody, ...(route.csv ? [csvBody(JSON_LIMIT)] : [])] : [];
    if (route.csv) csvRowType(route.variableTypes.get(route.body!)!, route.csv); // a bad binding stops the boot
    router[method](route.path, requireScope(route), ...parsers, async (req: Request, res: Response) => {
      const issues: QueryIssue[] = [];
      const { variables, sources } = bindVariables(route, req, issues);
      if (issues.length) {
        sendProblem(res, problem(400, issues.length === 1 ? issues[0].detail : 'The request has invalid values', issues));
        return;
      }
      const caller = res.locals.caller as Caller;
      const contextValue = createContext(deps.em, caller, res.locals.requestId);
      const result = await execute({ schema: deps.schema, document: route.parsed, variableValues: variables, contextValue });
      if (result.errors?.length) {
        const error = result.errors[0];
        const appError = appErrorOf(error);
        if (appError) {
          const errors = appError.issues.map((i) => ({ pointer: pointerFor(i, sources), detail: i.detail }));
          sendProblem(res, problem(STATUS[appError.code], appError.message, errors));
        } else if (isUnavailable(error)) {
          sendProblem(res, problem(503, 'The service is temporarily unavailable; try again shortly.'));
        } else {
          deps.logger.error({ requestId: res.locals.requestId, err: error.originalError ?? error }, 'operation failed');
          sendProblem(res, internalProblem(res.locals.requestId));
        }
        return;
      }
      const data = (result.data as { result: Record<string, unknown> }).result;
      if (route.status === 204) {
        res.status(204).end();
      } else if (route.cursor) {
        const page = data as { results: unknown[]; limit: number; size: number; next: string | null };
        res.status(200).json({
          results: page.results,
          _links: cursorLinks(req, deps.publicBaseUrl, page.next),
          limit: page.limit,
          size: page.size,
        });
      } else if (route.list) {
        const page = data as { results: unknown[]; limit: number; skip: number; size: number; hasNextPage: boolean };
        res.status(200).json({
          results: page.results,
          _links: listLinks(req, deps.publicBaseUrl, page),
          limit: page.limit,
          skip: page.skip,
          size: page.size,
        });
      } else {
        res.status(route.status).json(data);
      }
    });
  }
  return router;
}
