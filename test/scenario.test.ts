/**
 * A back-office day driven through every tool the server lists, by SDK clients that called
 * tools/list first. The SDK `Client` validates a result's structuredContent against the tool's
 * outputSchema only for tools it has listed (`callTool` looks up a validator that `listTools` cached;
 * see @modelcontextprotocol/sdk/dist/esm/client/index.js), and throws an McpError on a mismatch. So
 * every step here is also an output-schema check. The scenario asserts little about contents (the
 * result shapes are being reworked): only the ids it needs to go on, and that nothing fails.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../src/auth/keys.js';
import { runDueJobs } from '../src/jobs/runner.js';
import { createMcpServer } from '../src/mcp/server.js';
import type { Catalog } from '../src/registry/catalog.js';
import type { Executor } from '../src/registry/executor.js';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';
import { setup, type TestEnv } from './helpers.js';
import { eventually, Receiver } from './webhookReceiver.js';

const NOW = '2026-03-02T09:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const monthly = [{ contractPeriod: '1M', cancellationPeriod: '0D' }];

/** The private lookup `callTool` uses; present for every listed tool that has an outputSchema. */
type ValidatorCache = { getToolOutputValidator(name: string): unknown };

/** A client that has listed its tools, and records every tool it called successfully. */
class Driver {
  readonly called = new Set<string>();

  private constructor(
    readonly client: Client,
    readonly listed: ReadonlySet<string>,
    private readonly schemas: ReadonlyMap<string, Schema>,
  ) {}

  static async start(client: Client): Promise<Driver> {
    const { tools, nextCursor } = await client.listTools();
    // One page: the SDK replaces its validator cache with each page it lists.
    expect(nextCursor).toBeUndefined();
    const cache = client as unknown as ValidatorCache;
    for (const tool of tools) {
      expect(tool.outputSchema, `${tool.name} has no outputSchema`).toBeDefined();
      expect(cache.getToolOutputValidator(tool.name), `no cached output validator for ${tool.name}`).toBeDefined();
    }
    return new Driver(client, new Set(tools.map((t) => t.name)), new Map(tools.map((t) => [t.name, t.outputSchema as Schema])));
  }

  /** Calls a listed tool that must succeed; returns its structured content. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<any> {
    if (!this.listed.has(name)) throw new Error(`${name} is not in this client's tools/list, so its output would not be validated`);
    let result: CallToolResult;
    try {
      result = (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    } catch (err) {
      // The SDK throws an McpError when structuredContent does not match the outputSchema.
      throw new Error(`${name} threw: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    if (result.isError) throw new Error(`${name} failed: ${text}`);
    expect(result.structuredContent, `${name} returned no structuredContent`).toBeTruthy();
    expect(undeclared(this.schemas.get(name), result.structuredContent, name), 'fields the outputSchema does not declare').toEqual([]);
    this.called.add(name);
    return result.structuredContent;
  }
}

type Schema = { type?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };

/**
 * Paths of fields a result carries that its outputSchema does not declare. Tool output schemas leave
 * out `additionalProperties: false` (it tells a model nothing), so the SDK's validation would let an
 * undeclared field through; this keeps results exactly to their schema.
 */
function undeclared(schema: Schema | undefined, value: unknown, at: string): string[] {
  if (!schema || value === null || typeof value !== 'object') return [];
  const kind = Array.isArray(value) ? 'array' : 'object';
  const branch = schema.anyOf ? schema.anyOf.find((b) => b.type === kind) : schema;
  if (!branch) return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(branch.items, v, `${at}[${i}]`));
  if (!branch.properties) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k in branch.properties! ? undeclared(branch.properties![k], v, `${at}.${k}`) : [`${at}.${k}`],
  );
}

/** The id of a result, read defensively. */
function idOf(result: any, what: string): string {
  const id = result?.id ?? result?.data?.id;
  expect(typeof id, `${what}: no id in ${JSON.stringify(result)?.slice(0, 300)}`).toBe('string');
  return id as string;
}

let env: TestEnv;
let receiver: Receiver;
let admin: Driver;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  env.setNow(NOW);
  receiver = await Receiver.start();
  admin = await Driver.start(env.mcp);
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});

