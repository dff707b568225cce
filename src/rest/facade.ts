import { context as otelContext } from '@opentelemetry/api';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { GraphQLList, getNullableType, getOperationAST, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { callerKey, callerPosition, createContext, enterCaller, type Caller } from '../context';
import { callerScope } from '../db/caller-budget';
import { parseToken, READ_ROUTER } from '../db/replicas';
import { classify } from '../errors/classify';
import { internalProblem, problem, problemBody, sendClassified, sendProblem, type Problem } from '../errors/problem';
import type { Logger } from '../logger';
import { nulIssues } from '../graphql/nul-check';
import { checkInputValue } from './input-check';
import { JSON_MAX_DEPTH, limitJsonDepth } from '../common/json-depth';
import { compileRoutes, type CompiledRoute } from './compile';
import { compileDocument, type RunDocument } from '../graphql/jit';
import { CSV_TYPES, csvBody, csvInput, csvRowType } from './csv';
import { cursorLinks, listLinks } from './links';
import { filterParam } from './filter';
import { bodyPointer, intParam, pointerFor, single, sortParam, type QueryIssue } from './params';
import type { RouteSpec } from './route';
import { answerNotModified, hasEtag, ifMatchVersion, modifiedSinceParam, takeEtag, takesIfMatch, takesModifiedSince, versionOnly, withEtagSelection } from './conditional';
import type { RuntimeState } from '../state';
import { SECRET_BOX } from '../security/secret-box';
import { isDeadlock } from '../db/transaction';
import { jsonAnswer, sendAnswer, type Answer } from '../http/answer';
import { fingerprintOf, idempotencyKeyOf, runIdempotent } from '../http/idempotency';
import { utf8Only } from '../http/utf8-body';
import { inRequestTrace, labelRoute } from '../observability/http';
import { inOperationSpan } from '../observability/spans';

export interface FacadeDeps {
  schema: GraphQLSchema;
  em: EntityManager;
  /** For Idempotency-Key error answers (src/http/idempotency.ts). */
  pool: Pool;
  /** The runtime's state, given to every request context; its READ_ROUTER sends GETs to replicas (src/db/replicas.ts), when configured. */
  state: RuntimeState;
  logger: Logger;
  publicBaseUrl: string | undefined;
  /** Run the route documents compiled by graphql-jit (config GRAPHQL_JIT). */
  jit?: boolean;
  /** How deep a JSON body may nest (config JSON_MAX_DEPTH). */
  jsonMaxDepth?: number;
}

const KEY_VALUES = ['id', 'externalId'];
export const JSON_LIMIT = '1mb';
const jsonBody = express.json({ limit: JSON_LIMIT, strict: false, type: ['application/json', 'application/*+json'], verify: utf8Only });


function hasBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Turns the request into the operation's variables; every problem is collected with its pointer. */
function bindVariables(route: CompiledRoute, req: Request, issues: QueryIssue[]) {
  const variables: Record<string, unknown> = {};
  const sources = new Map<string, string>();
  // `key` and `groupsKey` take only id or externalId, on every route (docs/api.md).
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
    variables[name] = binding.scalar ? value : externalId ? { externalId: value } : { id: value };
  }
  if (route.list) {
    for (const name of ['limit', 'skip'] as const) {
      variables[name] = intParam(req, name, issues);
      sources.set(name, `#/query/${name}`);
    }
    variables.sort = sortParam(req, route.sortFields, issues);
    sources.set('sort', '#/query/sort');
    if (takesModifiedSince(route)) {
      variables.modifiedSince = modifiedSinceParam(req, issues);
      sources.set('modifiedSince', '#/query/modifiedSince');
    }
    if (route.filter) variables.filter = filterParam(route.filter, req, issues, sources);
  }
  if (takesIfMatch(route)) {
    variables.expectedVersion = ifMatchVersion(req, issues);
    sources.set('expectedVersion', '#/header/If-Match');
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
  // Read-only requests on replicas, with read-your-writes (src/db/replicas.ts): set by startRuntime when configured.
  const reads = deps.state.find(READ_ROUTER);
  // A body nested deeper than the limit is refused before anything walks it (common/json-depth.ts).
  const depthLimit = limitJsonDepth(deps.jsonMaxDepth ?? JSON_MAX_DEPTH);
  for (const route of compileRoutes(deps.schema, specs)) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete';
    // Only routes that take a body read one: a body sent with a GET is ignored, not parsed.
    const parsers = route.body ? [jsonBody, depthLimit, ...(route.csv ? [csvBody(JSON_LIMIT)] : [])] : [];
    if (route.csv) csvRowType(route.variableTypes.get(route.body!)!, route.csv); // a bad binding stops the boot
    const etag = hasEtag(deps.schema, route);
    // Parsed and validated at boot (compileRoutes); compiled once, on the route's first request
    // (graphql-jit unless GRAPHQL_JIT=false): routes a process never serves hold no compiled code.
    const compile = (document: DocumentNode) => {
      let compiled: RunDocument | undefined;
      return (contextValue: unknown, variables: Record<string, unknown>) =>
        (compiled ??= compileDocument(deps.schema, document, undefined, deps.jit ?? true))(contextValue, variables);
    };
    const run = compile(etag ? withEtagSelection(route.parsed) : route.parsed);
    const runVersion = etag ? compile(versionOnly(route.parsed)) : undefined;
    const operation = getOperationAST(route.parsed)!;
    const operationType = operation.operation;
    const operationName = operation.name?.value ?? route.operationId;
    const problemAnswer = (res: Response) => (p: Problem) => jsonAnswer(p.status, problemBody(res, p), 'application/problem+json');

    /** Binds, executes and shapes the answer; `em` is the request's transaction when it has an Idempotency-Key. */
    const answer = async (req: Request, res: Response, em: EntityManager): Promise<Answer> => {
      const issues: QueryIssue[] = [];
      const { variables, sources } = bindVariables(route, req, issues);
      for (const issue of nulIssues(undefined, variables)) issues.push({ pointer: pointerFor(issue, sources), detail: issue.detail });
      if (issues.length) {
        return problemAnswer(res)(problem(400, issues.length === 1 ? issues[0].detail : 'The request has invalid values', issues));
      }
      const caller = res.locals.caller as Caller;
      const contextValue = createContext(em, caller, res.locals.requestId, deps.state);
      if (runVersion && req.get('if-none-match')) {
        const current = await runVersion(contextValue, variables);
        const tag = current.errors ? undefined : takeEtag((current.data as { result: Record<string, unknown> }).result);
        if (tag && answerNotModified(req, res, tag)) return { status: 304, contentType: '', body: '' };
      }
      // The operation's span: a child of the request's HTTP span, the parent of its SQL spans.
      const result = await inOperationSpan(operationType, operationName, res.locals.otel ?? otelContext.active(), () => run(contextValue, variables));
      if (result.errors?.length) {
        const error = result.errors[0];
        const c = classify(error);
        if (c.code === 'INTERNAL') {
          deps.logger.error({ requestId: res.locals.requestId, err: error.originalError ?? error }, 'operation failed');
          return problemAnswer(res)(internalProblem(res.locals.requestId));
        }
        // A 503 is never stored as an idempotent answer, so its header goes straight out.
        if (c.retryAfter !== undefined) res.setHeader('Retry-After', String(c.retryAfter));
        const errors = c.issues.map((i) => ({ pointer: pointerFor(i, sources), detail: i.detail }));
        const failed = problemAnswer(res)(problem(c.status, c.detail, errors));
        // In a joined transaction (an idempotent POST) the operation cannot retry a deadlock itself.
        return isDeadlock(error.originalError) ? { ...failed, deadlocked: true } : failed;
      }
      const data = (result.data as { result: Record<string, unknown> }).result;
      if (route.status === 204) return { status: 204, contentType: '', body: '' };
      if (route.cursor) {
        const page = data as { results: unknown[]; limit: number; size: number; next: string | null };
        return jsonAnswer(200, {
          results: page.results,
          _links: cursorLinks(req, deps.publicBaseUrl, page.next),
          limit: page.limit,
          size: page.size,
        });
      }
      if (route.list) {
        const page = data as { results: unknown[]; limit: number; skip: number; size: number; hasNextPage: boolean };
        return jsonAnswer(200, {
          results: page.results,
          _links: listLinks(req, deps.publicBaseUrl, page),
          limit: page.limit,
          skip: page.skip,
          size: page.size,
        });
      }
      if (etag) {
        const tag = takeEtag(data);
        if (tag && answerNotModified(req, res, tag)) return { status: 304, contentType: '', body: '' };
      }
      const done = jsonAnswer(route.status, data);
      if (route.location) {
        // e.g. /api/v1/import_jobs/{id}: where the client reads what it created or started (kept in a replay).
        done.headers = { ...done.headers, Location: `${req.baseUrl}${route.location.replace('{id}', encodeURIComponent(String(data.id)))}` };
      }
      return done;
    };

    const label = (req: Request, res: Response, next: NextFunction) => {
      labelRoute(req, res, req.baseUrl + route.path, operationType);
      next();
    };
    router[method](route.path, label, requireScope(route), ...parsers, (req: Request, res: Response) =>
      // The caller's connection budget covers all of the request's database work (db/caller-budget.ts),
      // in the request's trace (the body parsers' callbacks left it).
      inRequestTrace(res, () =>
        callerScope.run({}, () => {
          // ... and the database's tenancy: the caller's community (src/db/tenancy.ts).
          enterCaller(res.locals.caller as Caller, (fields, msg) => deps.logger.info(fields, msg));
          return handle(req, res);
        }),
      ),
    );

    const handle = async (req: Request, res: Response) => {
      let result: Answer;
      const caller = callerKey(res.locals.caller as Caller);
      try {
        if (route.method === 'GET') {
          result = await read(req, res, caller);
          return sendAnswer(res, result);
        }
        const idempotency = route.method === 'POST' ? idempotencyKeyOf(req) : {};
        if (idempotency.problem) result = problemAnswer(res)(idempotency.problem);
        else if (idempotency.key) {
          result = await runIdempotent({
            em: deps.em,
            pool: deps.pool,
            box: deps.state.get(SECRET_BOX),
            owner: caller,
            key: idempotency.key,
            fingerprint: fingerprintOf(req, hasBody(req) ? req.body : undefined),
            run: (em) => answer(req, res, em),
            problemAnswer: problemAnswer(res),
          });
        } else result = await answer(req, res, deps.em);
        if (reads && result.status < 400) result = await withToken(result, caller);
      } catch (err) {
        return sendClassified(res, err, () => deps.logger.error({ requestId: res.locals.requestId, err }, 'request failed'));
      }
      sendAnswer(res, result);
    };

    /**
     * A GET: on a replica that has the caller's last write and the position of the
     * `Consistency-Token` it sent, else on the primary; answered again by the primary when the
     * replica failed (docs/architecture.md, "Reads on replicas").
     */
    const read = async (req: Request, res: Response, caller: string): Promise<Answer> => {
      const token = parseToken(req.get('consistency-token'));
      if (token === null) {
        const detail = 'Consistency-Token must be a token from a Consistency-Token response header (16 hexadecimal digits)';
        return problemAnswer(res)(problem(400, detail, [{ pointer: '#/header/Consistency-Token', detail }]));
      }
      if (!reads) return answer(req, res, deps.em);
      return reads.read(caller, token, () => answer(req, res, deps.em), (r) => r.status >= 500, callerPosition(res.locals.caller as Caller));
    };

    /** A successful write's answer with the write's position (read-your-writes, on every instance). */
    const withToken = async (result: Answer, caller: string): Promise<Answer> => {
      try {
        return { ...result, headers: { ...result.headers, 'Consistency-Token': await reads!.recordWrite(caller) } };
      } catch (err) {
        // The write is committed: its answer stands. The caller's reads fall back to the primary
        // while its position is unknown (the store that failed fails their lookups too).
        deps.logger.warn({ err: (err as Error).message }, 'write position not recorded');
        return result;
      }
    };
  }
  return router;
}
