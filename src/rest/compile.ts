import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  Kind,
  getNamedType,
  parse,
  typeFromAST,
  validate,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { RouteSpec } from './route';
import { filterBinding, type FilterBinding } from './filter';
import { untraced } from '../observability/spans';

export interface CompiledRoute extends RouteSpec {
  parsed: DocumentNode;
  variableTypes: Map<string, GraphQLInputType>;
  /** For list routes: the sortable field names, read from the schema's sort enum. */
  sortFields: string[];
  /** For list routes whose operation takes `$filter`: the query parameters it is bound from. */
  filter?: FilterBinding;
}

/** Parses and validates every facade document once, at boot; a bad one stops the service. */
export function compileRoutes(schema: GraphQLSchema, specs: RouteSpec[]): CompiledRoute[] {
  return untraced(() => specs.map((spec) => {
    const parsed = parse(spec.document);
    const errors = validate(schema, parsed);
    if (errors.length) {
      throw new Error(`Route ${spec.operationId}: ${errors.map((e) => e.message).join('; ')}`);
    }
    const op = parsed.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
    const variableTypes = new Map<string, GraphQLInputType>();
    for (const def of op.variableDefinitions ?? []) {
      variableTypes.set(def.variable.name.value, typeFromAST(schema, def.type as never) as GraphQLInputType);
    }
    const bound = [...Object.keys(spec.refs ?? {}), ...(spec.body ? [spec.body] : []), ...(spec.list ? ['limit', 'skip', 'sort'] : []), ...(spec.cursor ? ['limit', ...Object.keys(spec.cursor)] : [])];
    for (const name of bound) {
      if (!variableTypes.has(name)) throw new Error(`Route ${spec.operationId}: binds $${name}, which the document does not declare`);
    }
    let sortFields: string[] = [];
    if (spec.list) {
      const sortInput = getNamedType(variableTypes.get('sort')!) as GraphQLInputObjectType;
      const fieldEnum = getNamedType(sortInput.getFields().field.type) as GraphQLEnumType;
      sortFields = fieldEnum.getValues().map((v) => v.name);
    }
    const filter = spec.list ? filterBinding(variableTypes.get('filter')) : undefined;
    return { ...spec, parsed, variableTypes, sortFields, ...(filter ? { filter } : {}) };
  }));
}
