import { z } from 'zod';
import { issueCustomerTokens, refreshCustomerTokens, type TokenLifetimes } from '../auth/customerTokens.js';
import type { Config } from '../config.js';
import { getCustomer } from '../domain/customers.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';

const tokenPair = z.object({
  data: z.object({
    accessToken: z.string().describe('Bearer token for the customer, valid 15 minutes by default.'),
    refreshToken: z.string().describe('Single-use token for POST /customers/token/refresh, valid 30 days by default.'),
  }),
});

const lifetimes = (config: Config): TokenLifetimes => ({
  accessSeconds: config.customerAccessTokenTtlSeconds,
  refreshSeconds: config.customerRefreshTokenTtlSeconds,
});

export const customerAuthOperations = [
  defineOperation({
    name: 'authenticate_customer',
    title: 'Authenticate customer',
    description:
      "Mint an access and a refresh token for one customer, for a customer-facing app or assistant. The access token reaches only that customer's own account, subscriptions, e-mail addresses and payment methods (read, and add payment methods). Needs an organisation API key (a customer token gets 403); revoking that key ends the tokens it minted.",
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/authenticate',
    permission: null,
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: false },
    input: z.strictObject({ id: idOrNumber('customer') }),
    output: tokenPair,
    handler: async (ctx, input) => {
      const customer = await getCustomer(ctx.tx, ctx.org, input.id);
      const pair = await issueCustomerTokens(
        ctx.tx,
        { organisationId: ctx.org, customerId: customer.id, apiKeyId: ctx.principal.keyId },
        lifetimes(ctx.config),
        ctx.now,
      );
      return { data: pair };
    },
  }),
  defineOperation({
    name: 'refresh_customer_token',
    title: 'Refresh customer token',
    description:
      'Exchange a refresh token for a new access and refresh token pair. Each refresh token works once: presenting a used one again revokes every token of its family (401), and the customer must be authenticated again. Needs no bearer token; the refresh token authorizes the call.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/token/refresh',
    permission: null,
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: false },
    authentication: 'none',
    customerAccess: { permission: 'ROLE_CUSTOMER' },
    input: z.strictObject({ refreshToken: z.string().min(1).max(255).describe('The refresh token from authenticate_customer or an earlier refresh.') }),
    output: tokenPair,
    handler: async (ctx, input) => ({ data: await refreshCustomerTokens(ctx.tx, input.refreshToken, lifetimes(ctx.config), ctx.now) }),
  }),
];
