import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from '../schemas/common.js';
import type { Operation } from '../registry/operation.js';
import { viewOf } from '../registry/view.js';

type Row = Record<string, unknown>;

/**
 * The MCP result of a successful call: the structured result once (the operation's compact view when
 * it has one) and a text form for clients that show only text — a summary line and the JSON, or for a
 * list a summary line and a table of its rows, so the payload is not sent twice in the same form.
 */
export function toolResult(op: Operation, body: unknown): CallToolResult {
  const structured = (op.mcp ? viewOf(op.mcp, body) : body) as Row;
  let text: string;
  if (op.text) text = op.text(body as never);
  else if (op.kind === 'list') text = listText(structured as unknown as Page<Row> | KeysetPage, op.mcp !== undefined);
  else text = `${summaryLine(op, structured)}\n${JSON.stringify(structured)}`;
  const links = op.resourceLinks ? op.resourceLinks(body as never) : [];
  return { content: [{ type: 'text', text }, ...links], structuredContent: structured };
}

const LABELS = ['number', 'customerNumber', 'code', 'key', 'name', 'email', 'url', 'status'] as const;

function summaryLine(op: Operation, result: Row): string {
  const label = LABELS.map((k) => result[k]).find((v) => typeof v === 'string' && v !== '');
  const what = [label, typeof result.id === 'string' ? `(id ${result.id})` : undefined].filter(Boolean).join(' ');
  const outcome = op.kind === 'read' ? op.title : `${op.title}: done`;
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
