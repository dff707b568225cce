import type { FeatureModule } from '../module';
import { ImportJob, ImportRowError } from './import-job.entity';
import { importRoutes } from './import.rest';
import { ImportResolver } from './import.resolver';
import { RUN_IMPORT } from './import.service';
import { runImportTask } from './import.task';

export const importsModule: FeatureModule = {
  resolvers: [ImportResolver],
  routes: importRoutes,
  entities: [ImportJob, ImportRowError],
  tasks: { [RUN_IMPORT]: runImportTask },
};
