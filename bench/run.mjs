// Runs every benchmark; each reports its figures as a ratio to a baseline measured in the same run.
import { benchAggregation } from './aggregation.mjs';
import { benchBilling } from './billing.mjs';
import { benchDeduplication, benchEventAggregation, benchEventIngestion } from './events.mjs';
import { benchIngestion } from './ingestion.mjs';
import { benchPages } from './pages.mjs';
import { benchPostgres } from './postgres.mjs';
import { benchSurfaces } from './surfaces.mjs';

await benchSurfaces();
await benchIngestion();
await benchAggregation();
await benchBilling();
await benchEventIngestion();
await benchEventAggregation();
await benchDeduplication();
await benchPages();
await benchPostgres();
