import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
  maxAliases: number;
  maxRootFields: number;
  maxDirectives: number;
  /** Lexical tokens: graphql-js's parser option `maxTokens`, given by whoever parses. */
  maxTokens: number;
}

/**
 * graphql-armor's rules throw by default, which would end the request as a 500; these
 * report instead, so a document over a limit is a 400 validation error naming the limit.
 */
const report = {
  exposeLimits: true,
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, '')))],
};

/**
 * The refusal of a document whose brackets, braces or parentheses nest deeper than `max`
 * (the service's JSON_MAX_DEPTH), or undefined. graphql-js's parser recurses once per level:
 * a few thousand levels overflow its stack, and a thousand are parsed and validated only to
 * be refused for depth afterwards. One pass over the text, strings and comments skipped,
 * before anything parses it (over HTTP and over graphql-ws).
 */
export function nestingError(source: string, max: number): GraphQLError | undefined {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x28) {
      if (++depth > max) {
        return new GraphQLError(`The document nests brackets, braces or parentheses more than ${max} levels deep (JSON_MAX_DEPTH).`, {
          extensions: { code: 'GRAPHQL_PARSE_FAILED' },
        });
      }
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      depth--;
    } else if (c === 0x23) {
      // A comment, to the end of the line.
      while (i + 1 < source.length && source[i + 1] !== '\n' && source[i + 1] !== '\r') i++;
    } else if (c === 0x22) {
      if (source.startsWith('"""', i)) {
        const end = source.indexOf('"""', i + 3);
        // A block string's only escape is \""" (skip past escaped closers).
        let at = end;
        while (at > 0 && source[at - 1] === '\\') at = source.indexOf('"""', at + 3);
        if (at < 0) return undefined; // unterminated: the parser's own error
        i = at + 2;
      } else {
        i++;
        while (i < source.length && source[i] !== '"' && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
      }
    }
  }
  return undefined;
}

/**
 * Every limit a GraphQL document meets before any resolver runs, over HTTP and over
 * graphql-ws alike: aliases, depth and directives from graphql-armor (maintained, made for
 * Apollo Server); the number of root fields and the page-aware cost are this service's own
 * (armor's cost model does not know that a list field costs its `limit`). The token limit
 * is graphql-js's own parser option (`parseOptions.maxTokens` in server.ts, `parse` in
 * graphql/subscriptions.ts).
 */
export function documentLimitRules(limits: QueryLimits): ValidationRule[] {
  return [
    maxAliasesRule({ n: limits.maxAliases, ...report }) as unknown as ValidationRule,
    maxDepthRule({ n: limits.maxDepth, flattenFragments: true, ignoreIntrospection: true, ...report }) as unknown as ValidationRule,
    maxDirectivesRule({ n: limits.maxDirectives, ...report }) as unknown as ValidationRule,
    rootFieldsRule(limits.maxRootFields),
    queryLimitsRule(limits),
  ];
}

/** /graphql over HTTP: the document limits, and no subscriptions (those are served over graphql-ws). */
export function queryLimitRules(limits: QueryLimits): ValidationRule[] {
  return [...documentLimitRules(limits), noSubscriptionsRule];
}

/** A subscription sent over HTTP: a clear 400 instead of an execution failure. */
export const noSubscriptionsRule: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (node.operation === 'subscription') {
      context.reportError(
        new GraphQLError('Subscriptions are offered over WebSocket only (the graphql-ws protocol on /graphql), not over HTTP', { nodes: [node] }),
      );
    }
  },
});

/**
 * Each root field reaches the database on its own: `{ a: groups {..} b: groups {..} }` is
 * two queries. Counts distinct response names at the root (through fragments).
 */
export function rootFieldsRule(max: number): ValidationRule {
  return (context) => {
    const names = (set: SelectionSetNode, into: Set<string>, seen: Set<string>) => {
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (!sel.name.value.startsWith('__')) into.add((sel.alias ?? sel.name).value);
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          names(sel.selectionSet, into, seen);
        } else if (!seen.has(sel.name.value)) {
          seen.add(sel.name.value);
          const frag = context.getFragment(sel.name.value);
          if (frag) names(frag.selectionSet, into, seen);
        }
      }
      return into;
    };
    return {
      OperationDefinition(node) {
        const n = names(node.selectionSet, new Set(), new Set()).size;
        if (n > max) context.reportError(new GraphQLError(`Root fields limit of ${max} exceeded, found ${n}.`, { nodes: [node] }));
      },
    };
  };
}

/**
 * A paginated field costs its `limit` times what it selects; a limit given by a variable
 * is not known at validation time, so it counts as the maximum page (100).
 */
function factorOf(node: FieldNode): number {
  const arg = node.arguments?.find((a) => a.name.value === 'limit');
  if (!arg) return 1;
  return arg.value.kind === Kind.INT ? Math.max(1, Number(arg.value.value)) : 100;
}

/**
 * Rejects documents estimated to touch more than `maxCost` records, before any resolver
 * runs. Introspection is exempt (`__schema`).
 */
export function queryLimitsRule(limits: Pick<QueryLimits, 'maxCost'>): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const walk = (set: SelectionSetNode, seen: Set<string>): number => {
      let cost = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (sel.name.value.startsWith('__')) continue;
          cost += 1 + factorOf(sel) * (sel.selectionSet ? walk(sel.selectionSet, seen) : 0);
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          cost += walk(sel.selectionSet, seen);
        } else {
          const frag = fragments.get(sel.name.value);
          if (!frag || seen.has(frag.name.value)) continue; // cycles are reported by graphql itself
          cost += walk(frag.selectionSet, new Set([...seen, frag.name.value]));
        }
        if (cost > limits.maxCost) break;
      }
      return cost;
    };
    return {
      OperationDefinition(node) {
        const cost = walk(node.selectionSet, new Set());
        if (cost > limits.maxCost) {
          context.reportError(new GraphQLError(`Query cost ${cost} exceeds the maximum of ${limits.maxCost}`, { nodes: [node] }));
        }
      },
    };
  };
}
