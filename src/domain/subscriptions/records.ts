/** Finding subscription records by id or number, and the blank item every item starts as. */
import { notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import type { ItemRecord, SubscriptionRecord } from '../../store/ports/subscriptions.js';
import type { Tx } from '../../store/store.js';

/** The subscription `ref` (id or number) names; a 404 when none does (a list's `subscription` filter too). */
export async function loadSubscription(tx: Tx, org: string, ref: string): Promise<SubscriptionRecord> {
  const record = await findSubscription(tx, org, ref);
  if (!record) throw notFound('Subscription', ref);
  return record;
}

/** A subscription by id or by number: every input naming a subscription accepts both. */
export async function findSubscription(tx: Tx, org: string, ref: string): Promise<SubscriptionRecord | undefined> {
  return (await tx.subscriptions.get(org, ref)) ?? (await tx.subscriptions.getByNumber(org, ref));
}

export function blankItem(subscriptionId: string, productId: string, pricePlanId: string, type: 'charge' | 'addon', quantity: string, at: string): ItemRecord {
  return {
    id: newId(),
    subscriptionId,
    parentId: null,
    productId,
    pricePlanId,
    type,
    name: null,
    description: null,
    furtherInformation: null,
    quantity,
    periods: null,
    startDate: null,
    billingStart: null,
    billingAnchor: null,
    billingEnd: null,
    activatedAt: null,
    lastBilledAt: null,
    lastBilledFrom: null,
    lastBilledTo: null,
    nextBillingAt: null,
    createdAt: at,
    updatedAt: at,
  };
}
