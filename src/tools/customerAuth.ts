import { z } from 'zod';
import { issueCustomerTokens, refreshCustomerTokens, type TokenLifetimes } from '../auth/customerTokens.js';
import type { Config } from '../config.js';
import { getCustomer } from '../domain/customers.js';
import { defineOperation } from '../registry/operation.js';
import { idOrNumber } from '../schemas/common.js';

const tokenPair = z.object({
  data: z.object({
    accessToken: z.string().describe('Bearer token; valid 15 minutes by default.'),
    refreshToken: z.string().describe('Single-use, for refresh_customer_token; valid 30 days by default.'),
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
      "Mint an access and a refresh token for a customer-facing app: the access token reaches only this customer's own data and adds payment methods for it. Needs an API key with customer:write; revoking the key ends these tokens.",
    toolset: 'customers',
    method: 'POST',
    path: '/customers/{id}/authenticate',
    permission: 'customer:write',
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: false },
    secretResult: true,
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
      'Exchange a refresh token for a new token pair; no bearer token needed. A refresh token works once: reusing one revokes its whole family.',
    toolset: 'customers',
    method: 'POST',
    path: '/customers/token/refresh',
    permission: null,
    kind: 'action',
    annotations: { destructiveHint: false, idempotentHint: false },
    authentication: 'none',
    customerAccess: { permission: 'ROLE_CUSTOMER' },
    input: z.strictObject({ refreshToken: z.string().min(1).max(255).describe('Refresh token from authenticate_customer or an earlier refresh.') }),
    output: tokenPair,
    handler: async (ctx, input) => ({ data: await refreshCustomerTokens(ctx.tx, input.refreshToken, lifetimes(ctx.config), ctx.now) }),
  }),
];
