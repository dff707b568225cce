import { ApolloServer, type ApolloServerPlugin, type GraphQLRequestListener } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Context } from '../context';
import { appErrorOf } from '../errors/app-error';
import { classify, KINDS, RETRY_AFTER_SECONDS } from '../errors/classify';
import type { Logger } from '../logger';
import { queryLimitRules, type QueryLimits } from './limits';
import { jitExecution } from './jit';
import { nulError } from './nul-check';

/**
 * Errors are presented as `classify` (errors/classify.ts) says; anything unexpected is
 * logged and reported without internals (no stack, SQL or message of the underlying
 * exception). Errors graphql-js and Apollo raise themselves (parse, validation, variable
 * coercion) keep their own codes. graphql-ws messages are formatted by it too
 * (graphql/subscriptions.ts).
 */
export function formatError(logger: Logger, hideSuggestions: boolean) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = (error as GraphQLError)?.originalError;
    if (!appErrorOf(error) && (!original || original instanceof GraphQLError)) {
      // Apollo Server's own refusals that carry a 4xx status but no code (an automatic persisted
      // query whose hash does not match its document) would read as INTERNAL_SERVER_ERROR.
      const http = (error as GraphQLError)?.extensions?.http as { status?: number } | undefined;
      if (formatted.extensions?.code === KINDS.INTERNAL.graphql && !original && http?.status && http.status < 500) {
        formatted = { ...formatted, extensions: { ...formatted.extensions, code: ApolloServerErrorCode.BAD_REQUEST } };
      }
      // Without introspection, "Did you mean ...?" would reveal the schema field by field
      // (what graphql-armor's block-field-suggestions does, for Apollo's formatError).
      return hideSuggestions ? { ...formatted, message: formatted.message.replace(/ ?Did you mean .+\?/g, '').trim() } : formatted;
    }
    const c = classify(error);
    if (c.code === 'INTERNAL') {
      logger.error({ err: original ?? error, path: formatted.path }, 'graphql resolver failed');
      return { message: 'Internal server error', path: formatted.path, extensions: { code: KINDS.INTERNAL.graphql } };
    }
    const extensions = { code: KINDS[c.code].graphql, ...(c.issues.length ? { errors: c.issues } : {}) };
    return { message: c.detail, ...(formatted.locations ? { locations: formatted.locations } : {}), path: formatted.path, extensions };
  };
}

/**
 * The service's own request hooks, in one listener shared by every request (none keeps
 * per-request state in it): Apollo Server awaits each plugin's `requestDidStart` and then
 * every listener's hooks per request, so one plugin answering one prepared listener costs one
 * resolved promise instead of a closure and a promise per plugin and hook. `extra`: more
 * listeners of the same kind (read routing, src/graphql/read-routing.ts), run first.
 */
function requestHooks(extra: GraphQLRequestListener<Context>[], respond?: GraphQLRequestListener<Context>['responseForOperation']): ApolloServerPlugin<Context> {
  const listener: GraphQLRequestListener<Context> = {
    // graphql-jit answers a resolved operation here (src/graphql/jit.ts, `jitExecution`).
    ...(respond ? { responseForOperation: respond } : {}),
    async didResolveOperation(requestContext) {
      const { operation, operationName, contextValue, request } = requestContext;
      // The request's metrics and log line carry the operation's type and name.
      if (operation && contextValue.operation) Object.assign(contextValue.operation, { type: operation.operation, name: operationName ?? undefined });
      for (const l of extra) await l.didResolveOperation?.(requestContext);
      // U+0000 anywhere in the input: a 400 naming each field before anything runs (the REST
      // facade and graphql-ws run the same check; the document's literals are checked once per
      // parsed document, src/graphql/nul-check.ts).
      const error = nulError(operation, request.variables, { http: { status: KINDS.VALIDATION.status } });
      if (error) throw error;
    },
    async willSendResponse(requestContext) {
      // When nothing could be answered because the store is busy or down, say so with 503 and Retry-After, as REST does.
      const { response } = requestContext;
      if (response.body.kind === 'single') {
        const { errors, data } = response.body.singleResult;
        // Nothing answered: data null, or every root field null (a nullable root field that failed).
        if (errors?.length && (!data || Object.values(data).every((v) => v == null)) && errors.every((e) => e.extensions?.code === KINDS.UNAVAILABLE.graphql)) {
          response.http.status = KINDS.UNAVAILABLE.status;
          response.http.headers.set('retry-after', String(RETRY_AFTER_SECONDS));
        }
      }
      for (const l of extra) await l.willSendResponse?.(requestContext);
    },
  };
  const started = Promise.resolve(listener);
  return { requestDidStart: () => started };
}

export function createApollo(
  schema: GraphQLSchema,
  logger: Logger,
  sandbox: boolean,
  limits: QueryLimits,
  jit = true,
  extra: GraphQLRequestListener<Context>[] = [],
): ApolloServer<Context> {
  // Execution by graphql-jit, documents compiled once (src/graphql/jit.ts); GRAPHQL_JIT=false: graphql-js.
  const execution = jit ? jitExecution(schema) : undefined;
  const plugins: ApolloServerPlugin<Context>[] = [
    requestHooks(extra, execution?.respond),
    // No HTTP caching of GraphQL answers here; the plugin would otherwise wrap every field.
    ApolloServerPluginCacheControlDisabled(),
    // The browser page is src/graphql/ide.ts (Sandbox with an offline GraphiQL fallback).
    ApolloServerPluginLandingPageDisabled(),
    // Apollo Server installs its federation trace plugin otherwise, which is asked on every request.
    ApolloServerPluginInlineTraceDisabled(),
  ];
  return new ApolloServer<Context>({
    ...(execution ? { gateway: execution.gateway } : { schema }),
    introspection: sandbox,
    includeStacktraceInErrorResponses: false,
    formatError: formatError(logger, !sandbox),
    validationRules: queryLimitRules(limits),
    // graphql-js stops parsing a document longer than this many tokens (a 400 naming the limit).
    parseOptions: { maxTokens: limits.maxTokens },
    // One operation per HTTP request: batching would multiply the cost limit.
    allowBatchedHttpRequests: false,
    plugins,
  });
}