describe('a back-office scenario through every listed tool', () => {
  // What the steps hand on to each other.
  const s: Record<string, any> = {};

  it('sets up the catalogue: units, measurements, tax groups, custom fields, products, price plans, plans, billing groups, coupons, features', async () => {
    const a = admin;
    await a.call('create_unit', { name: 'API call' });
    await a.call('list_units', { limit: 10 });
    await a.call('get_unit', { id: 'API call' });

    s.measurement = idOf(
      await a.call('create_measurement', { unit: 'API call', code: 'api_calls', aggregationType: 'sum', type: 'metered' }),
      'create_measurement',
    );
    await a.call('list_measurements', {});
    await a.call('get_measurement', { id: s.measurement });
    await a.call('update_measurement', { id: s.measurement, description: 'API calls in the billing month', fairBilling: false });

    const vat = (countryCode: string, rate: number) => ({ code: `VAT-${countryCode}`, rate, countryCode, validFrom: '2026-01-01' });
    s.taxGroup = idOf(await a.call('create_tax_group', { internalDescription: 'Standard VAT', taxes: [vat('DE', 19)] }), 'create_tax_group');
    await a.call('list_tax_groups', {});
    await a.call('get_tax_group', { id: s.taxGroup });
    await a.call('update_tax_group', { id: s.taxGroup, taxes: [vat('DE', 19), vat('AT', 20)] });

    await a.call('create_custom_field', { key: 'sku', entity: 'product', type: 'string' });
    s.poField = idOf(await a.call('create_custom_field', { key: 'po_ref', entity: 'subscription', type: 'string' }), 'create_custom_field');
    const legacy = idOf(
      await a.call('create_custom_field', { key: 'tier', entity: 'customer', type: 'select', options: ['gold', 'silver'] }),
      'create_custom_field',
    );
    await a.call('list_custom_fields', { entity: 'subscription' });
    await a.call('get_custom_field', { id: s.poField });
    await a.call('delete_custom_field', { id: legacy });

    s.base = idOf(
      await a.call('create_product', { name: 'Platform', taxGroup: s.taxGroup, customFields: { sku: 'PLT-1' } }),
      'create_product',
    );
    s.api = idOf(await a.call('create_product', { name: 'API usage', measurement: s.measurement, taxGroup: s.taxGroup }), 'create_product');
    s.support = idOf(await a.call('create_product', { name: 'Support', type: 'service', taxGroup: s.taxGroup }), 'create_product');
    await a.call('list_products', {});
    await a.call('get_product', { id: s.base });
    await a.call('update_product', { id: s.base, description: 'The platform licence', costCentre: 'CC-100' });

    s.basePrice = idOf(
      await a.call('create_price_plan', { id: s.base, type: 'flat_fee', currencyCode: 'EUR', price: { amount: 49.9 }, billingInterval: '1M' }),
      'create_price_plan',
    );
    s.apiPrice = idOf(
      await a.call('create_price_plan', {
        id: s.api,
        type: 'per_unit',
        currencyCode: 'EUR',
        price: { amount: 0.01 },
        billingInterval: '1M',
        payInAdvance: false,
      }),
      'create_price_plan',
    );
    s.supportPrice = idOf(
      await a.call('create_price_plan', {
        id: s.support,
        type: 'flat_fee',
        currencyCode: 'EUR',
        price: { amount: 10 },
        billingInterval: '1M',
        payInAdvance: false,
      }),
      'create_price_plan',
    );
    await a.call('list_price_plans', { id: s.base, status: 'active' });
    await a.call('get_price_plan', { id: s.apiPrice });
    await a.call('update_price_plan', { id: s.apiPrice, internalName: 'API calls' });

    s.plan = idOf(
      await a.call('create_plan', {
        code: 'pro',
        name: 'Pro',
        charges: [
          { product: s.base, pricePlan: s.basePrice },
          { product: s.api, pricePlan: s.apiPrice },
        ],
        addons: [{ product: s.support, pricePlan: s.supportPrice }],
      }),
      'create_plan',
    );
    await a.call('list_plans', {});
    await a.call('get_plan', { id: s.plan });
    await a.call('update_plan', { id: s.plan, status: 'active', description: 'Platform with metered API' });

    s.billingGroup = idOf(await a.call('create_billing_group', { name: 'Month end', type: 'end_of_month' }), 'create_billing_group');
    await a.call('list_billing_groups', {});
    await a.call('get_billing_group', { id: s.billingGroup });

    await a.call('create_coupon', { code: 'WELCOME10', name: 'Welcome 10%', type: 'percentage', frequency: 'once', percentage: 10 });
    await a.call('list_coupons', {});
    await a.call('get_coupon', { id: 'WELCOME10' });
    await a.call('update_coupon', { id: 'WELCOME10', name: 'Welcome 10 %' });

    await a.call('create_feature', { id: 'api-access', name: 'API access', type: 'switch' });
    await a.call('create_entitlement', { id: 'api-access', product: s.base });
    await a.call('update_feature_status', { id: 'api-access', status: 'active' });
    await a.call('list_features', { status: 'active' });
    await a.call('get_feature', { id: 'api-access' });
  });

  it('onboards a customer: e-mail address, invoice address, SEPA and card payment methods, token, portal', async () => {
    const a = admin;
    s.customer = idOf(
      await a.call('create_customer', { companyName: 'ACME GmbH', firstName: 'Ada', lastName: 'Lovelace', timeZone: 'Europe/Berlin' }),
      'create_customer',
    );
    await a.call('list_customers', { status: 'STATUS_ACTIVE' });
    await a.call('get_customer', { id: s.customer });
    await a.call('update_customer', { id: s.customer, datevId: '10001' });

    s.email = idOf(
      await a.call('create_customer_email_address', {
        id: s.customer,
        email: 'billing@acme.example',
        receiverName: 'ACME accounts payable',
        isInvoiceEmail: true,
        isDunningEmail: true,
        default: true,
      }),
      'create_customer_email_address',
    );
    await a.call('list_customer_email_addresses', { id: s.customer });
    await a.call('get_customer_email_address', { id: s.email });
    await a.call('update_customer_email_address', { id: s.email, receiverName: 'ACME AP' });
    const spare = idOf(await a.call('create_customer_email_address', { id: s.customer, email: 'spare@acme.example' }), 'create_customer_email_address');
    await a.call('delete_customer_email_address', { id: spare });

    s.address = idOf(
      await a.call('create_invoice_address', {
        id: s.customer,
        companyName: 'ACME GmbH',
        street: 'Friedrichstraße',
        houseNumber: '12',
        zip: '10117',
        city: 'Berlin',
        countryCode: 'DE',
        vatId: 'DE136695976',
      }),
      'create_invoice_address',
    );
    await a.call('list_invoice_addresses', { id: s.customer });
    await a.call('get_invoice_address', { id: s.customer, addressId: s.address });

    s.sepa = idOf(
      await a.call('create_payment_method', {
        id: s.customer,
        type: 'sepa_debit',
        name: 'Company account',
        sepaDebit: {
          iban: 'DE89 3704 0044 0532 0130 00',
          bic: 'COBADEFFXXX',
          accountHolder: 'ACME GmbH',
        },
      }),
      'create_payment_method',
    );
    const card = await a.call('create_payment_method', {
      id: s.customer,
      type: 'card',
      card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, cardHolder: 'Ada Lovelace' },
    });
    await a.call('update_payment_method', { id: s.customer, paymentMethodId: card.id, name: 'Backup card' });
    await a.call('list_payment_methods', { id: s.customer });
    await a.call('get_payment_method', { id: s.customer, paymentMethodId: s.sepa });

    const first = await a.call('authenticate_customer', { id: s.customer });
    const refreshed = await a.call('refresh_customer_token', { refreshToken: first.data.refreshToken });
    s.tokens = refreshed.data;
    expect(typeof s.tokens.accessToken).toBe('string');
    const portal = await a.call('create_portal_session', { id: s.customer });
    expect((await fetch(portal.url)).status).toBe(200);
  });

  it('runs a subscription through its lifecycle, with usage, entitlements and an estimated invoice', async () => {
    const a = admin;
    const created = await a.call('create_subscription', {
      customer: s.customer,
      plan: s.plan,
      periods: monthly,
      billingGroup: s.billingGroup,
      paymentMethod: s.sepa,
      invoiceAddress: s.address,
      poNumber: 'PO-2026-001',
      customFields: { po_ref: 'REQ-7' },
      addons: [{ product: s.support, pricePlan: s.supportPrice }],
    });
    s.subscription = idOf(created, 'create_subscription');
    const got = await a.call('get_subscription', { id: s.subscription });
    await a.call('list_subscriptions', { customer: s.customer });
    await a.call('update_subscription', { id: s.subscription, periods: monthly, name: 'ACME Pro', externalId: 'crm-42' });
    await a.call('activate_subscription', { id: s.subscription });

    await a.call('order_subscription_products', {
      id: s.subscription,
      products: [
        {
          product: s.support,
          pricePlan: s.supportPrice,
          quantity: 2,
          customName: 'Premium support',
          discount: { coupon: 'WELCOME10' },
        },
      ],
    });

    // Usage by measurement code needs no item id; the value names the item it was recorded on.
    const value = await a.call('create_subscription_measurement', {
      measurementCode: 'api_calls',
      subscription: s.subscription,
      quantity: '120',
    });
    const valueId = idOf(value, 'create_subscription_measurement');
    await a.call('get_subscription_measurement', { id: valueId });
    const items: any[] | undefined = created.items ?? got.items;
    const meteredItem: string | undefined = value.subscriptionItem ?? items?.find((i) => (i.product?.id ?? i.product) === s.api)?.id;
    expect(typeof meteredItem, 'the id of the metered item').toBe('string');
    await a.call('create_subscription_measurements_batch', {
      values: [
        { subscriptionItem: meteredItem, quantity: 30, measuredAt: '2026-03-02T08:30:00Z' },
        { measurementCode: 'api_calls', subscription: s.subscription, quantity: '5.5' },
      ],
    });
    // Usage events: metered by a product's usage metric; an event name nothing meters is kept as unmatched.
    const ingested = await a.call('ingest_usage_events', {
      events: [
        { id: 'scenario-evt-1', eventName: 'api_call', subscription: s.subscription, properties: { tokens: 12 } },
        { id: 'scenario-evt-2', eventName: 'api_cal', customer: s.customer },
      ],
    });
    expect(ingested).toMatchObject({ accepted: 2, unmatched: 2 });
    await a.call('list_usage_events', { unmatched: true, limit: 5 });
    await a.call('get_subscription_usage', { id: s.subscription, limit: 5 });

    // The flat base item when the subscription shows its items, else the metered one (whose name may change).
    const baseItem: string | undefined = items?.find((i) => (i.product?.id ?? i.product) === s.base)?.id;
    const item = baseItem ?? meteredItem!;
    await a.call('get_subscription_item', { id: item });
    await a.call('update_subscription_item', baseItem ? { id: item, quantity: 3, description: 'Three seats' } : { id: item, name: 'API usage' });

    await a.call('get_estimated_invoice', { id: s.subscription });
    await a.call('update_organisation', { legalName: 'Scenario GmbH', address: { street: 'Allee', zip: '10115', city: 'Berlin', countryCode: 'DE' } });
    await a.call('get_organisation', {});
    const run = await a.call('run_billing', { subscription: s.subscription });
    await a.call('list_billing_runs', {});
    if (run.id) await a.call('get_billing_run', { id: run.id });
    await a.call('list_subscription_entitlements', { id: s.subscription });
  });

  it('lets the customer, with its own token, list and call each tool a customer token can list', async () => {
    const customer = await Driver.start(await env.mcpFor(s.tokens.accessToken));
    expect(customer.listed.size).toBeGreaterThan(0);
    expect(customer.listed.size).toBeLessThan(admin.listed.size);

    await customer.call('get_customer', { id: s.customer });
    await customer.call('list_customer_email_addresses', { id: s.customer });
    await customer.call('get_customer_email_address', { id: s.email });
    await customer.call('list_payment_methods', { id: s.customer });
    await customer.call('get_payment_method', { id: s.customer, paymentMethodId: s.sepa });
    await customer.call('create_payment_method', { id: s.customer, type: 'paypal', paypal: { email: 'billing@acme.example' } });
    await customer.call('list_subscriptions', {});
    await customer.call('get_subscription', { id: s.subscription });
    await customer.call('get_estimated_invoice', { id: s.subscription });
    await customer.call('refresh_customer_token', { refreshToken: s.tokens.refreshToken });

    const missing = [...customer.listed].filter((n) => !customer.called.has(n)).sort();
    expect(missing, 'tools a customer token lists but the scenario never calls').toEqual([]);
    expect([...customer.called].sort()).toEqual([...customer.listed].sort());
  });

  it('pauses, resumes, cancels, revokes the cancellation and finally terminates the subscription', async () => {
    const a = admin;
    const family = (await a.call('get_plan', { id: s.plan })).family.id;
    const plus = idOf(
      await a.call('create_plan', { code: 'pro-plus', name: 'Pro Plus', status: 'active', family, charges: [{ product: s.base, pricePlan: s.basePrice, quantity: 2 }] }),
      'create_plan',
    );
    await a.call('preview_subscription_plan_change', { id: s.subscription, plan: plus, applyAt: 'end_of_period' });
    await a.call('change_subscription_plan', { id: s.subscription, plan: plus, applyAt: 'end_of_period' });
    await a.call('revoke_subscription_plan_change', { id: s.subscription });
    env.setNow('2026-03-10T09:00:00Z');
    await a.call('pause_subscription', { id: s.subscription });
    env.setNow('2026-03-12T09:00:00Z');
    await a.call('resume_subscription', { id: s.subscription });
    await a.call('cancel_subscription', { id: s.subscription, reason: { code: 'too_expensive', name: 'Too expensive' } });
    await a.call('revoke_subscription_cancellation', { id: s.subscription });
    await a.call('terminate_subscription', { id: s.subscription });
    env.setNow(NOW);
  });

  it('bills: webhooks, invoices (draft, finalize, pay, void) and a payment plan through its lifecycle', async () => {
    const a = admin;
    const webhook = await a.call('create_webhook', { url: receiver.url, events: [...EVENT_TYPES] });
    s.webhook = idOf(webhook, 'create_webhook');
    await a.call('list_webhooks', {});
    await a.call('get_webhook', { id: s.webhook });

    const draft = idOf(
      await a.call('create_invoice', {
        customer: s.customer,
        status: 'draft',
        dueAt: '2026-03-16T00:00:00Z',
        lines: [
          { description: 'Onboarding workshop', quantity: 1, unitAmount: 100_000, taxRate: 19 },
          { description: 'Travel', quantity: 2, unitAmount: 15_000, taxRate: 19 },
        ],
      }),
      'create_invoice',
    );
    await a.call('finalize_invoice', { id: draft });
    await a.call('record_invoice_payment', { id: draft, amount: 50_000, paidAt: '2026-03-02T08:00:00Z' });
    await a.call('get_invoice', { id: draft });
    await a.call('get_invoice_pdf', { id: draft });

    const mistake = idOf(
      await a.call('create_invoice', { customer: s.customer, lines: [{ description: 'Issued by mistake', quantity: 1, unitAmount: 999 }] }),
      'create_invoice',
    );
    await a.call('void_invoice', { id: mistake });
    const note = await a.call('create_credit_note', { id: draft, amount: 1_000, reason: 'Workshop started late' });
    await a.call('list_credit_notes', { invoice: draft });
    await a.call('get_credit_note', { id: idOf(note, 'create_credit_note') });

    const instalments = idOf(
      await a.call('create_invoice', { customer: s.customer, lines: [{ description: 'Annual licence', quantity: 1, unitAmount: 30_000 }] }),
      'create_invoice',
    );
    await a.call('list_invoices', { customer: s.customer });

    const plan = await a.call('create_payment_plan', {
      invoice: instalments,
      paymentMethod: s.sepa,
      installmentCount: 3,
      firstDueAt: TODAY,
      interval: '1M',
    });
    const planId = idOf(plan, 'create_payment_plan');
    await a.call('get_payment_plan', { id: planId });
    await a.call('list_payment_plans', { invoice: instalments });
    const afterPayment = await a.call('record_payment_plan_payment', { id: planId, amount: 10_000 });
    const installments: any[] = afterPayment.installments ?? (await a.call('get_payment_plan', { id: planId })).installments;
    const open = installments.find((i) => i.status === 'open');
    expect(open, 'an open installment').toBeDefined();
    await a.call('fail_payment_plan_installment', { id: planId, installmentId: open.id, reason: 'SEPA return MD06' });
    await a.call('extend_payment_plan', { id: planId, installmentCount: 2, firstDueAt: '2026-04-01', interval: '1M' });
    await a.call('cancel_payment_plan', { id: planId });

    // invoice.created (finalize, the mistake, the instalments invoice), credit_note.created and
    // invoice.voided (the void), credit_note.created (the credit note), then the plan's created,
    // rate_paid, broken, extended, canceled: each reaches the receiver; retry the first.
    await receiver.waitFor(11);
    await a.call('list_webhook_deliveries', { id: s.webhook });
    const first = receiver.received[0]!.json.event.id as string;
    await a.call('get_webhook_delivery', { id: first });
    await a.call('retry_webhook_delivery', { id: first });
    await receiver.waitFor(12);
    await eventually(async () => (await a.call('list_webhook_deliveries', { id: s.webhook, status: 'pending' })).data?.length === 0);

    await a.call('update_webhook', { id: s.webhook, enabled: false });
    await a.call('delete_webhook', { id: s.webhook });
  });

  it('dunns an overdue invoice: overdue rules, a jobs run, its dunning steps and the e-mail outbox', async () => {
    const a = admin;
    const rule = idOf(await a.call('create_overdue_rule', { level: 1, daysOverdue: 3, dueInDays: 7, amountInCents: 500, sendLetter: true }), 'create_overdue_rule');
    await a.call('list_overdue_rules', {});
    await a.call('get_overdue_rule', { id: rule });
    await a.call('update_overdue_rule', { id: rule, attachOriginalInvoice: true });
    const spare = idOf(await a.call('create_overdue_rule', { level: 9, daysOverdue: 90, dueInDays: 7 }), 'create_overdue_rule');
    await a.call('delete_overdue_rule', { id: spare });
    const overdue = idOf(
      await a.call('create_invoice', { customer: s.customer, lines: [{ description: 'Support retainer', quantity: 1, unitAmount: 20_000 }] }),
      'create_invoice',
    );
    // Due on 16 March; level 1 is reached three days later.
    await runDueJobs(env.app, new Date('2026-03-20T09:00:00Z'));
    expect((await a.call('list_invoice_dunning', { id: overdue })).data).toHaveLength(1);
    await a.call('get_dunning_letter', { id: overdue, level: 1 });
    const [email] = (await a.call('list_emails', { invoice: overdue })).data;
    await a.call('get_email', { id: idOf(email, 'list_emails') });
  });

  it('collects by SEPA direct debit: creditor, mandate, collection run, pain.008 statement, returns, a pain.002 report, the mandate revoked', async () => {
    const a = admin;
    await a.call('update_sepa_creditor', { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing GmbH', iban: 'DE02120300000000202051' });
    await a.call('get_sepa_creditor', {});
    const given = await a.call('create_sepa_mandate', { id: s.customer, paymentMethod: s.sepa, mandateReference: 'ACME-MANDATE-1', signatureDate: '2026-02-20' });
    await a.call('list_sepa_mandates', { id: s.customer });
    await a.call('get_sepa_mandate', { id: s.customer, mandate: idOf(given, 'create_sepa_mandate') });
    for (const amount of [12_000, 8_000]) {
      await a.call('create_invoice', { customer: s.customer, dueAt: NOW, lines: [{ description: 'Support', quantity: 1, unitAmount: amount }] });
    }
    const statement = await a.call('run_sepa_collection', {});
    await a.call('get_sepa_xml_statement', { id: statement.id });
    const [first, second] = (await a.call('list_sepa_xml_payments', { statement: statement.id })).data;
    await a.call('get_sepa_xml_payment', { id: first.id });
    await a.call('return_sepa_xml_payment', { id: first.id, reasonCode: 'AM04' });
    await a.call('record_sepa_return', { endToEndId: second.endToEndId, reasonCode: 'MS02' });
    const report = `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03"><CstmrPmtStsRpt>
      <OrgnlGrpInfAndSts><OrgnlMsgId>${statement.messageId}</OrgnlMsgId><GrpSts>RJCT</GrpSts></OrgnlGrpInfAndSts>
    </CstmrPmtStsRpt></Document>`;
    await a.call('import_sepa_status_report', { document: report });
    const [mandate] = (await a.call('list_sepa_mandates', { id: s.customer })).data;
    await a.call('revoke_sepa_mandate', { id: s.customer, mandate: idOf(mandate, 'list_sepa_mandates') });
  });

  it('sells by offer: create, list, get, update, accept by click, submit invoice details, its documents; archives another', async () => {
    const a = admin;
    const globex = idOf(await a.call('create_customer', { companyName: 'Globex Ltd' }), 'create_customer');
    const offerArgs = {
      customer: globex,
      acceptanceMode: 'click',
      name: 'Pro for Globex',
      recipients: [{ email: 'hank@globex.example', firstName: 'Hank', lastName: 'Scorpio' }],
      sections: [{ title: 'Scope', content: 'Platform and metered API.' }],
      customVariables: { discount: 10 },
      validUntil: '2026-04-01T00:00:00Z',
      contactPerson: { firstName: 'Sam', lastName: 'Seller', email: 'sam@seller.example' },
      subscription: { plan: s.plan, periods: monthly },
    };
    const offer = await a.call('create_offer', offerArgs);
    const offerId = idOf(offer, 'create_offer');
    await a.call('list_offers', { customer: globex });
    const full = await a.call('get_offer', { id: offerId });
    await a.call('update_offer', { id: offerId, name: 'Pro for Globex (revised)', validUntil: '2026-04-15T00:00:00Z' });
    const recipient: string | undefined = (offer.recipients ?? full.recipients)?.[0]?.id;
    expect(typeof recipient, 'the recipient id').toBe('string');
    // Globex has no invoice address yet: a click acceptance waits for the invoice details.
    await a.call('accept_offer', { id: offerId, recipient });
    await a.call('submit_offer_invoice_details', {
      id: offerId,
      invoiceAddress: { companyName: 'Globex Ltd', street: 'Main Street', houseNumber: '1', zip: '12345', city: 'Cypress Creek', countryCode: 'US' },
    });
    await a.call('get_offer_signed_document', { id: offerId });
    await a.call('get_offer_audit_log_document', { id: offerId });

    const withdrawn = idOf(await a.call('create_offer', { ...offerArgs, acceptanceMode: 'esignature', name: 'Enterprise for Globex' }), 'create_offer');
    await a.call('archive_offer', { id: withdrawn });
  });

  it('has called every tool that tools/list names (a new tool needs a step here)', () => {
    const missing = [...admin.listed].filter((n) => !admin.called.has(n)).sort();
    expect(missing, 'listed tools the scenario never calls').toEqual([]);
    expect([...admin.called].sort()).toEqual([...admin.listed].sort());
  });
});

describe('the SDK client validates structuredContent only for tools it has listed', () => {
  it('a result that does not match the outputSchema throws McpError for a listing client, and passes silently otherwise', async () => {
    // The real catalogue (real schemas), with an executor that answers every call with a wrong shape.
    // It lists get_customer only: compiling the validators of the whole tools/list takes seconds.
    const wrong = { execute: async () => ({ status: 200, body: { unexpected: true }, replayed: false }) } as unknown as Executor;
    const catalog: Catalog = Object.create(env.app.catalog);
    catalog.tools = (principal, toolsets) => env.app.catalog.tools(principal, toolsets).filter((t) => t.name === 'get_customer');
    const connect = async (): Promise<Client> => {
      const server = createMcpServer({
        catalog,
        executor: wrong,
        logger: env.app.logger,
        principal: () => authenticate(env.app.store, env.org.apiKey, env.app.clock()),
        toolsets: 'all',
      });
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await server.connect(serverTransport);
      const client = new Client({ name: 'scenario-check', version: '1.0.0' });
      await client.connect(clientTransport);
      return client;
    };

    const unlisted = await connect();
    const passed = (await unlisted.callTool({ name: 'get_customer', arguments: { id: 'x' } })) as CallToolResult;
    expect(passed.structuredContent).toEqual({ unexpected: true });

    const listing = await connect();
    expect((await listing.listTools()).tools.map((t) => t.name)).toEqual(['get_customer']);
    const error = await listing.callTool({ name: 'get_customer', arguments: { id: 'x' } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).message).toMatch(/output schema/);

    await unlisted.close();
    await listing.close();
  });
});
