import type { PageRoute } from './app.js';

/** Every page, as `tools/index.ts` lists every operation. */
export const PAGE_ROUTES: readonly PageRoute[] = [];
