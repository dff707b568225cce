import {
  GraphQLError,
  Kind,
  type ASTVisitor,
  type FieldNode,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

export interface QueryLimits {
  maxDepth: number;
  maxCost: number;
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
 * Rejects documents nested deeper than `maxDepth` or estimated to touch more than
 * `maxCost` records, before any resolver runs. Introspection is exempt (`__schema`).
 */
export function queryLimitsRule(limits: QueryLimits) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const walk = (set: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; cost: number } => {
      let maxDepth = depth;
      let cost = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          if (sel.name.value.startsWith('__')) continue;
          const inner = sel.selectionSet ? walk(sel.selectionSet, depth + 1, seen) : { depth, cost: 0 };
          maxDepth = Math.max(maxDepth, inner.depth);
          cost += 1 + factorOf(sel) * inner.cost;
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          const inner = walk(sel.selectionSet, depth, seen);
          maxDepth = Math.max(maxDepth, inner.depth);
          cost += inner.cost;
        } else {
          const frag = fragments.get(sel.name.value);
          if (!frag || seen.has(frag.name.value)) continue; // cycles are reported by graphql itself
          const inner = walk(frag.selectionSet, depth, new Set([...seen, frag.name.value]));
          maxDepth = Math.max(maxDepth, inner.depth);
          cost += inner.cost;
        }
        if (maxDepth > limits.maxDepth || cost > limits.maxCost) break;
      }
      return { depth: maxDepth, cost };
    };
    return {
      OperationDefinition(node) {
        const { depth, cost } = walk(node.selectionSet, 1, new Set());
        if (depth > limits.maxDepth) {
          context.reportError(new GraphQLError(`Query is nested ${depth} levels deep; the maximum is ${limits.maxDepth}`, { nodes: [node] }));
        } else if (cost > limits.maxCost) {
          context.reportError(new GraphQLError(`Query cost ${cost} exceeds the maximum of ${limits.maxCost}`, { nodes: [node] }));
        }
      },
    };
  };
}
