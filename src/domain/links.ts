/**
 * Absolute URLs that resources link to (issue 18): pages that carry their own access token, which
 * people open without an API key, and documents fetched with an organisation key.
 */
export interface Links {
  /** The page where an offer's recipient reads, accepts or signs it. */
  offerRecipient(org: string, recipientId: string): string;
  /** The signed offer as that recipient downloads it (the recipient's token, no key). */
  offerRecipientDocument(org: string, recipientId: string): string;
  /** A document of a signed offer, fetched with an organisation key. */
  offerDocument(offerId: string, kind: 'signed' | 'audit-log'): string;
  /** The hosted page of an invoice. */
  invoice(org: string, invoiceId: string): string;
  /** The customer portal opened by a portal session's token. */
  portal(token: string): string;
}
