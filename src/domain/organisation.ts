/**
 * The organisation as seller (CONTRACT section 8): invoices, credit notes, PDFs and SEPA files take the
 * seller's details from it, its `paymentTermDays` applies to customers without their own, and its
 * country decides what "another EU country" is for reverse charge.
 */
import { notFound } from '../errors.js';
import type { Organisation, SellerAddress } from '../schemas/organisation.js';
import type { Tx } from '../store/store.js';
import { countryOfVatId, validVatId } from './vatIds.js';

export async function getOrganisation(tx: Tx, org: string): Promise<Organisation> {
  const found = await tx.organisations.get(org);
  if (!found) throw notFound('Organisation', org);
  return found;
}

export interface OrganisationInput {
  name?: string | undefined;
  legalName?: string | null | undefined;
  address?: (Omit<SellerAddress, 'houseNumber'> & { houseNumber?: string | null | undefined }) | null | undefined;
  vatId?: string | null | undefined;
  taxNumber?: string | null | undefined;
  email?: string | null | undefined;
  paymentTermDays?: number | null | undefined;
  invoiceFooter?: string | null | undefined;
  brandColor?: string | null | undefined;
}

const pick = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);

/**
 * PUT: omitted fields stay as they are, null clears one. A `vatId` given is checked against the rules
 * of the organisation's country (the address's, else the one the id's prefix names).
 */
export async function updateOrganisation(tx: Tx, org: string, input: OrganisationInput, now: Date): Promise<Organisation> {
  const current = await getOrganisation(tx, org);
  const address = input.address === undefined ? current.address : input.address && { ...input.address, houseNumber: input.address.houseNumber ?? null };
  const next: Organisation = {
    ...current,
    name: input.name ?? current.name,
    legalName: pick(input.legalName, current.legalName),
    address,
    vatId: input.vatId ? validVatId(address?.countryCode ?? countryOfVatId(input.vatId), input.vatId, 'vatId') : pick(input.vatId, current.vatId),
    taxNumber: pick(input.taxNumber, current.taxNumber),
    email: pick(input.email, current.email),
    paymentTermDays: pick(input.paymentTermDays, current.paymentTermDays),
    invoiceFooter: pick(input.invoiceFooter, current.invoiceFooter),
    brandColor: pick(input.brandColor, current.brandColor),
    updatedAt: now.toISOString(),
  };
  await tx.organisations.update(next);
  return next;
}

/** Days to pay for customers without terms of their own: the organisation's, else BILLING_PAYMENT_TERM_DAYS (`configured`). */
export async function defaultPaymentTermDays(tx: Tx, org: string, configured: number): Promise<number> {
  return (await getOrganisation(tx, org)).paymentTermDays ?? configured;
}
