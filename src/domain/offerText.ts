/**
 * The text of an offer's sections: `{{ name }}` placeholders filled from the offer's customVariables
 * (the offer's name and description take none). Plain replacement, nothing evaluated and nothing
 * escaped (the text is markdown or plain text, never HTML here): a value is inserted as it is, a
 * number formatted for the offer's locale.
 */
import type { Violation } from '../errors.js';
import type { CustomVariables } from '../schemas/offers.js';

/** Anything between double braces; what is inside must be a variable name. */
const PLACEHOLDER = /\{\{\s*(.*?)\s*\}\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

interface SectionText {
  title: string;
  content: string;
}

/**
 * Every placeholder of the sections that customVariables does not define (or that is no variable
 * name at all), as a violation at the section's field. `at` is where the mistake was sent: the
 * section field when the sections were, else `customVariables` (a variable removed that a section
 * still uses).
 */
export function placeholderViolations(sections: readonly SectionText[], variables: CustomVariables, sectionsSent: boolean): Violation[] {
  const defined = Object.keys(variables);
  const out: Violation[] = [];
  sections.forEach((section, i) => {
    for (const field of ['title', 'content'] as const) {
      for (const [placeholder, name = ''] of section[field].matchAll(PLACEHOLDER)) {
        if (NAME.test(name) && Object.hasOwn(variables, name)) continue;
        const where = `sections[${i}].${field}`;
        const message = !NAME.test(name)
          ? `${where} contains ${placeholder}, which is no placeholder: write {{ name }} with the name of one of customVariables (letters, digits and _)`
          : `${where} uses the placeholder ${placeholder}, but customVariables has no "${name}"; ${sectionsSent ? 'add it to customVariables or remove the placeholder' : 'keep it in customVariables or change the section'} (defined: ${defined.join(', ') || 'none'})`;
        out.push({ propertyPath: sectionsSent ? where : 'customVariables', message, code: 'unknown_placeholder' });
      }
    }
  });
  return out;
}

/**
 * A placeholder in the offer's `name` or `description` (each given only when sent with a new value),
 * as a violation at the field. Only sections are filled from customVariables: name and description
 * read as written everywhere (get_offer, list_offers, events, the page), and a filled-in copy would
 * make the page say something the API does not.
 */
export function plainTextViolations(fields: { name?: string | undefined; description?: string | null | undefined }): Violation[] {
  const out: Violation[] = [];
  for (const field of ['name', 'description'] as const) {
    const placeholder = fields[field]?.match(PLACEHOLDER)?.[0];
    if (placeholder === undefined) continue;
    out.push({
      propertyPath: field,
      message: `${field} contains ${placeholder}, but placeholders are filled in sections only (the ${field} is shown as written); write the text itself, or move it into a section`,
      code: 'placeholder_not_allowed',
    });
  }
  return out;
}

function show(value: string | number | boolean, locale: string): string {
  if (typeof value === 'number') return new Intl.NumberFormat(locale, { maximumFractionDigits: 20 }).format(`${value}`);
  return String(value);
}

/** The text with each placeholder of a defined variable replaced by its value; any other is left as written. */
export function renderText(text: string, variables: CustomVariables, locale: string): string {
  return text.replace(PLACEHOLDER, (placeholder: string, name: string) =>
    Object.hasOwn(variables, name) ? show(variables[name]!, locale) : placeholder,
  );
}
