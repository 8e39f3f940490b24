import type { PageRoute } from './app.js';
import { OFFER_PAGES } from './offerPages.js';

/** Every page, as `tools/index.ts` lists every operation. */
export const PAGE_ROUTES: readonly PageRoute[] = [...OFFER_PAGES];
