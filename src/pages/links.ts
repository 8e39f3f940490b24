import type { PageTokens } from '../auth/pageTokens.js';
import type { Links } from '../domain/links.js';

/** Where each page is served (src/pages/app.ts routes the same paths). */
export const PAGE_PATHS = {
  offer: '/pages/offers/',
  invoice: '/pages/invoices/',
  portal: '/pages/portal/',
} as const;

/** The links of resources under the base URL clients reach the server at. */
export function pageLinks(tokens: PageTokens, baseUrl: string): Links {
  const recipient = (org: string, id: string) => `${baseUrl}${PAGE_PATHS.offer}${tokens.issue('offer-recipient', { org, id })}`;
  return {
    offerRecipient: recipient,
    offerRecipientDocument: (org, id) => `${recipient(org, id)}/signed.pdf`,
    offerDocument: (offerId, kind) => `${baseUrl}/offers/${encodeURIComponent(offerId)}/${kind}-document`,
    invoice: (org, id) => `${baseUrl}${PAGE_PATHS.invoice}${tokens.issue('invoice', { org, id })}`,
    portal: (token) => `${baseUrl}${PAGE_PATHS.portal}${token}`,
  };
}

/**
 * The links under the current base URL, made once per base URL (it changes at most once, when the
 * HTTP server starts listening) rather than once per request.
 */
export function currentLinks(tokens: () => Promise<PageTokens>, baseUrl: () => string): () => Promise<Links> {
  let made: { base: string; links: Links } | undefined;
  return async () => {
    const base = baseUrl();
    if (made?.base !== base) made = { base, links: pageLinks(await tokens(), base) };
    return made.links;
  };
}
