import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Context } from '../context';
import { appErrorOf } from '../errors/app-error';
import { classify, KINDS, RETRY_AFTER_SECONDS } from '../errors/classify';
import type { Logger } from '../logger';
import { queryLimitRules, type QueryLimits } from './limits';
import { jitGateway } from './jit';
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

/** When nothing could be answered because the store is busy or down, say so with 503 and Retry-After, as REST does. */
const unavailableAs503: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        const { errors, data } = response.body.singleResult;
        // Nothing answered: data null, or every root field null (a nullable root field that failed).
        const nothing = !data || Object.values(data).every((v) => v == null);
        if (errors?.length && nothing && errors.every((e) => e.extensions?.code === KINDS.UNAVAILABLE.graphql)) {
          response.http.status = KINDS.UNAVAILABLE.status;
          response.http.headers.set('retry-after', String(RETRY_AFTER_SECONDS));
        }
      },
    };
  },
};

/** U+0000 anywhere in the input: a 400 naming each field before anything runs (the REST facade and graphql-ws run the same check). */
const refuseNul: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, request }) {
        const error = nulError(operation, request.variables, { http: { status: KINDS.VALIDATION.status } });
        if (error) throw error;
      },
    };
  },
};

/** Notes the resolved operation in the context: the request's metrics and log line carry its type. */
const noteOperation: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, operationName, contextValue }) {
        if (operation && contextValue.operation) Object.assign(contextValue.operation, { type: operation.operation, name: operationName ?? undefined });
      },
    };
  },
};

export function createApollo(
  schema: GraphQLSchema,
  logger: Logger,
  sandbox: boolean,
  limits: QueryLimits,
  jit = true,
  extra: ApolloServerPlugin<Context>[] = [],
): ApolloServer<Context> {
  const plugins: ApolloServerPlugin<Context>[] = [
    ...extra,
    noteOperation,
    refuseNul,
    unavailableAs503,
    // No HTTP caching of GraphQL answers here; the plugin would otherwise wrap every field.
    ApolloServerPluginCacheControlDisabled(),
    // The browser page is src/graphql/ide.ts (Sandbox with an offline GraphiQL fallback).
    ApolloServerPluginLandingPageDisabled(),
  ];
  return new ApolloServer<Context>({
    // Execution by graphql-jit, documents compiled once (src/graphql/jit.ts); GRAPHQL_JIT=false: graphql-js.
    ...(jit ? { gateway: jitGateway(schema) } : { schema }),
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
