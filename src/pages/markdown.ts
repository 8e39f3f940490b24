import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { Html } from './html.js';

/** Raw HTML in the source stays text; bare URLs become links. */
const markdown = new MarkdownIt({ html: false, linkify: true });

/**
 * What a section may contain: text formatting, lists, quotes, code, tables and links (http, https,
 * mailto, tel; with rel noreferrer nofollow). An image shows its alt text (the CSP loads none from
 * other hosts, and a remote image would tell its host who reads the offer). No attributes but a link's
 * href and a list's start (no style: the CSP allows no inline style). A section sits under an h2, so
 * its headings start at h3.
 */
const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: ['p', 'br', 'span', 'strong', 'em', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'hr', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td'],
  allowedAttributes: { a: ['href', 'rel'], ol: ['start'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowProtocolRelative: false,
  transformTags: {
    h1: 'h3',
    h2: 'h4',
    h3: 'h5',
    h4: 'h6',
    h5: 'h6',
    a: sanitizeHtml.simpleTransform('a', { rel: 'noreferrer nofollow' }),
    img: (_, attribs) => ({ tagName: 'span', attribs: {}, text: attribs.alt ?? '' }),
  },
};

/** A section's markdown (placeholders already filled) as sanitised HTML. */
export function renderMarkdown(source: string): Html {
  return new Html(sanitizeHtml(markdown.render(source), ALLOWED));
}
