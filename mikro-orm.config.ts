import 'reflect-metadata';
import { loadConfig } from './src/config';
import { ormOptions } from './src/db/orm';

// Used by the MikroORM CLI (`npm run migration:create`); needs DATABASE_URL.
const config = loadConfig();
if (!config.databaseUrl) throw new Error('Set DATABASE_URL to use the MikroORM CLI');
export default ormOptions(config.databaseUrl);
