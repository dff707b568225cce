import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Context } from '../context';
import { appErrorOf } from '../errors/app-error';
import { isUnavailable } from '../errors/unavailable';
import type { Logger } from '../logger';
import { queryLimitsRule, type QueryLimits } from './limits';

/**
 * Errors keep their code; anything unexpected is logged and reported without
 * internals (no stack, SQL or message of the underlying exception).
 */
function formatError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const appError = appErrorOf(error);
    if (appError) return { ...formatted, extensions: { ...appError.extensions } };
    const original = (error as GraphQLError)?.originalError;
    if (!original || original instanceof GraphQLError) return formatted;
    if (isUnavailable(original)) {
      return { message: 'The service is temporarily unavailable', path: formatted.path, extensions: { code: 'UNAVAILABLE' } };
    }
    logger.error({ err: original, path: formatted.path }, 'graphql resolver failed');
    return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };
}

/** When the store is down and nothing could be answered, say so with 503 as REST does. */
const unavailableAs503: ApolloServerPlugin<Context> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        if (response.body.kind !== 'single') return;
        const { errors, data } = response.body.singleResult;
        if (errors?.length && !data && errors.every((e) => e.extensions?.code === 'UNAVAILABLE')) response.http.status = 503;
      },
    };
  },
};

export function createApollo(schema: GraphQLSchema, logger: Logger, sandbox: boolean, limits: QueryLimits): ApolloServer<Context> {
  const plugins: ApolloServerPlugin<Context>[] = [
    unavailableAs503,
    // No HTTP caching of GraphQL answers here; the plugin would otherwise wrap every field.
    ApolloServerPluginCacheControlDisabled(),
    // The browser page is src/graphql/ide.ts (Sandbox with an offline GraphiQL fallback).
    ApolloServerPluginLandingPageDisabled(),
  ];
  return new ApolloServer<Context>({
    schema,
    introspection: sandbox,
    includeStacktraceInErrorResponses: false,
    formatError: formatError(logger),
    validationRules: [queryLimitsRule(limits)],
    // One operation per HTTP request: batching would multiply the cost limit.
    allowBatchedHttpRequests: false,
    plugins,
  });
}
