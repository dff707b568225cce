import fs from 'node:fs';
import path from 'node:path';

/*
 * Executable docs: the shell examples of README.md and docs/*.md as commands with the
 * answers their comments promise. The convention is described in docs/reliability.md
 * ("Executable docs"); test/platform/docs.test.ts runs them.
 */

export const ROOT = path.resolve(__dirname, '../..');

export interface Expectation {
  /** The comment it comes from. */
  text: string;
  status?: number;
  /** `"name": literal` pairs the answer must contain (at any depth). */
  values: [string, unknown][];
  /** Property names the answer must have (at any depth). */
  keys: string[];
  /** `"name": "<placeholder>"`: the answer's value of `name` becomes `<placeholder>` for later commands. */
  captures: [string, string][];
  /** `` `Header-Name: value` ``: a response header (a `<placeholder>` value captures it). */
  headers: [string, string][];
}

export interface DocCommand {
  file: string;
  line: number;
  text: string;
  expect?: Expectation;
}

/** The ```sh blocks of a Markdown file, each with the line number of its first line. */
export function shellBlocks(file: string): { line: number; lines: string[] }[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks: { line: number; lines: string[] }[] = [];
  let current: { line: number; lines: string[] } | undefined;
  lines.forEach((l, i) => {
    if (!current && /^```(sh|bash|shell)\s*$/.test(l)) current = { line: i + 2, lines: [] };
    else if (current && /^```\s*$/.test(l)) {
      blocks.push(current);
      current = undefined;
    } else if (current) current.lines.push(l);
  });
  return blocks;
}

/** True while `text` has an unclosed quote (single, double or $'...'), as bash reads it. */
function openQuote(text: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (quote === "$'" || quote === '"') {
      if (c === '\\') i++;
      else if ((quote === '"' && c === '"') || (quote === "$'" && c === "'")) quote = undefined;
    } else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      // a comment runs to the end of its line
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl;
    } else if (c === '$' && text[i + 1] === "'") {
      quote = "$'";
      i++;
    } else if (c === "'" || c === '"') quote = c;
  }
  return quote !== undefined;
}

const STATUS = /(?:^|[\s:;(,])([1-5]\d\d)(?=$|[\s,.;)]|\s*[{[])/;
const PAIR = /"([^"]+)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)?/g;
const PLACEHOLDER = /^<([a-z][a-z0-9 ]*)>$/;
const HEADER = /`([A-Za-z][A-Za-z0-9-]*): ([^`]+)`/g;

/**
 * An expectation comment: `# [prose:] STATUS [BODY]`, or `# BODY` alone (a command that is not
 * an HTTP call). BODY starts at the first `{` or `[`; `` `Header: value` `` anywhere checks a header.
 * A comment with none of these is prose.
 */
export function parseExpectation(comment: string): Expectation | undefined {
  const text = comment.replace(/^#\s?/, '');
  const status = STATUS.exec(text);
  const from = status ? status.index + status[0].length : 0;
  const brace = text.slice(from).search(/[{[]/);
  const bodyText = brace < 0 ? '' : text.slice(from + brace);
  const bodyAlone = !status && /^[{[]/.test(text.trim());
  const headers = [...text.matchAll(HEADER)].map((m) => [m[1], m[2].trim()] as [string, string]);
  if (!status && !bodyAlone && headers.length === 0) return undefined;
  const e: Expectation = { text, status: status ? Number(status[1]) : undefined, values: [], keys: [], captures: [], headers };
  for (const m of (status || bodyAlone ? bodyText : '').matchAll(PAIR)) {
    const [, name, raw] = m;
    if (raw === undefined) {
      e.keys.push(name);
      continue;
    }
    const value = JSON.parse(raw);
    const hole = typeof value === 'string' ? PLACEHOLDER.exec(value) : null;
    if (hole) e.captures.push([name, hole[0]]);
    else if (typeof value === 'string' && value.includes('...')) e.keys.push(name);
    else e.values.push([name, value]);
  }
  return e;
}

/**
 * The commands of a file's ```sh blocks (for docs/, only blocks that call localhost:3000), each
 * with the expectation comment that precedes it. A comment's expectation holds for the commands
 * after it, up to the next comment or blank line.
 */
export function docCommands(file: string, onlyCallingService: boolean): DocCommand[] {
  const out: DocCommand[] = [];
  for (const block of shellBlocks(file)) {
    if (onlyCallingService && !block.lines.some((l) => l.includes('localhost:3000'))) continue;
    let expect: Expectation | undefined;
    let pending: { line: number; lines: string[] } | undefined;
    block.lines.forEach((l, i) => {
      if (pending) {
        pending.lines.push(l);
      } else if (/^\s*$/.test(l)) {
        expect = undefined;
        return;
      } else if (/^\s*#/.test(l)) {
        expect = parseExpectation(l.trim());
        return;
      } else pending = { line: block.line + i, lines: [l] };
      const text = pending.lines.join('\n');
      if (/\\$/.test(l) || openQuote(text)) return;
      out.push({ file, line: pending.line, text, expect });
      pending = undefined;
    });
    if (pending) throw new Error(`${file}:${pending.line}: the command does not end inside its block`);
  }
  return out;
}

/** Every value of property `name` in `value`, breadth first. */
export function valuesOf(value: unknown, name: string): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [value];
  while (queue.length) {
    const v = queue.shift();
    if (Array.isArray(v)) queue.push(...v);
    else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k === name) out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** `<name>` placeholders of a command, replaced by captured values; throws on one never captured. */
export function substitute(text: string, captured: Map<string, string>, where: string): string {
  return text.replace(/<([a-z][a-z0-9 ]*)>/g, (hole) => {
    const value = captured.get(hole);
    if (value === undefined) throw new Error(`${where}: no earlier answer gave ${hole}`);
    return value;
  });
}
