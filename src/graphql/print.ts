import 'reflect-metadata';
import fs from 'node:fs';
import path from 'node:path';
import { printedSchema } from './schema';

const target = path.resolve(__dirname, '../../schema/schema.graphql');
fs.writeFileSync(target, printedSchema());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
