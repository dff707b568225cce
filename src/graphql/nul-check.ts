import { GraphQLError, Kind, visit, type ASTNode, type OperationDefinitionNode, type ValueNode } from 'graphql';
import type { FieldIssue } from '../errors/app-error';
import { KINDS } from '../errors/classify';

const NUL = '\u0000';
const DETAIL = 'must not contain the character U+0000 (NUL): PostgreSQL cannot store it in text';

function inValue(value: unknown, path: (string | number)[], issues: FieldIssue[]): void {
  if (typeof value === 'string') {
    if (value.includes(NUL)) issues.push({ path, detail: `${String(path[path.length - 1] ?? 'The value')} ${DETAIL}` });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => inValue(v, [...path, i], issues));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes(NUL)) issues.push({ path: [...path, k], detail: `A field name ${DETAIL}` });
      inValue(v, [...path, k], issues);
    }
  }
}

function inLiteral(node: ValueNode, path: (string | number)[], issues: FieldIssue[]): void {
  if (node.kind === Kind.STRING) {
    if (node.value.includes(NUL)) issues.push({ path, detail: `${String(path[path.length - 1])} ${DETAIL}` });
  } else if (node.kind === Kind.LIST) {
    node.values.forEach((v, i) => inLiteral(v, [...path, i], issues));
  } else if (node.kind === Kind.OBJECT) {
    for (const f of node.fields) inLiteral(f.value, [...path, f.name.value], issues);
  }
}

/**
 * Every string of an operation's input that holds U+0000, which PostgreSQL cannot store in
 * text: variables (REST bodies, CSV cells and query values arrive as variables) and string
 * literals in the document. One check for both APIs, before anything runs: the REST facade
 * calls it before executing its operation, the GraphQL server before executing the document.
 * Paths start with the variable or argument name, like every FieldIssue.
 */
export function nulIssues(operation: OperationDefinitionNode | ASTNode | undefined, variables: Record<string, unknown> | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const [name, value] of Object.entries(variables ?? {})) inValue(value, [name], issues);
  if (operation) {
    visit(operation, {
      Argument(node) {
        inLiteral(node.value, [node.name.value], issues);
        return false;
      },
    });
  }
  return issues;
}

/**
 * The refusal of a GraphQL operation whose input holds U+0000: one VALIDATION error naming
 * each field, or undefined. `extensions`: what the transport adds (HTTP: its status).
 */
export function nulError(
  operation: OperationDefinitionNode | undefined,
  variables: Record<string, unknown> | undefined,
  extensions: Record<string, unknown> = {},
): GraphQLError | undefined {
  const issues = nulIssues(operation, variables);
  if (!issues.length) return undefined;
  const message = issues.length === 1 ? issues[0].detail : 'The request has invalid values';
  return new GraphQLError(message, { extensions: { code: KINDS.VALIDATION.graphql, errors: issues, ...extensions } });
}
