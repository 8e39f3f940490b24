/** Seller and customer as the invoice documents show them: the PDF and the hosted invoice page. */
import type { InvoiceAddress } from '../schemas/billingDetails.js';
import type { Customer } from '../schemas/customers.js';

/** The seller: the organisation's name, and its other details once it has them (CONTRACT section 8). */
export interface Seller {
  name: string;
  legalName?: string | null;
  address?: { street: string; houseNumber?: string | null; zip: string; city: string; countryCode: string } | null;
  vatId?: string | null;
  taxNumber?: string | null;
  email?: string | null;
  invoiceFooter?: string | null;
  /** #RRGGBB: the seller's name and the invoice title are printed in it. */
  brandColor?: string | null;
}

/** The seller's lines under its name: trading name, address, tax ids, e-mail. */
export function sellerLines(seller: Seller): string[] {
  const lines: string[] = [];
  if (seller.legalName && seller.legalName !== seller.name) lines.push(seller.name);
  const a = seller.address;
  if (a) lines.push([a.street, a.houseNumber].filter(Boolean).join(' '), `${a.zip} ${a.city}, ${a.countryCode}`);
  if (seller.vatId) lines.push(`VAT ID ${seller.vatId}`);
  if (seller.taxNumber) lines.push(`Tax number ${seller.taxNumber}`);
  if (seller.email) lines.push(seller.email);
  return lines;
}

function personName(parts: ReadonlyArray<string | null | undefined>): string {
  return parts.filter((p) => p && p.trim()).join(' ');
}

/** The address block: the invoice address when there is one, else the customer's company and name. */
export function addressLines(customer: Customer, address: InvoiceAddress | null): string[] {
  const lines: string[] = [];
  const company = address?.companyName ?? customer.companyName;
  if (company) lines.push(company);
  const name = address
    ? personName([address.salutation, address.firstName, address.lastName])
    : personName([customer.firstName, customer.lastName]);
  const customerName = personName([customer.firstName, customer.lastName]);
  lines.push(name || customerName || customer.customerNumber);
  if (address) {
    if (address.addition) lines.push(address.addition);
    lines.push(personName([address.street, address.houseNumber]));
    lines.push(`${address.zip} ${address.city}`);
    lines.push(address.countryCode);
    if (address.costCentre) lines.push(`Cost centre ${address.costCentre}`);
    if (address.vatId) lines.push(`VAT ID ${address.vatId}`);
  }
  return lines.filter(Boolean);
}
