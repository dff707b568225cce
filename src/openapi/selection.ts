import {
  GraphQLEnumType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  isAbstractType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { enumSchema, orNull, scalarSchema, type JsonSchema } from './json-schema';

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
}

interface Collected {
  name: string;
  nodes: FieldNode[];
  /** Under @skip/@include: the key may be missing from the result. */
  conditional: boolean;
}

const isConditional = (node: { directives?: readonly { name: { value: string } }[] }) =>
  (node.directives ?? []).some((d) => d.name.value === 'skip' || d.name.value === 'include');

/** Does a fragment typed `condition` apply to a value of the concrete type `object`? */
function applies(walk: Walk, condition: string | undefined, object: GraphQLObjectType): boolean {
  if (!condition || condition === object.name) return true;
  const type = walk.schema.getType(condition);
  return !!type && isAbstractType(type) && walk.schema.isSubType(type, object);
}

/** GraphQL's CollectFields for one concrete type: response keys in order, same-key nodes merged. */
function collect(walk: Walk, object: GraphQLObjectType, set: SelectionSetNode, out = new Map<string, Collected>(), cond = false) {
  for (const sel of set.selections) {
    const conditional = cond || isConditional(sel);
    if (sel.kind === Kind.FIELD) {
      const key = sel.alias?.value ?? sel.name.value;
      const seen = out.get(key);
      if (seen) {
        seen.nodes.push(sel);
        seen.conditional &&= conditional;
      } else out.set(key, { name: sel.name.value, nodes: [sel], conditional });
    } else if (sel.kind === Kind.INLINE_FRAGMENT) {
      if (applies(walk, sel.typeCondition?.name.value, object)) collect(walk, object, sel.selectionSet, out, conditional);
    } else {
      const fragment = walk.fragments[sel.name.value];
      if (fragment && applies(walk, fragment.typeCondition.name.value, object)) {
        collect(walk, object, fragment.selectionSet, out, conditional);
      }
    }
  }
  return out;
}

function objectSchema(walk: Walk, object: GraphQLObjectType, sets: SelectionSetNode[]): JsonSchema {
  const fields = new Map<string, Collected>();
  for (const set of sets) collect(walk, object, set, fields);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, { name, nodes, conditional }] of fields) {
    if (name === '__typename') {
      properties[key] = { type: 'string', enum: [object.name] };
    } else {
      const def = object.getFields()[name];
      const subSets = nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
      const schema = outputSchema(walk, def.type, subSets);
      properties[key] = def.description ? { ...schema, description: def.description } : schema;
    }
    // GraphQL always writes every selected field (null when nullable), so all are required.
    if (!conditional) required.push(key);
  }
  return { type: 'object', additionalProperties: false, ...(required.length ? { required } : {}), properties };
}

function compositeSchema(walk: Walk, type: GraphQLCompositeType, sets: SelectionSetNode[]): JsonSchema {
  const objects = isAbstractType(type) ? walk.schema.getPossibleTypes(type) : [type as GraphQLObjectType];
  const variants = objects.map((o) => objectSchema(walk, o, sets));
  const distinct = [...new Map(variants.map((v) => [JSON.stringify(v), v])).values()];
  return distinct.length === 1 ? distinct[0] : { anyOf: distinct };
}

/** JSON Schema of what `execute` returns for a field of `type` with these selections. */
export function outputSchema(walk: Walk, type: GraphQLOutputType, sets: SelectionSetNode[]): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullOutput(walk, type.ofType, sets);
  return orNull(nonNullOutput(walk, type, sets));
}

function nonNullOutput(walk: Walk, type: GraphQLOutputType, sets: SelectionSetNode[]): JsonSchema {
  if (type instanceof GraphQLNonNull) return nonNullOutput(walk, type.ofType, sets);
  if (type instanceof GraphQLList) return { type: 'array', items: outputSchema(walk, type.ofType, sets) };
  if (type instanceof GraphQLScalarType) return scalarSchema(type);
  if (type instanceof GraphQLEnumType) return enumSchema(type);
  return compositeSchema(walk, type, sets);
}

/** The schema of the operation's root field aliased `result`: what the facade answers with. */
export function resultSchema(schema: GraphQLSchema, document: DocumentNode): JsonSchema {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  let op: OperationDefinitionNode | undefined;
  for (const def of document.definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments[def.name.value] = def;
    if (def.kind === Kind.OPERATION_DEFINITION) op ??= def;
  }
  const root = op && schema.getRootType(op.operation);
  const field = op?.selectionSet.selections.find(
    (s): s is FieldNode => s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === 'result',
  );
  if (!root || !field) throw new Error(`Operation ${op?.name?.value ?? '?'} has no root field aliased "result"`);
  const def = root.getFields()[field.name.value];
  return outputSchema({ schema, fragments }, def.type, field.selectionSet ? [field.selectionSet] : []);
}
