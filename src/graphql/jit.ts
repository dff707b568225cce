import type { ApolloServerOptionsWithGateway } from '@apollo/server';
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
 * schema's own. Variables are coerced by graphql-js first, so a bad variable is the error
 * graphql-js gives (its message, and the node that lets Apollo Server call it BAD_USER_INPUT).
 * With `jit` false, or for a document graphql-jit cannot compile, graphql-js's `execute` runs.
 */
export function compileDocument(schema: GraphQLSchema, document: DocumentNode, operationName?: string, jit = true): RunDocument {
  const plain: RunDocument = (contextValue, variables) => execute({ schema, document, contextValue, variableValues: variables, operationName });
  const query = jit ? compileQuery(schema, document, operationName) : undefined;
  if (!query || !isCompiledQuery(query)) return plain;
  const definitions = getOperationAST(document, operationName)?.variableDefinitions ?? [];
  return (contextValue, variables) => {
    if (definitions.length) {
      const coerced = getVariableValues(schema, definitions, variables, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors };
    }
    return query.query(undefined, contextValue, variables);
  };
}

/** How many compiled /graphql documents one process keeps (least recently used go first). */
export const COMPILED_DOCUMENTS = 1000;

/**
 * Apollo Server's executor replaced by graphql-jit, through the one hook Apollo Server offers
 * for it (the gateway interface, with this process's own schema and nothing federated).
 * Apollo Server still parses, validates (with the document limits), runs the plugins and
 * formats errors; it caches parsed and validated documents by their hash. What changes is
 * execution: a document seen again is compiled once and kept in an LRU keyed by its hash and
 * operation name, so a repeated query skips graphql-js's per-field walk. A document graphql-jit cannot
 * compile runs on graphql-js's `execute`. The REST facade compiles its route documents with
 * `compileDocument` on each route's first request (src/rest/facade.ts).
 */
export function jitGateway(schema: GraphQLSchema, max = COMPILED_DOCUMENTS): Gateway {
  // A document's first run is graphql-js's; it is compiled when it comes again. Compiling costs
  // 0.3 ms for a list query and about 9 ms for one at the document limits, so a stream of
  // documents each sent once (an explorer, or a caller varying an alias) never pays for it.
  const compiled = new LRUCache<string, RunDocument | 'seen'>({ max });
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    async load() {
      return {
        executor: async (request) => {
          // The resolved operation's name; when Apollo resolved none (an operationName the document
          // does not define), the requested one, so execution reports "Unknown operation" (a 400)
          // instead of running the document's only operation.
          const operationName = (request.operation ? request.operationName : request.request.operationName) ?? undefined;
          const key = `${request.queryHash}\u0000${operationName ?? ''}`;
          let run = compiled.get(key);
          if (run === undefined) {
            compiled.set(key, 'seen');
            run = compileDocument(schema, request.document, operationName, false);
          } else if (run === 'seen') {
            compiled.set(key, (run = compileDocument(schema, request.document, operationName)));
          }
          const execute = run;
          let result = await inOperationSpan(request.operation?.operation ?? 'query', operationName, otelContext.active(), () =>
            execute(request.context, request.request.variables ?? {}),
          );
          // graphql-jit leaves `extensions` undefined on a resolver's error; Apollo Server reads
          // `extensions.code` of every error (graphql-js always sets an object).
          if (result.errors) result = { ...result, errors: result.errors.map((e) => (e.extensions ? e : Object.create(e, { extensions: { value: {}, enumerable: true } }))) };
          return result as Awaited<ReturnType<NonNullable<Awaited<ReturnType<Gateway['load']>>['executor']>>>;
        },
      };
    },
    async stop() {},
  };
}
