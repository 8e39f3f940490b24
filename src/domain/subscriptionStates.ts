import { conflict } from '../errors.js';
import type { SubscriptionStatus } from '../store/ports/subscriptions.js';

/** Subscriptions that can no longer change (CONTRACT section 5: cancelled and terminated are final). */
export const FINAL: readonly SubscriptionStatus[] = ['cancelled', 'terminated'];

/**
 * The subscription state machine of the contract (section 5, "Subscriptions"). Offer signing
 * (offer → active or draft) and archiving (offer → terminated) belong to the offers; everything not
 * listed here is a 409.
 */
export const TRANSITIONS = {
  activate: { from: ['draft'], to: 'active' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
  cancel: { from: ['active', 'paused'], to: 'cancelled' },
  revoke_cancellation: { from: ['active', 'paused'], to: null },
  terminate: { from: ['draft', 'active', 'paused'], to: 'terminated' },
} as const satisfies Record<string, { from: readonly SubscriptionStatus[]; to: SubscriptionStatus | null }>;

export type SubscriptionAction = keyof typeof TRANSITIONS;

export function assertTransition(action: SubscriptionAction, subject: { number: string; status: SubscriptionStatus }): void {
  const allowed: readonly SubscriptionStatus[] = TRANSITIONS[action].from;
  if (!allowed.includes(subject.status)) {
    const verb = action.replace('_', ' ');
    const final = FINAL.includes(subject.status) ? ` (${subject.status} is final)` : '';
    throw conflict(
      `Cannot ${verb} subscription ${subject.number}: its status is ${subject.status}${final}; ${verb} is allowed only from ${allowed.join(' or ')}`,
    );
  }
}
