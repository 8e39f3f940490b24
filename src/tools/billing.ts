import { z } from 'zod';
import { apiAsOf, getBillingRun, listBillingRuns, runBilling } from '../domain/billing/run.js';
import { defineOperation } from '../registry/operation.js';
import { BILLING_RUN_TRIGGERS, billingRunSchema } from '../schemas/billingRuns.js';
import { dateTimeInput, idOrNumber, listOf, pageInput, pageRequest, pathId, toPage } from '../schemas/common.js';
import { billingRunRow, listView } from '../schemas/views.js';

export const billingOperations = [
  defineOperation({
    name: 'run_billing',
    title: 'Run billing',
    description:
      "Bill what is due now: every item whose next billing date has come (flat fees in advance or in arrears as the price plan says, usage in arrears), one invoice per subscription and billing date, each period billed exactly once however often it runs; a quantity decrease too large for its invoice is credited by credit note instead. The job loop does this by itself; use this to bill at once or one subscription. Returns the run's counts and invoice ids; get_estimated_invoice previews the next invoice.",
    toolset: 'invoices',
    method: 'POST',
    path: '/billing-runs',
    permission: 'invoice:write',
    kind: 'create',
    annotations: { idempotentHint: true, openWorldHint: true },
    ownUnitsOfWork: true,
    input: z.strictObject({
      subscription: idOrNumber('subscription', 'only subscription to bill').optional(),
      asOf: dateTimeInput.optional().describe('Bill what was due by then; default now, not in the future.'),
    }),
    output: billingRunSchema,
    handler: async (ctx, input) => {
      const [run] = await runBilling(
        { store: ctx.store, settings: { paymentTermDays: ctx.config.paymentTermDays }, afterInvoices: () => ctx.deliveries.kick() },
        {
          trigger: 'api',
          asOf: apiAsOf(input.asOf, ctx.now),
          now: ctx.now,
          org: ctx.org,
          ...(input.subscription === undefined ? {} : { subscription: input.subscription }),
          recordEmpty: true,
        },
      );
      return run!;
    },
  }),
  defineOperation({
    name: 'get_billing_run',
    title: 'Get billing run',
    description: 'Get what a billing run did: when, invoices created, subscriptions skipped or failed with why.',
    toolset: 'invoices',
    method: 'GET',
    path: '/billing-runs/{id}',
    permission: 'invoice:read',
    kind: 'read',
    input: z.strictObject({ id: pathId('billing run') }),
    output: billingRunSchema,
    handler: (ctx, input) => getBillingRun(ctx.tx, ctx.org, input.id),
  }),
  defineOperation({
    name: 'list_billing_runs',
    title: 'List billing runs',
    description: 'List billing runs, newest last; runs of the job loop are listed only when they billed or failed something.',
    toolset: 'invoices',
    method: 'GET',
    path: '/billing-runs',
    permission: 'invoice:read',
    kind: 'list',
    input: z.strictObject({
      ...pageInput,
      trigger: z.enum(BILLING_RUN_TRIGGERS).optional().describe('Only runs started so.'),
    }),
    output: listOf(billingRunSchema),
    mcp: listView(billingRunRow),
    handler: async (ctx, { trigger, ...rest }) => {
      const page = pageRequest(rest);
      const { rows, total } = await listBillingRuns(ctx.tx, ctx.org, { trigger }, page);
      return toPage(rows, total, page);
    },
  }),
];
