import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { invoiceAddressSchema } from '../schemas/billingDetails.js';
import { pricePlanDetailSchema, pricePlanSchema } from '../schemas/catalogue.js';
import type { Page } from '../schemas/common.js';
import { paymentPlanSchema } from '../schemas/paymentPlans.js';
import { taxGroupSchema } from '../schemas/taxGroups.js';
import type { Operation } from '../registry/operation.js';
import { viewOf } from '../registry/view.js';

type Row = Record<string, unknown>;

/**
 * The MCP result of a successful call: the structured result once (the operation's compact view when
 * it has one) and a text form for clients that show only text — a summary line and the JSON, or for a
 * list a summary line and a table of its rows, so the payload is not sent twice in the same form.
 * `replayed`: an idempotency key replayed a stored result; the result says so in `_meta`
 * (`idempotentReplayed`, as HTTP's `Idempotent-Replayed` header) and in its summary line.
 */
export function toolResult(op: Operation, body: unknown, replayed = false): CallToolResult {
  const structured = (op.mcp ? viewOf(op.mcp, body) : body) as Row;
  let text: string;
  if (op.text) text = op.text(body as never);
  else if (op.kind === 'list') text = listText(structured as unknown as Page<Row> | KeysetPage, op.mcp !== undefined);
  else text = `${summaryLine(op, structured, replayed)}\n${JSON.stringify(structured)}`;
  const links = op.resourceLinks ? op.resourceLinks(body as never) : [];
  const result: CallToolResult = { content: [{ type: 'text', text }, ...links], structuredContent: structured };
  if (replayed) result._meta = { idempotentReplayed: true };
  return result;
}

const LABELS = ['number', 'customerNumber', 'code', 'key', 'name', 'email', 'url', 'status'] as const;

/** What a summary line names a resource by; undefined when its result lacks the fields. */
type Label = (result: Row) => string | undefined;

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Its internal name, else its type, price and interval: `per_unit 0.01 EUR every 1M` (graduated and volume have no price). */
const pricePlanLabel: Label = (p) => {
  const internalName = nonEmpty(p.internalName);
  if (internalName || !nonEmpty(p.type)) return internalName;
  const amount = (p.price as { amount: number } | null | undefined)?.amount;
  const interval = nonEmpty(p.billingInterval);
  return [p.type, amount, p.currencyCode, interval && `every ${interval}`].filter((v) => v !== undefined && v !== null).join(' ');
};

/**
 * Labels of the resources that no field of LABELS names well (a price plan's `status`, an invoice
 * address's `STATUS_ACTIVE`, a tax group's nothing), keyed by the schema an operation answers
 * (`Operation.output`): every operation answering the resource shares its label. A label reads the
 * MCP result, which a view may have narrowed.
 */
const RESOURCE_LABELS = new Map<z.ZodType, Label>([
  [pricePlanSchema, pricePlanLabel],
  [pricePlanDetailSchema, pricePlanLabel],
  [invoiceAddressSchema, (a) => (nonEmpty(a.city) && nonEmpty(a.countryCode) ? `${a.city}, ${a.countryCode}` : undefined)],
  [taxGroupSchema, (g) => nonEmpty(g.internalDescription)],
  [
    paymentPlanSchema,
    (p) => {
      if (!nonEmpty(p.status) || !Array.isArray(p.installments)) return undefined;
      const count = p.installments.length;
      return `${p.status}, ${count} installment${count === 1 ? '' : 's'} of invoice ${String(p.invoiceId)}`;
    },
  ],
]);

function summaryLine(op: Operation, result: Row, replayed: boolean): string {
  const label = RESOURCE_LABELS.get(op.output)?.(result) ?? LABELS.map((k) => nonEmpty(result[k])).find(Boolean);
  const what = [label, typeof result.id === 'string' ? `(id ${result.id})` : undefined].filter(Boolean).join(' ');
  const outcome = op.kind === 'read' ? op.title : `${op.title}: ${replayed ? 'done earlier (replayed for this idempotencyKey)' : 'done'}`;
  return what ? `${outcome}: ${what}` : outcome;
}

/** A keyset page: its rows and the cursor of the next page. */
interface KeysetPage {
  data: Row[];
  meta: { nextCursor: string | null };
}

/**
 * `summarised`: the rows are summary rows, the get_ tool of the resource has the rest. A keyset page
 * (`meta.nextCursor`) says its row count and the cursor instead of page numbers.
 */
function listText(page: Page<Row> | KeysetPage, summarised: boolean): string {
  let head: string;
  if ('nextCursor' in page.meta) {
    head = `${page.data.length} rows${page.meta.nextCursor ? `; next: cursor=${page.meta.nextCursor}` : ', the last page'}.`;
  } else {
    const { totalItems, currentPage, lastPage, itemsPerPage } = page.meta.pagination;
    const first = (currentPage - 1) * itemsPerPage + 1;
    const shown = page.data.length ? `rows ${first}-${first + page.data.length - 1} of ${totalItems}` : `no rows here, ${totalItems} in all`;
    const next = currentPage < lastPage ? `; next: page=${currentPage + 1}` : '';
    head = `Page ${currentPage} of ${lastPage}: ${shown}${next}.${summarised ? ' Summary rows: the get_ tool shows one in full.' : ''}`;
  }
  const lines = [head];
  if (page.data.length) {
    const columns = Object.keys(page.data[0]!);
    lines.push(columns.join(' | '));
    for (const row of page.data) lines.push(columns.map((c) => cell(row[c])).join(' | '));
  }
  return lines.join('\n');
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cell).join(', ');
  if (typeof value === 'object') return Object.values(value).map(cell).filter(Boolean).join(' ');
  return String(value).replace(/[|\n]/g, ' ');
}
