import { EXAMPLE_IDS } from '../../common/rules';
import type { RouteSpec } from '../../rest/route';
import type { EventSource } from '../events/event-source';

/** An additional field as its GET answers it, and as its events carry it. */
const FIELD_FIELDS =
  'id name placeholder type icon { style unicode } isEditableByMember isMandatoryForMember isVisibleInApp orderNumber createdAt modifiedAt';
const FIELD = `fragment AdditionalFieldFields on AdditionalField { ${FIELD_FIELDS} }`;
export const additionalFieldEvents: EventSource = { resource: 'additional_field', scope: 'additional_fields', entity: 'AdditionalField', fields: FIELD_FIELDS };
// Additional fields are addressed by the service id only, no `key` (docs/api.md, Addressing).
const ref = { ref: { param: 'identifier', keyParam: null, example: EXAMPLE_IDS.additionalField } };

export const additionalFieldRoutes: RouteSpec[] = [
  {
    operationId: 'getAdditionalFields',
    summary: 'Get additional fields',
    method: 'GET',
    path: '/additional_fields',
    resource: 'additional_fields',
    idOnly: true,
    status: 200,
    list: true,
    response: { name: 'ApiAdditionalFieldsResponse', item: 'ApiAdditionalFieldResponse' },
    document: `query getAdditionalFields($limit: Int, $skip: Int, $sort: [AdditionalFieldSort!], $modifiedSince: DateTimeISO) {
      result: additionalFields(limit: $limit, skip: $skip, sort: $sort, modifiedSince: $modifiedSince) { results { ...AdditionalFieldFields } limit skip size hasNextPage }
    } ${FIELD}`,
  },
  {
    operationId: 'addAdditionalField',
    summary: 'Add additional field',
    method: 'POST',
    path: '/additional_fields',
    resource: 'additional_fields',
    idOnly: true,
    status: 201,
    body: 'input',
    response: { name: 'ApiInsertResponse' },
    document: `mutation addAdditionalField($input: CreateAdditionalFieldInput!) {
      result: createAdditionalField(input: $input) { id externalId }
    }`,
  },
  {
    operationId: 'getAdditionalField',
    summary: 'Get additional field',
    method: 'GET',
    path: '/additional_fields/:identifier',
    resource: 'additional_fields',
    idOnly: true,
    status: 200,
    refs: ref,
    response: { name: 'ApiAdditionalFieldResponse' },
    document: `query getAdditionalField($ref: AdditionalFieldRef!) { result: additionalField(ref: $ref) { ...AdditionalFieldFields } } ${FIELD}`,
  },
  {
    operationId: 'updateAdditionalField',
    summary: 'Update additional field',
    method: 'PATCH',
    path: '/additional_fields/:identifier',
    resource: 'additional_fields',
    idOnly: true,
    status: 204,
    refs: ref,
    body: 'input',
    document: `mutation updateAdditionalField($ref: AdditionalFieldRef!, $input: UpdateAdditionalFieldInput!, $expectedVersion: String) {
      result: updateAdditionalField(ref: $ref, input: $input, expectedVersion: $expectedVersion) { id }
    }`,
  },
  {
    operationId: 'deleteAdditionalField',
    summary: 'Delete additional field',
    method: 'DELETE',
    path: '/additional_fields/:identifier',
    resource: 'additional_fields',
    idOnly: true,
    status: 204,
    refs: ref,
    document: `mutation deleteAdditionalField($ref: AdditionalFieldRef!, $expectedVersion: String) { result: deleteAdditionalField(ref: $ref, expectedVersion: $expectedVersion) }`,
  },
];
