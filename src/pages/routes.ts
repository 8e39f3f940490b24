import type { PageRoute } from './app.js';
import { INVOICE_PAGES } from './invoicePages.js';
import { OFFER_PAGES } from './offerPages.js';
import { PORTAL_PAGES } from './portalPages.js';

/** Every page, as `tools/index.ts` lists every operation. */
export const PAGE_ROUTES: readonly PageRoute[] = [...OFFER_PAGES, ...INVOICE_PAGES, ...PORTAL_PAGES];
