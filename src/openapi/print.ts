import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { printedOpenApi } from './index';

// `npm run openapi:print`: rewrites the committed document; test/platform/openapi.test.ts fails while it is stale.
const target = path.resolve(__dirname, '../../schema/openapi.json');
fs.writeFileSync(target, printedOpenApi());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
