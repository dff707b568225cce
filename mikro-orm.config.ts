import 'reflect-metadata';
import { defineConfig } from '@mikro-orm/postgresql';
import { loadConfig } from './src/config';
import { ormOptions } from './src/db/orm';

// Used by the MikroORM CLI (`npm run migration:create`: a blank migration in src/db/migrations
// to fill with literal SQL and append to index.ts); needs DATABASE_URL.
const config = loadConfig();
if (!config.databaseUrl) throw new Error('Set DATABASE_URL to use the MikroORM CLI');
const options = ormOptions(config.databaseUrl);
export default defineConfig({ ...options, migrations: { ...options.migrations, path: './src/db/migrations', pathTs: './src/db/migrations', emit: 'ts' } });
