import express from 'express';
import { CsvError, parse } from 'csv-parse/sync';
import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  getNamedType,
  getNullableType,
  type GraphQLInputType,
} from 'graphql';
import type { QueryIssue } from './params';
import type { CsvBinding } from './route';
import { utf8Only } from '../http/utf8-body';

export const CSV_TYPES = ['text/csv', 'application/csv'];
const MAX_ISSUES = 100;

/** The raw CSV text, with the same size limit as JSON bodies (over it: 413 from app.ts). */
export const csvBody = (limit: string) => express.text({ type: CSV_TYPES, limit, verify: utf8Only });

/** The input object type of one row: the body type's list field `binding.rows`. Throws at boot if there is none. */
export function csvRowType(bodyType: GraphQLInputType, binding: CsvBinding): GraphQLInputObjectType {
  const body = getNullableType(bodyType);
  const list = body instanceof GraphQLInputObjectType ? getNullableType(body.getFields()[binding.rows]?.type) : undefined;
  const row = list instanceof GraphQLList ? getNamedType(list.ofType) : undefined;
  if (!(row instanceof GraphQLInputObjectType)) throw new Error(`csv.rows "${binding.rows}" is not a list of input objects`);
  return row;
}

type Convert = (cell: string) => { value: unknown } | { error: string };

function scalar(type: GraphQLInputType): Convert | undefined {
  const named = getNamedType(type);
  if (named instanceof GraphQLEnumType) return (cell) => ({ value: cell });
  if (!(named instanceof GraphQLScalarType)) return undefined;
  switch (named.name) {
    case 'Boolean':
      return (cell) => (/^(true|1)$/i.test(cell) ? { value: true } : /^(false|0)$/i.test(cell) ? { value: false } : { error: 'must be true or false' });
    case 'Int':
      return (cell) => (/^-?\d{1,10}$/.test(cell) ? { value: Number(cell) } : { error: 'must be an integer' });
    case 'Float':
      return (cell) => (cell.trim() !== '' && Number.isFinite(Number(cell)) ? { value: Number(cell) } : { error: 'must be a number' });
    default:
      return (cell) => ({ value: cell });
  }
}

/** How a column's text becomes the field's value: scalars by type, lists split on the separator. */
function converter(type: GraphQLInputType, separator: string): Convert | undefined {
  const nullable = getNullableType(type);
  if (!(nullable instanceof GraphQLList)) return scalar(nullable);
  const item = scalar(nullable.ofType);
  if (!item || getNullableType(nullable.ofType) instanceof GraphQLList) return undefined;
  return (cell) => {
    const values: unknown[] = [];
    for (const part of cell.split(separator).map((p) => p.trim()).filter(Boolean)) {
      const one = item(part);
      if ('error' in one) return { error: `has "${part}", which ${one.error}` };
      values.push(one.value);
    }
    return { value: values };
  };
}

/**
 * Reads a CSV body (header row, then one record per row) into the JSON shape of the body:
 * `{ [rows]: [{ column: value, ... }] }`, so the same input check and mutation serve both.
 * An empty cell means the field is absent. Returns undefined when there were issues.
 */
export function csvInput(text: string, bodyType: GraphQLInputType, binding: CsvBinding, issues: QueryIssue[]): unknown {
  const rowType = csvRowType(bodyType, binding);
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, trim: true });
  } catch (err) {
    if (!(err instanceof CsvError)) throw err;
    issues.push({ pointer: '/', detail: `The CSV body could not be read: ${err.message}` });
    return undefined;
  }
  const [header = [], ...data] = records;
  const fields = rowType.getFields();
  const separator = binding.listSeparator ?? ';';
  const columns = header.map((name) => ({ name, field: fields[name], convert: fields[name] && converter(fields[name].type, separator) }));
  const before = issues.length;
  const seen = new Set<string>();
  for (const { name, field, convert } of columns) {
    const pointer = `#/header/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (!field) issues.push({ pointer, detail: `Column "${name}" is not a field of ${binding.rows}; use ${Object.keys(fields).join(', ')}` });
    else if (!convert) issues.push({ pointer, detail: `Column "${name}" cannot be given in CSV; send JSON instead` });
    else if (seen.has(name)) issues.push({ pointer, detail: `Column "${name}" appears more than once` });
    seen.add(name);
  }
  for (const [name, field] of Object.entries(fields)) {
    if (field.type instanceof GraphQLNonNull && !seen.has(name)) {
      issues.push({ pointer: `#/header/${name}`, detail: `The CSV header needs a column "${name}"` });
    }
  }
  if (issues.length > before) return undefined;

  const rows = data.map((record, i) => {
    const row: Record<string, unknown> = {};
    const problem = (name: string, detail: string) => {
      if (issues.length - before < MAX_ISSUES) issues.push({ pointer: `/${binding.rows}/${i}/${name}`, detail: `${name} ${detail} (data row ${i + 1})` });
    };
    columns.forEach(({ name, field, convert }, j) => {
      const cell = record[j];
      if (cell === '') {
        if (field.type instanceof GraphQLNonNull) problem(name, 'is required');
        return;
      }
      const result = convert!(cell);
      if ('error' in result) problem(name, result.error);
      else row[name] = result.value;
    });
    return row;
  });
  if (issues.length - before >= MAX_ISSUES) issues.push({ pointer: '/', detail: `Only the first ${MAX_ISSUES} problems are listed` });
  return issues.length > before ? undefined : { [binding.rows]: rows };
}
