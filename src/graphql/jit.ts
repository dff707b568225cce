import { HeaderMap, type ApolloServerOptionsWithGateway, type GraphQLRequestContextResponseForOperation, type GraphQLResponse } from '@apollo/server';
import { execute, getOperationAST, getVariableValues, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { LRUCache } from 'lru-cache';
import { context as otelContext } from '@opentelemetry/api';
import type { Context } from '../context';
import { inOperationSpan } from '../observability/spans';

type Gateway = ApolloServerOptionsWithGateway<Context>['gateway'];

/** A document compiled once, run per request: graphql-jit, or graphql-js's `execute` when it cannot compile. */
export type RunDocument = (contextValue: unknown, variables: Record<string, unknown>) => Promise<ExecutionResult> | ExecutionResult;

/**
 * Compiles a validated document into one function (graphql-jit): the execution plan (fields,
 * arguments, result shape) is built once instead of walked per request by graphql-js's generic
 * executor. The resolvers, and with them every business rule and authorization check, are the
 * schema's own. Variables are coerced once, by graphql-jit's compiled parser (0.15-0.6 ms for a
 * bulk of 1,000 members where graphql-js's `getVariableValues` took 5-12 ms, and both ran
 * before: docs/performance.md, "Decisions"); when it refuses them, and only then, graphql-js
 * coerces them too, so a bad variable is the error graphql-js gives (its message, and the node
 * that lets Apollo Server call it BAD_USER_INPUT). With `jit` false, or for a document
 * graphql-jit cannot compile, graphql-js's `execute` runs.
 */
export function compileDocument(schema: GraphQLSchema, document: DocumentNode, operationName?: string, jit = true): RunDocument {
  const plain: RunDocument = (contextValue, variables) => execute({ schema, document, contextValue, variableValues: variables, operationName });
  const query = jit ? compileQuery(schema, document, operationName) : undefined;
  if (!query || !isCompiledQuery(query)) return plain;
  const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  return (contextValue, variables) => {
    const result = query.query(undefined, contextValue, variables);
    // graphql-jit answers refused variables at once, with errors and no `data` (an executed
    // operation always has `data`, null included).
    if (result && !('then' in result) && result.errors && !('data' in result)) {
      return { errors: getVariableValues(schema, definitions, variables, { maxErrors: 50 }).errors ?? result.errors };
    }
    return result;
  };
}

/** How many compiled /graphql documents one process keeps (least recently used go first). */
export const COMPILED_DOCUMENTS = 1000;

type GatewayExecutor = NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>;
type GatewayRequest = Parameters<GatewayExecutor>[0];

/** A response of Apollo Server's `responseForOperation` hook, without any header of its own (never written to). */
const NO_HEADERS = new HeaderMap();

/**
 * graphql-jit on /graphql, in the two places Apollo Server lets something else execute: the
 * `responseForOperation` hook of a request listener and the executor of a gateway (with this
 * process's own schema and nothing federated). Apollo Server still parses, validates (with
 * the document limits) and caches the parsed and validated document per document text (its
 * document store, keyed by the text's hash), runs the plugins and formats errors.
 *
 * A document seen again is compiled once and kept in an LRU keyed by its hash and operation
 * name, so a repeated query skips graphql-js's per-field walk; a document graphql-jit cannot
 * compile runs on graphql-js's `execute`. The REST facade compiles its route documents with
 * `compileDocument` on each route's first request (src/rest/facade.ts).
 *
 * `respond` (the listener's `responseForOperation`) executes a resolved operation and, when the
 * result has no error, answers it as it is: the answer Apollo Server's executor path would
 * build, without that path's per-request work (a gateway request context, content
 * negotiation for incremental delivery, error formatting of no errors). A result with errors
 * is kept for the gateway's `executor`, which Apollo Server calls next and which hands it over
 * unchanged, so every error is presented by Apollo Server as before (codes, BAD_USER_INPUT
 * for variables, status 400). A request whose operation Apollo Server did not resolve (an
 * `operationName` the document does not define) is executed by the executor alone, on
 * graphql-js, which reports it.
 */
export function jitExecution(schema: GraphQLSchema, max = COMPILED_DOCUMENTS) {
  // A document's first run is graphql-js's; it is compiled when it comes again. Compiling costs
  // 0.3 ms for a list query and about 9 ms for one at the document limits, so a stream of
  // documents each sent once (an explorer, or a caller varying an alias) never pays for it.
  const compiled = new LRUCache<string, RunDocument | 'seen'>({ max });
  /** Results with errors that `respond` ran, for the executor of the same request (by its context object). */
  const ran = new WeakMap<object, ExecutionResult>();

  const run = (
    queryHash: string,
    document: DocumentNode,
    operationType: string | undefined,
    operationName: string | undefined,
    contextValue: unknown,
    variables: Record<string, unknown> | undefined,
  ): Promise<ExecutionResult> => {
    // No name (the document's only operation) and a name are kept apart: "" is no name of GraphQL's.
    const key = operationName === undefined ? queryHash : `${queryHash}\u0000${operationName}`;
    let runDocument = compiled.get(key);
    if (runDocument === undefined) {
      compiled.set(key, 'seen');
      runDocument = compileDocument(schema, document, operationName, false);
    } else if (runDocument === 'seen') {
      compiled.set(key, (runDocument = compileDocument(schema, document, operationName)));
    }
    const execute = runDocument;
    return inOperationSpan(operationType ?? 'query', operationName, otelContext.active(), () => execute(contextValue, variables ?? {}));
  };

  const respond = async (requestContext: GraphQLRequestContextResponseForOperation<Context>): Promise<GraphQLResponse | null> => {
    const { operation, operationName, queryHash, document, contextValue, request } = requestContext;
    if (!operation || queryHash === undefined) return null;
    const result = await run(queryHash, document, operation.operation, operationName ?? undefined, contextValue, request.variables);
    if (result.errors) {
      ran.set(contextValue, result);
      return null;
    }
    return { http: { headers: NO_HEADERS }, body: { kind: 'single', singleResult: result } };
  };

  const executor: GatewayExecutor = async (request: GatewayRequest) => {
    let result = ran.get(request.context);
    if (result) ran.delete(request.context);
    else if (!request.operation) {
      // Apollo Server resolved no operation (an operationName the document does not define, ""
      // included): graphql-js reports "Unknown operation" (a 400). Never a compiled document:
      // graphql-jit takes a "" name for none and would run the document's only operation.
      result = await execute({
        schema,
        document: request.document,
        contextValue: request.context,
        variableValues: request.request.variables,
        operationName: request.request.operationName ?? undefined,
      });
    } else {
      result = await run(request.queryHash, request.document, request.operation.operation, request.operationName ?? undefined, request.context, request.request.variables);
    }
    // graphql-jit leaves `extensions` undefined on a resolver's error; Apollo Server reads
    // `extensions.code` of every error (graphql-js always sets an object).
    if (result.errors) result = { ...result, errors: result.errors.map((e) => (e.extensions ? e : Object.create(e, { extensions: { value: {}, enumerable: true } }))) };
    return result as Awaited<ReturnType<GatewayExecutor>>;
  };

  const gateway: Gateway = {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    async load() {
      return { executor };
    },
    async stop() {},
  };
  /** How many documents are kept, compiled or seen once (at most `max`). */
  const kept = () => compiled.size;
  return { gateway, respond, kept };
}
