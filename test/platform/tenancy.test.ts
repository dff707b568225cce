import { tenancySweep } from '../helpers/tenancy-sweep';

/**
 * The isolation sweep is generated from the route table: every id-addressed route, in
 * every addressing mode, is called with another community's key (test/helpers/tenancy-sweep.ts).
 */
tenancySweep({ swapAppCommunity: false });
