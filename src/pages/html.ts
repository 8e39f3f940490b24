import escapeHtml from 'escape-html';

/** Markup that is already safe: what `html` produces and what the markdown renderer sanitised. */
export class Html {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/**
 * A template whose interpolations are escaped: strings and numbers become text, `Html` stays markup,
 * arrays are joined, null, undefined and false vanish.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

export interface Document {
  title: string;
  /** Language of the page (an offer's locale), `en` by default. */
  lang?: string | undefined;
  /** The path of the request: stylesheet and links are relative to it, so a public URL with a path prefix works. */
  path: string;
  body: Html;
}

/** From a page at `path` back to `/pages/`: `../` once per folder below it. */
export function pagesRoot(path: string): string {
  const depth = path.replace(/^\/pages\//, '').split('/').length - 1;
  return depth === 0 ? './' : '../'.repeat(depth);
}

/** A whole page: one stylesheet, no script, readable on a phone. */
export function document(d: Document): string {
  return `<!doctype html>${html`<html lang="${d.lang ?? 'en'}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${d.title}</title><link rel="stylesheet" href="${pagesRoot(d.path)}style.css"></head><body><main>${d.body}</main></body></html>`}`;
}

/** A page that says one thing and offers no action (an unknown link, an expired offer). */
export function messagePage(path: string, title: string, message: string, lang?: string): string {
  return document({ title, lang, path, body: html`<h1>${title}</h1><p>${message}</p>` });
}
