import { GraphQLError, Kind, visit, type ASTNode, type OperationDefinitionNode, type ValueNode } from 'graphql';
import type { FieldIssue } from '../errors/app-error';
import { KINDS } from '../errors/classify';

const NUL = '\u0000';
const DETAIL = 'must not contain the character U+0000 (NUL): PostgreSQL cannot store it in text';
const SURROGATE = 'must be valid Unicode text: it holds an unpaired surrogate (a lone \\uD800-\\uDFFF escape), which cannot be stored';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a client's string, or undefined: U+0000, or an unpaired surrogate (not UTF-8 encodable). */
function badText(value: string): string | undefined {
  if (value.includes(NUL)) return DETAIL;
  if (LONE_SURROGATE.test(value)) return SURROGATE;
  return undefined;
}

/** A path as a linked list, made an array only for an issue (a deep value would copy it at every level). */
type Path = { prev: Path; key: string | number } | undefined;

function toArray(path: Path): (string | number)[] {
  const out: (string | number)[] = [];
  for (let p = path; p; p = p.prev) out.unshift(p.key);
  return out;
}

/** Iterative (its own stack): a client's value may nest far deeper than the call stack allows. */
function inValue(root: unknown, rootKey: string, issues: FieldIssue[]): void {
  const stack: { value: unknown; path: Path }[] = [{ value: root, path: { prev: undefined, key: rootKey } }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'string') {
      const bad = badText(value);
      if (bad) issues.push({ path: toArray(path), detail: `${String(path?.key ?? 'The value')} ${bad}` });
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: { prev: path, key: i } });
    } else if (value && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i];
        const bad = badText(k);
        if (bad) issues.push({ path: toArray({ prev: path, key: k }), detail: `A field name ${bad}` });
        stack.push({ value: v, path: { prev: path, key: k } });
      }
    }
  }
}

/** The same over a document's literals, also iterative. */
function inLiteral(root: ValueNode, rootKey: string, issues: FieldIssue[]): void {
  const stack: { node: ValueNode; path: Path }[] = [{ node: root, path: { prev: undefined, key: rootKey } }];
  while (stack.length) {
    const { node, path } = stack.pop()!;
    if (node.kind === Kind.STRING) {
      const bad = badText(node.value);
      if (bad) issues.push({ path: toArray(path), detail: `${String(path?.key)} ${bad}` });
    } else if (node.kind === Kind.LIST) {
      for (let i = node.values.length - 1; i >= 0; i--) stack.push({ node: node.values[i], path: { prev: path, key: i } });
    } else if (node.kind === Kind.OBJECT) {
      for (let i = node.fields.length - 1; i >= 0; i--) stack.push({ node: node.fields[i].value, path: { prev: path, key: node.fields[i].name.value } });
    }
  }
}

/**
 * Every string of an operation's input that holds U+0000, which PostgreSQL cannot store in
 * text, or an unpaired surrogate (JSON's `"\ud800"`), which has no UTF-8 form: variables (REST bodies, CSV cells and query values arrive as variables) and string
 * literals in the document. One check for both APIs, before anything runs: the REST facade
 * calls it before executing its operation, the GraphQL server before executing the document.
 * Paths start with the variable or argument name, like every FieldIssue.
 */
export function nulIssues(operation: OperationDefinitionNode | ASTNode | undefined, variables: Record<string, unknown> | undefined): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (variables) for (const name in variables) if (Object.hasOwn(variables, name)) inValue(variables[name], name, issues);
  if (operation) for (const issue of literalIssues(operation)) issues.push({ ...issue, path: [...issue.path] });
  return issues;
}

/**
 * The issues of a document's own literals, found once per parsed operation: Apollo Server and
 * graphql-ws keep a parsed document per document text (Apollo's document store), so a document
 * sent again brings the same node and only its variables are walked per request.
 */
const LITERAL_ISSUES = new WeakMap<ASTNode, readonly FieldIssue[]>();

function literalIssues(operation: ASTNode): readonly FieldIssue[] {
  let found = LITERAL_ISSUES.get(operation);
  if (found === undefined) {
    const issues: FieldIssue[] = [];
    visit(operation, {
      Argument(node) {
        inLiteral(node.value, node.name.value, issues);
        return false;
      },
    });
    LITERAL_ISSUES.set(operation, (found = issues));
  }
  return found;
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
