import { z } from 'zod';
import { openPortalSession } from '../auth/portalSessions.js';
import { getCustomer } from '../domain/customers.js';
import { defineOperation } from '../registry/operation.js';
import { dateTime, idOrNumber } from '../schemas/common.js';

const portalSessionSchema = z.object({
  url: z.string().describe('Opens the portal as this customer, no key needed; send it to the customer only.'),
  expiresAt: dateTime,
});

export const portalOperations = [
  defineOperation({
    name: 'create_portal_session',
    title: 'Create customer portal session',
    description:
      'Customer portal link, valid 1 hour: the customer sees subscriptions, invoices and payment methods, adds a SEPA account, cancels at the next possible date. Anyone with the url acts as the customer without a key: send it to them only.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/portal-sessions',
    permission: 'customer:write',
    kind: 'create',
    annotations: { destructiveHint: false },
    secretResult: true,
    input: z.strictObject({ id: idOrNumber('customer') }),
    output: portalSessionSchema,
    location: (session) => session.url,
    handler: async (ctx, input) => {
      const customer = await getCustomer(ctx.tx, ctx.org, input.id);
      const session = await openPortalSession(ctx.tx, { organisationId: ctx.org, customerId: customer.id, apiKeyId: ctx.principal.keyId }, ctx.now);
      return { url: ctx.links.portal(session.token), expiresAt: session.expiresAt };
    },
  }),
];
