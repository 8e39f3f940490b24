import { z } from 'zod';
import { TOOLSETS, type Toolset } from '../config.js';
import type { Catalog, ToolDescriptor } from '../registry/catalog.js';
import { toToolInputSchema, toToolOutputSchema } from '../registry/jsonSchema.js';

/** What a stdio session starts with when no toolsets are named: the everyday back-office jobs. */
export const DEFAULT_TOOLSETS: readonly Toolset[] = ['customers', 'subscriptions'];

export const TOOLSET_PURPOSES: Record<Toolset, string> = {
  catalogue: 'Products, price plans, plans, units, measurements, billing groups, coupons, custom fields, tax groups.',
  customers: 'Customers, their e-mail addresses, invoice addresses and payment methods; customer tokens and portal sessions.',
  subscriptions: 'Subscriptions through their lifecycle, their items, ordered products, plan changes and the estimated invoice.',
  usage: 'Usage events (the way to report usage), the deprecated measurement values and the usage of the current interval.',
  invoices: 'Invoices (create, finalize, pay, void, PDF), credit notes, billing runs, the organisation as seller and sent e-mails.',
  payments: 'Payment plans (installments of an open invoice) and SEPA direct debit: creditor, mandates, collections, returns.',
  offers: 'Offers that recipients accept or sign, activating subscriptions, and their signed documents.',
  dunning: 'Overdue rules for unpaid invoices, the dunning steps of an invoice and dunning letters.',
  entitlements: 'Entitlement features and what subscriptions are entitled to.',
  webhooks: 'Webhooks and their deliveries.',
};

const toolsetName = z.enum(TOOLSETS);

const listInput = z.strictObject({});
const listOutput = z.object({
  toolsets: z.array(
    z.object({
      name: toolsetName,
      purpose: z.string(),
      enabled: z.boolean().describe('true: its tools are in tools/list now.'),
      tools: z.array(z.string()).describe('Tool names this token may call.'),
    }),
  ),
});
const enableInput = z.strictObject({
  toolsets: z.array(toolsetName).min(1).max(TOOLSETS.length).describe(`Toolsets to add: ${TOOLSETS.join(', ')}.`),
});
const enableOutput = z.object({
  enabled: z.array(toolsetName).describe('Every toolset enabled now.'),
  added: z.array(z.string()).describe('Tool names added to tools/list.'),
});

/**
 * A discovery tool in the same form as the catalog's tools. Both are read-only: they change which
 * tools the session lists, never any data, so read-only mode keeps them like any read.
 */
function discoveryTool(name: string, title: string, description: string, input: z.ZodType, output: z.ZodType): ToolDescriptor {
  return {
    name,
    title,
    description,
    inputSchema: toToolInputSchema(input) as ToolDescriptor['inputSchema'],
    outputSchema: toToolOutputSchema(output) as ToolDescriptor['outputSchema'],
    annotations: { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  };
}

/** The two tools of discovery on demand. */
export const DISCOVERY_TOOLS: Record<'list_toolsets' | 'enable_toolsets', ToolDescriptor> = {
  list_toolsets: discoveryTool(
    'list_toolsets',
    'List toolsets',
    'List every toolset with its purpose, whether it is enabled and its tools. Use it when a job needs a tool that tools/list does not show, then enable_toolsets.',
    listInput,
    listOutput,
  ),
  enable_toolsets: discoveryTool(
    'enable_toolsets',
    'Enable toolsets',
    'Add the tools of the named toolsets to tools/list for this session (the server announces the change). Enabling one that is enabled already changes nothing.',
    enableInput,
    enableOutput,
  ),
};

/** The toolsets of one stdio session: a default set that the model extends with enable_toolsets. */
export class ToolsetSession {
  readonly enabled = new Set<Toolset>(DEFAULT_TOOLSETS);

  constructor(private readonly catalog: Catalog) {}

  list(visible: (name: string) => boolean): z.infer<typeof listOutput> {
    return {
      toolsets: TOOLSETS.map((name) => ({
        name,
        purpose: TOOLSET_PURPOSES[name],
        enabled: this.enabled.has(name),
        tools: this.catalog.operations.filter((op) => op.toolset === name && visible(op.name)).map((op) => op.name),
      })),
    };
  }

  /** Parses the input, enables the toolsets and returns the tools added (of those `visible`). */
  enable(args: unknown, visible: (name: string) => boolean): z.infer<typeof enableOutput> | z.ZodError {
    const parsed = enableInput.safeParse(args);
    if (!parsed.success) return parsed.error;
    const fresh = parsed.data.toolsets.filter((t) => !this.enabled.has(t));
    for (const t of fresh) this.enabled.add(t);
    const added = this.catalog.operations.filter((op) => fresh.includes(op.toolset) && visible(op.name)).map((op) => op.name);
    return { enabled: TOOLSETS.filter((t) => this.enabled.has(t)), added };
  }
}
