import { readFileSync } from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { creditorIdentifierProblem } from '../src/domain/iban.js';
import { earliestCollectionDate, easterSunday, isTarget2BusinessDay } from '../src/domain/target2.js';
import { EVENT_TYPES } from '../src/schemas/webhooks.js';
import { call, fails, ok, paths, setup, type TestEnv } from './helpers.js';
import { Receiver } from './webhookReceiver.js';

const XSD = readFileSync(new URL('./fixtures/pain.008.001.02.xsd', import.meta.url), 'utf8');
const CREDITOR = { creditorIdentifier: 'DE98ZZZ09999999999', name: 'Billing & Co. GmbH', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' };
const DEBTOR_IBAN = 'DE02120300000000202051';

let env: TestEnv;
let receiver: Receiver;

beforeAll(async () => {
  env = await setup({ webhookAllowPrivate: true, webhookRetryDelaysSeconds: [0, 0, 0], webhookTimeoutMs: 2000 });
  receiver = await Receiver.start();
  await ok(env.mcp, 'create_webhook', { url: receiver.url, events: [...EVENT_TYPES] });
});
afterAll(async () => {
  await env.close();
  await receiver.close();
});

async function validate(xml: string): Promise<string[]> {
  const result = await validateXML({ xml: [{ fileName: 'statement.xml', contents: xml }], schema: [{ fileName: 'pain.008.001.02.xsd', contents: XSD }] });
  return result.errors.map((e) => e.message);
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, isArray: (n) => n === 'PmtInf' || n === 'DrctDbtTxInf' });

/** A customer paying by SEPA with a core mandate (FRST until collected). */
async function sepaCustomer(name: string, mandateReference: string) {
  const customer = await ok(env.mcp, 'create_customer', { companyName: name });
  const method = await ok(env.mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    default: true,
    sepaDebit: { iban: DEBTOR_IBAN, bic: 'BYLADEM1001', accountHolder: `${name} Account` },
  });
  const mandate = await ok(env.mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: method.id, mandateReference, signatureDate: '2026-11-02' });
  return { customer, method, mandate };
}

const invoiceFor = (customer: string, amount: number, dueAt: string) =>
  ok(env.mcp, 'create_invoice', { customer, dueAt, lines: [{ description: 'Licence', quantity: 1, unitAmount: amount }] });

async function brokenEvent(planId: string): Promise<any> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const got = receiver.of('payment_plan.broken').find((r) => r.json.data.paymentPlan.id === planId);
    if (got) return got.json.data.paymentPlan;
    if (Date.now() > deadline) throw new Error(`no payment_plan.broken for ${planId}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('TARGET2 calendar and creditor identifiers', () => {
  it('knows Easter and the closing days, and applies D-1', () => {
    expect(easterSunday(2027)).toBe('2027-03-28');
    expect(easterSunday(2026)).toBe('2026-04-05');
    expect(['2027-03-26', '2027-03-29', '2027-01-01', '2027-05-01', '2026-12-25', '2027-03-27'].map(isTarget2BusinessDay)).toEqual([
      false, false, false, false, false, false,
    ]);
    expect(isTarget2BusinessDay('2027-03-30')).toBe(true);
    // Wednesday → Thursday; Thursday before Good Friday → Tuesday after Easter Monday.
    expect(earliestCollectionDate('2027-03-24')).toBe('2027-03-25');
    expect(earliestCollectionDate('2027-03-25')).toBe('2027-03-30');
    // Friday → Monday; Saturday of Easter → processed Tuesday, collected Wednesday.
    expect(earliestCollectionDate('2027-03-05')).toBe('2027-03-08');
    expect(earliestCollectionDate('2027-03-27')).toBe('2027-03-31');
    // Christmas Eve 2026 (Thursday): 25 Dec closed, then the weekend.
    expect(earliestCollectionDate('2026-12-24')).toBe('2026-12-28');
  });

  it('checks creditor identifiers with ISO 7064 mod 97-10', () => {
    expect(creditorIdentifierProblem('DE98ZZZ09999999999')).toBeUndefined();
    expect(creditorIdentifierProblem('AT61ZZZ01234567890')).toBeUndefined();
    expect(creditorIdentifierProblem('DE97ZZZ09999999999')).toMatch(/check digits/);
    expect(creditorIdentifierProblem('DE98')).toMatch(/country code/);
  });
});

describe('creditor and mandates', () => {
  it('validates the creditor identifier and IBAN, naming the fields; masks the IBAN', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    expect((await fails(env.mcp, 'get_sepa_creditor', {}, 404)).detail).toMatch(/update_sepa_creditor/);
    const problem = await fails(env.mcp, 'update_sepa_creditor', { ...CREDITOR, creditorIdentifier: 'DE97ZZZ09999999999', iban: 'DE89370400440532013001' }, 422);
    expect(paths(problem)).toEqual(['creditorIdentifier', 'iban']);
    const bic = await fails(env.mcp, 'update_sepa_creditor', { ...CREDITOR, bic: 'nope' }, 422);
    expect(paths(bic)).toEqual(['bic']);
    const put = await env.http('PUT', '/sepa-creditor', { body: { ...CREDITOR, creditorIdentifier: 'de98 zzz 0999 9999 999' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ creditorIdentifier: 'DE98ZZZ09999999999', name: CREDITOR.name, iban: 'DE89**************3000', bic: 'COBADEFFXXX', updatedAt: '2027-03-01T09:00:00.000Z' });
    expect(await ok(env.mcp, 'get_sepa_creditor')).toEqual(put.body);
  });

  it('takes a mandate only on a sepa_debit method of that customer, with a reference unique per creditor', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const { customer, method, mandate } = await sepaCustomer('Mandate GmbH', 'MND-RULES-1');
    expect(mandate).toMatchObject({
      status: 'active',
      creditorIdentifier: 'DE98ZZZ09999999999',
      mandateReference: 'MND-RULES-1',
      signatureDate: '2026-11-02',
      sequenceType: 'FRST',
      firstSepaDebit: true,
      sepaType: 'core',
      customer: customer.id,
      bankAccount: { id: method.id, iban: 'DE02**************2051', accountHolder: 'Mandate GmbH Account', source: 'payment_method' },
    });
    const card = await ok(env.mcp, 'create_payment_method', { id: customer.id, type: 'card', card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 } });
    const notSepa = await fails(env.mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: card.id, mandateReference: 'MND-RULES-2', signatureDate: '2026-11-02' }, 422);
    expect(notSepa.violations[0]).toMatchObject({ propertyPath: 'paymentMethod', code: 'not_sepa_debit' });
    const other = await ok(env.mcp, 'create_customer', { companyName: 'Other' });
    const foreign = await fails(env.mcp, 'create_sepa_mandate', { id: other.id, paymentMethod: method.id, mandateReference: 'MND-RULES-3', signatureDate: '2026-11-02' }, 422);
    expect(paths(foreign)).toEqual(['paymentMethod']);
    const second = await ok(env.mcp, 'create_payment_method', { id: customer.id, type: 'sepa_debit', sepaDebit: { iban: DEBTOR_IBAN, accountHolder: 'Second' } });
    const duplicate = await env.http('POST', `/customers/${customer.id}/sepa-mandates`, {
      body: { paymentMethod: second.id, mandateReference: 'MND-RULES-1', signatureDate: '2026-11-02' },
    });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.violations[0]).toMatchObject({ propertyPath: 'mandateReference', code: 'unique' });
    const future = await fails(env.mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: second.id, mandateReference: 'MND-RULES-4', signatureDate: '2027-03-02' }, 422);
    expect(paths(future)).toEqual(['signatureDate']);
    const b2b = await env.http('POST', `/customers/${customer.id}/sepa-mandates`, {
      body: { paymentMethod: second.id, mandateReference: 'MND-RULES-4', signatureDate: '2027-03-01', sepaType: 'b2b' },
    });
    expect(b2b.status).toBe(201);
    expect(b2b.headers.get('location')).toBe(`/customers/${customer.id}/sepa-mandates/${b2b.body.id}`);
    expect(await env.http('GET', b2b.headers.get('location')!)).toMatchObject({ status: 200, body: b2b.body });
    expect(await ok(env.mcp, 'get_sepa_mandate', { id: customer.customerNumber, mandate: b2b.body.id })).toEqual(b2b.body);
    await fails(env.mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: second.id, mandateReference: 'MND-RULES-5', signatureDate: '2027-03-01' }, 409);
    const list = await ok(env.mcp, 'list_sepa_mandates', { id: customer.id });
    expect(list.data.map((m: any) => [m.mandateReference, m.sepaType])).toEqual([['MND-RULES-1', 'core'], ['MND-RULES-4', 'b2b']]);
  });
});

describe('collection runs', () => {
  it('collects due invoices and installments once, on the earliest TARGET2 date, FRST then RCUR; the file validates', async () => {
    env.setNow('2027-03-01T09:00:00Z');
    const { customer, mandate } = await sepaCustomer('Collect AG', 'MND-COLLECT-1');
    const due = await invoiceFor(customer.id, 11_900, '2027-03-20T00:00:00Z');
    const later = await invoiceFor(customer.id, 5_000, '2027-04-15T00:00:00Z');
    const planned = await invoiceFor(customer.id, 10_001, '2027-03-31T00:00:00Z');
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: planned.id, installments: [{ dueAt: '2027-03-29', amount: 5_000 }, { dueAt: '2027-04-29', amount: 5_001 }] });

    // Thursday before Easter 2027: Good Friday and Easter Monday are closed, so the earliest date is Tuesday 30 March.
    env.setNow('2027-03-25T10:00:00Z');
    expect(paths(await fails(env.mcp, 'run_sepa_collection', { collectionDate: '2027-03-29' }, 422))).toEqual(['collectionDate']);
    expect((await fails(env.mcp, 'run_sepa_collection', { collectionDate: '2027-04-03' }, 422)).violations[0].code).toBe('not_business_day');
    const [first, second] = await Promise.all([call(env.mcp, 'run_sepa_collection', {}), call(env.mcp, 'run_sepa_collection', {})]);
    const winner = first!.isError ? second! : first!;
    const loser = first!.isError ? first! : second!;
    expect(loser.body.status).toBe(409);
    const statement = winner.body;
    expect(statement).toMatchObject({ messageId: 'SEPA-2027-000001', collectionDate: '2027-03-30', numberOfTransactions: 2, controlSum: 16_900, currencyCode: 'EUR' });
    expect(statement.payments.map((p: any) => [p.invoice, p.installment, p.amount, p.sequenceType, p.status])).toEqual([
      [due.id, null, 11_900, 'FRST', 'collected'],
      [planned.id, plan.installments[0].id, 5_000, 'FRST', 'collected'],
    ]);
    expect((await ok(env.mcp, 'get_invoice', { id: due.id })).status).toBe('paid');
    expect((await ok(env.mcp, 'get_invoice', { id: later.id })).status).toBe('open');
    const afterFirst = await ok(env.mcp, 'get_payment_plan', { id: plan.id });
    expect(afterFirst.installments.map((i: any) => i.status)).toEqual(['paid', 'open']);

    const payment = await ok(env.mcp, 'get_sepa_xml_payment', { id: statement.payments[0].id });
    expect(payment).toMatchObject({
      type: 'debit',
      dueDate: '2027-03-20',
      executionDate: '2027-03-30',
      remittanceInformation: `Invoice ${due.number}`,
      amount: 11_900,
      sepaXmlStatement: statement.id,
      customer: customer.id,
      sepaMandate: { id: mandate.id, mandateReference: 'MND-COLLECT-1', sequenceType: 'RCUR', firstSepaDebit: false },
      tenantId: env.org.organisationId,
    });
    expect(payment.endToEndId).toMatch(/^[0-9a-f]{32}$/);
    expect((await env.http('GET', `/sepa-xml-payments/${payment.id}`)).body).toEqual(payment);

    const link = await env.mcp.callTool({ name: 'get_sepa_xml_statement', arguments: { id: statement.id } });
    expect(link.content).toContainEqual({ type: 'resource_link', uri: `${env.url}/sepa-xml-statements/${statement.id}`, name: 'SEPA-2027-000001.xml', mimeType: 'application/xml' });
    const file = await env.http('GET', `/sepa-xml-statements/${statement.id}`);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/xml');
    expect(await validate(file.body)).toEqual([]);
    const doc = parser.parse(file.body).Document;
    expect(doc['@_xmlns']).toBe('urn:iso:std:iso:20022:tech:xsd:pain.008.001.02');
    const { GrpHdr, PmtInf } = doc.CstmrDrctDbtInitn;
    expect(GrpHdr).toMatchObject({ MsgId: 'SEPA-2027-000001', NbOfTxs: '2', CtrlSum: '169.00', InitgPty: { Nm: 'Billing & Co. GmbH' } });
    expect(PmtInf).toHaveLength(1);
    expect(PmtInf[0]).toMatchObject({
      PmtInfId: 'SEPA-2027-000001-FRST-CORE',
      NbOfTxs: '2',
      CtrlSum: '169.00',
      PmtTpInf: { SvcLvl: { Cd: 'SEPA' }, LclInstrm: { Cd: 'CORE' }, SeqTp: 'FRST' },
      ReqdColltnDt: '2027-03-30',
      CdtrAcct: { Id: { IBAN: 'DE89370400440532013000' } },
      CdtrAgt: { FinInstnId: { BIC: 'COBADEFFXXX' } },
      CdtrSchmeId: { Id: { PrvtId: { Othr: { Id: 'DE98ZZZ09999999999', SchmeNm: { Prtry: 'SEPA' } } } } },
    });
    expect(PmtInf[0].DrctDbtTxInf.map((t: any) => [t.PmtId.EndToEndId, t.InstdAmt['#text'], t.InstdAmt['@_Ccy'], t.DrctDbtTx.MndtRltdInf.MndtId, t.DbtrAcct.Id.IBAN])).toEqual([
      [statement.payments[0].endToEndId, '119.00', 'EUR', 'MND-COLLECT-1', DEBTOR_IBAN],
      [statement.payments[1].endToEndId, '50.00', 'EUR', 'MND-COLLECT-1', DEBTOR_IBAN],
    ]);
    // The schema is the real one: a file with the elements out of order does not pass.
    expect(await validate(file.body.replace(/<PmtMtd>DD<\/PmtMtd>/, '').replace('<ReqdColltnDt>', '<PmtMtd>DD</PmtMtd><ReqdColltnDt>'))).not.toEqual([]);

    // A month later, with a date of its own: the rest is collected as recurring debits.
    env.setNow('2027-04-27T10:00:00Z');
    const next = await ok(env.mcp, 'run_sepa_collection', { collectionDate: '2027-04-29' });
    expect(next.payments.map((p: any) => [p.invoice, p.amount, p.sequenceType])).toEqual([
      [later.id, 5_000, 'RCUR'],
      [planned.id, 5_001, 'RCUR'],
    ]);
    expect((await ok(env.mcp, 'get_payment_plan', { id: plan.id })).status).toBe('completed');
    const rcur = await env.http('GET', `/sepa-xml-statements/${next.id}`);
    expect(await validate(rcur.body)).toEqual([]);
    expect(parser.parse(rcur.body).Document.CstmrDrctDbtInitn.PmtInf[0].PmtTpInf.SeqTp).toBe('RCUR');
    await fails(env.mcp, 'run_sepa_collection', { collectionDate: '2027-04-29' }, 409);
    const listed = await ok(env.mcp, 'list_sepa_xml_payments', { invoice: planned.id });
    expect(listed.data.map((p: any) => p.amount)).toEqual([5_000, 5_001]);
  });
});

describe('returns', () => {
  /** An invoice split into two installments, the first collected; the plan, invoice and payment. */
  async function collectedInstallment(name: string, reference: string) {
    env.setNow('2027-05-03T09:00:00Z');
    const { customer } = await sepaCustomer(name, reference);
    const invoice = await invoiceFor(customer.id, 20_000, '2027-06-30T00:00:00Z');
    const plan = await ok(env.mcp, 'create_payment_plan', { invoice: invoice.id, installments: [{ dueAt: '2027-05-04', amount: 10_000 }, { dueAt: '2027-06-04', amount: 10_000 }] });
    return { invoice, plan };
  }

  it('each of the three ways reopens what the debit paid and breaks the covering plan', async () => {
    const a = await collectedInstallment('Return One', 'MND-RET-1');
    const b = await collectedInstallment('Return Two', 'MND-RET-2');
    const c = await collectedInstallment('Return Three', 'MND-RET-3');
    const statement = await ok(env.mcp, 'run_sepa_collection', {});
    expect(statement.collectionDate).toBe('2027-05-04');
    const paymentOf = (plan: any) => statement.payments.find((p: any) => p.installment === plan.installments[0].id);
    for (const x of [a, b, c]) expect((await ok(env.mcp, 'get_invoice', { id: x.invoice.id })).amountPaid).toBe(10_000);

    env.setNow('2027-05-10T09:00:00Z');
    const one = await ok(env.mcp, 'return_sepa_xml_payment', { id: paymentOf(a.plan).id, reasonCode: 'AM04' });
    expect(one).toMatchObject({ status: 'returned', returnReasonCode: 'AM04' });
    expect((await ok(env.mcp, 'get_sepa_xml_payment', { id: one.id })).returnedAt).toBe('2027-05-10T09:00:00.000Z');
    await fails(env.mcp, 'return_sepa_xml_payment', { id: paymentOf(a.plan).id, reasonCode: 'AM04' }, 409);

    const two = await env.http('POST', '/sepa-returns', { body: { endToEndId: paymentOf(b.plan).endToEndId, reasonCode: 'MD01', returnedAt: '2027-05-09T12:00:00Z' } });
    expect(two.status).toBe(200);
    expect(two.body).toMatchObject({ status: 'returned', returnReasonCode: 'MD01' });
    // No valid mandate (MD01), like a closed account (AC04) or a deceased debtor (MD07), ends the mandate.
    expect(two.body.sepaMandate).toMatchObject({ status: 'revoked', revokedAt: '2027-05-09T12:00:00.000Z' });
    expect(paths(await fails(env.mcp, 'record_sepa_return', { endToEndId: 'nope', reasonCode: 'MD01' }, 422))).toEqual(['endToEndId']);

    const report = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03">
  <CstmrPmtStsRpt>
    <GrpHdr><MsgId>BANK-STS-1</MsgId><CreDtTm>2027-05-10T08:00:00</CreDtTm></GrpHdr>
    <OrgnlGrpInfAndSts><OrgnlMsgId>${statement.messageId}</OrgnlMsgId><OrgnlMsgNmId>pain.008.001.02</OrgnlMsgNmId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>${statement.messageId}-FRST-CORE</OrgnlPmtInfId>
      <TxInfAndSts><OrgnlEndToEndId>${paymentOf(c.plan).endToEndId}</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC04</Cd></Rsn></StsRsnInf></TxInfAndSts>
      <TxInfAndSts><OrgnlEndToEndId>${paymentOf(a.plan).endToEndId}</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf></TxInfAndSts>
      <TxInfAndSts><OrgnlEndToEndId>UNKNOWN-E2E</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts>
    </OrgnlPmtInfAndSts>
  </CstmrPmtStsRpt>
</Document>`;
    expect((await env.http('POST', '/sepa-status-reports', { body: report, contentType: 'application/json' })).status).toBe(415);
    const three = await env.http('POST', '/sepa-status-reports', { body: report, contentType: 'application/xml' });
    expect(three.status).toBe(200);
    expect(three.body).toMatchObject({ statement: statement.id, alreadyReturned: [paymentOf(a.plan).endToEndId], unknown: ['UNKNOWN-E2E'] });
    expect(three.body.returned.map((p: any) => [p.endToEndId, p.returnReasonCode])).toEqual([[paymentOf(c.plan).endToEndId, 'AC04']]);
    expect(paths(await fails(env.mcp, 'import_sepa_status_report', { document: '<Document><Other/></Document>' }, 422))).toEqual(['document']);

    for (const [x, code] of [[a, 'AM04'], [b, 'MD01'], [c, 'AC04']] as const) {
      const invoice = await ok(env.mcp, 'get_invoice', { id: x.invoice.id });
      expect(invoice).toMatchObject({ status: 'open', amountPaid: 0, amountDue: 20_000, dunningPaused: false });
      expect(invoice.payments[0].returnedAt).not.toBeNull();
      const plan = await ok(env.mcp, 'get_payment_plan', { id: x.plan.id });
      expect(plan.status).toBe('broken');
      expect(plan.brokenReason).toContain(code);
      expect(plan.installments.map((i: any) => [i.status, i.amountPaid])).toEqual([['failed', 0], ['open', 0]]);
      expect(await brokenEvent(x.plan.id)).toMatchObject({ status: 'broken', brokenReason: plan.brokenReason });
      const { sepaMandate } = await ok(env.mcp, 'get_sepa_xml_payment', { id: paymentOf(x.plan).id });
      expect(sepaMandate.status, code).toBe(code === 'AM04' ? 'active' : 'revoked');
    }
  });

  it('a returned invoice debit reopens the paid invoice and the mandate is FRST again', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const { customer, mandate } = await sepaCustomer('Return Four', 'MND-RET-4');
    const invoice = await invoiceFor(customer.id, 4_200, '2027-05-03T09:00:00Z');
    const statement = await ok(env.mcp, 'run_sepa_collection', {});
    const payment = statement.payments.find((p: any) => p.invoice === invoice.id);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).status).toBe('paid');
    const returned = await env.http('POST', `/sepa-xml-payments/${payment.id}/return`, { body: { reasonCode: 'MS02' } });
    expect(returned.status).toBe(200);
    expect(await ok(env.mcp, 'get_invoice', { id: invoice.id })).toMatchObject({ status: 'open', paidAt: null, amountDue: 4_200 });
    expect(returned.body.sepaMandate).toMatchObject({ id: mandate.id, sequenceType: 'FRST', firstSepaDebit: true });
    expect(paths(await fails(env.mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'ms02' }, 422))).toEqual(['reasonCode']);
  });

  it('a pain.002 that rejects a payment group returns its debits (MS03 when no reason is given)', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const { customer } = await sepaCustomer('Return Five', 'MND-RET-5');
    const invoice = await invoiceFor(customer.id, 3_300, '2027-05-03T09:00:00Z');
    const statement = await ok(env.mcp, 'run_sepa_collection', {});
    const report = `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03"><CstmrPmtStsRpt>
      <OrgnlGrpInfAndSts><OrgnlMsgId>${statement.messageId}</OrgnlMsgId></OrgnlGrpInfAndSts>
      <OrgnlPmtInfAndSts><OrgnlPmtInfId>${statement.messageId}-FRST-CORE</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts></OrgnlPmtInfAndSts>
    </CstmrPmtStsRpt></Document>`;
    const result = await ok(env.mcp, 'import_sepa_status_report', { document: report });
    expect(result.returned.map((p: any) => [p.invoice, p.returnReasonCode])).toEqual([[invoice.id, 'MS03']]);
    expect((await ok(env.mcp, 'get_invoice', { id: invoice.id })).status).toBe('open');
    const doctype = await fails(env.mcp, 'import_sepa_status_report', { document: `<!DOCTYPE x [<!ENTITY a "b">]>${report}` }, 422);
    expect(doctype.detail).toContain('DOCTYPE');
  });
});

/**
 * An organisation of its own with the SEPA creditor set, and a customer whose default payment method
 * is a sepa_debit account (`sepaDebit` adds fields, e.g. the mandate).
 */
async function sepaOrg(name: string, sepaDebit: Record<string, unknown> = {}) {
  const mcp = await env.mcpFor((await env.newOrg(name)).apiKey);
  await ok(mcp, 'update_sepa_creditor', CREDITOR);
  const customer = await ok(mcp, 'create_customer', { companyName: name });
  const method = await ok(mcp, 'create_payment_method', {
    id: customer.id,
    type: 'sepa_debit',
    default: true,
    sepaDebit: { iban: DEBTOR_IBAN, accountHolder: `${name} Account`, ...sepaDebit },
  });
  return { mcp, customer, method };
}

describe('mandate lifecycle', () => {
  /** An organisation of its own (its collections touch no other test's invoices) with a SEPA customer. */
  async function ownOrg(name: string, signatureDate: string) {
    const { mcp, customer, method } = await sepaOrg(name);
    const mandate = await ok(mcp, 'create_sepa_mandate', { id: customer.id, paymentMethod: method.id, mandateReference: `MND-${name.replace(/ /g, '-')}`, signatureDate });
    const invoice = (dueAt: string) => ok(mcp, 'create_invoice', { customer: customer.id, dueAt, lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] });
    return { mcp, customer, mandate, invoice };
  }

  it('a revoked mandate is shown revoked and nothing more is collected under it', async () => {
    env.setNow('2027-06-01T09:00:00Z');
    const { mcp, customer, mandate, invoice } = await ownOrg('Revoker', '2027-05-03');
    expect(mandate).toMatchObject({ status: 'active', revokedAt: null });
    const due = await invoice('2027-06-01T00:00:00Z');
    const revoked = await ok(mcp, 'revoke_sepa_mandate', { id: customer.id, mandate: mandate.id });
    expect(revoked).toMatchObject({ id: mandate.id, status: 'revoked', revokedAt: '2027-06-01T09:00:00.000Z' });
    expect((await fails(mcp, 'revoke_sepa_mandate', { id: customer.id, mandate: mandate.id }, 409)).detail).toMatch(/already revoked at 2027-06-01/);
    const other = await ok(mcp, 'create_customer', { companyName: 'Someone else' });
    await fails(mcp, 'revoke_sepa_mandate', { id: other.id, mandate: mandate.id }, 404);
    expect((await ok(mcp, 'list_sepa_mandates', { id: customer.id })).data.map((m: any) => m.status)).toEqual(['revoked']);
    expect((await fails(mcp, 'run_sepa_collection', {}, 409)).detail).toMatch(/Nothing to collect/);
    expect((await ok(mcp, 'get_invoice', { id: due.id })).status).toBe('open');
    const rest = await env.http('POST', `/customers/${customer.id}/sepa-mandates/${mandate.id}/revoke`, { token: null });
    expect(rest.status).toBe(401);
  });

  it('expires when no collection was presented under it for 36 months; a collection starts the 36 months again', async () => {
    env.setNow('2025-01-06T09:00:00Z');
    const never = await ownOrg('Never used', '2024-06-03');
    const used = await ownOrg('Used once', '2024-01-10');
    await used.invoice('2025-01-06T00:00:00Z');
    expect((await ok(used.mcp, 'run_sepa_collection', {})).collectionDate).toBe('2025-01-07');

    // The day before the 36 months are up the mandate is still active; on the day it has expired.
    env.setNow('2027-06-02T09:00:00Z');
    expect((await ok(never.mcp, 'list_sepa_mandates', { id: never.customer.id })).data[0].status).toBe('active');
    env.setNow('2027-06-03T09:00:00Z');
    expect((await ok(never.mcp, 'list_sepa_mandates', { id: never.customer.id })).data[0].status).toBe('expired');
    const unpaid = await never.invoice('2027-06-03T00:00:00Z');
    expect((await fails(never.mcp, 'run_sepa_collection', {}, 409)).detail).toMatch(/Nothing to collect/);
    expect((await ok(never.mcp, 'get_invoice', { id: unpaid.id })).status).toBe('open');

    // Signed on 10 January 2024, last used on 7 January 2025: active until 7 January 2028.
    expect((await ok(used.mcp, 'list_sepa_mandates', { id: used.customer.id })).data[0]).toMatchObject({ status: 'active', sequenceType: 'RCUR' });
    await used.invoice('2027-06-03T00:00:00Z');
    expect((await ok(used.mcp, 'run_sepa_collection', {})).numberOfTransactions).toBe(1);
  });
});

describe('SEPA countries', () => {
  it("refuses a creditor account outside SEPA at iban, naming the country", async () => {
    const mcp = await env.mcpFor((await env.newOrg('Creditor abroad')).apiKey);
    const p = await fails(mcp, 'update_sepa_creditor', { ...CREDITOR, iban: 'BR1800360305000010009795493C1' }, 422);
    // Checked by the input schema with the other fields (a refinement: code custom).
    expect(p.violations).toEqual([{ propertyPath: 'iban', code: 'custom', message: expect.stringContaining('is an IBAN of Brazil (BR); SEPA direct debit takes IBANs of SEPA countries only') }]);
    await fails(mcp, 'get_sepa_creditor', {}, 404);
  });

  it('a Brazilian IBAN never gets a sepa_debit method, a mandate or a place in a pain.008', async () => {
    env.setNow('2027-05-03T09:00:00Z');
    const mcp = await env.mcpFor((await env.newOrg('Debtor abroad')).apiKey);
    await ok(mcp, 'update_sepa_creditor', CREDITOR);
    const customer = await ok(mcp, 'create_customer', { companyName: 'Abroad Ltda' });
    const sepaDebit = { iban: 'BR1800360305000010009795493C1', accountHolder: 'Abroad Ltda', mandateReference: 'MND-BR-1', signingDate: '2027-05-01' };
    const p = await fails(mcp, 'create_payment_method', { id: customer.id, type: 'sepa_debit', default: true, sepaDebit }, 422);
    expect(paths(p)).toEqual(['sepaDebit.iban']);
    expect((await ok(mcp, 'list_payment_methods', { id: customer.id })).data).toEqual([]);
    expect((await ok(mcp, 'list_sepa_mandates', { id: customer.id })).data).toEqual([]);
    await ok(mcp, 'create_invoice', { customer: customer.id, dueAt: '2027-05-03T09:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: 1_000 }] });
    expect((await fails(mcp, 'run_sepa_collection', {}, 409)).detail).toMatch(/Nothing to collect/);
  });
});

describe('a return after the invoice was credited', () => {
  /** An organisation of its own with a creditor, and a customer paying by SEPA direct debit. */
  async function creditedOrg(name: string) {
    env.setNow('2027-05-03T09:00:00Z');
    const { mcp, customer, method } = await sepaOrg(name, { mandateReference: `MND-${name.replace(/ /g, '-')}`, signingDate: '2027-05-01' });
    const invoice = (amount: number) =>
      ok(mcp, 'create_invoice', { customer: customer.id, dueAt: '2027-05-03T09:00:00Z', lines: [{ description: 'Licence', quantity: 1, unitAmount: amount }] });
    const balance = async () => (await ok(mcp, 'get_customer', { id: customer.id })).creditBalance;
    return { mcp, customer, method, invoice, balance };
  }

  it('an invoice credited in full after its debit stays credited when the debit is returned: void, nothing to dun, the balance not counted twice', async () => {
    const { mcp, invoice, balance } = await creditedOrg('Credited In Full');
    const inv = await invoice(3_000);
    const [payment] = (await ok(mcp, 'run_sepa_collection', {})).payments;
    expect((await ok(mcp, 'get_invoice', { id: inv.id })).status).toBe('paid');
    const note = await ok(mcp, 'create_credit_note', { id: inv.id, reason: 'Service not delivered' });
    expect(note.amount).toBe(3_000);
    expect(await balance()).toBe(3_000);

    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'AM04' });
    expect(await ok(mcp, 'get_invoice', { id: inv.id })).toMatchObject({ status: 'void', amountPaid: 0, amountCredited: 3_000, amountDue: 0, paidAt: null });
    expect(await balance()).toBe(0);
    expect((await ok(mcp, 'list_credit_notes', { invoice: inv.id })).data.map((n: any) => n.amount)).toEqual([3_000]);
    expect((await fails(mcp, 'run_sepa_collection', {}, 409)).detail).toMatch(/Nothing to collect/);
  });

  it('a partial credit counts against what the return makes due again, as far as the balance still holds it; a payment still standing keeps it paid', async () => {
    const { mcp, invoice, balance } = await creditedOrg('Credited In Part');
    const inv = await invoice(3_000);
    const [payment] = (await ok(mcp, 'run_sepa_collection', {})).payments;
    await ok(mcp, 'create_credit_note', { id: inv.id, amount: 1_000, reason: 'Outage' });
    // The next invoice takes 400 of the 1000 off: 600 stay in the balance.
    expect((await invoice(400)).status).toBe('paid');
    expect(await balance()).toBe(600);
    env.setNow('2027-05-10T09:00:00Z');
    await ok(mcp, 'return_sepa_xml_payment', { id: payment.id, reasonCode: 'AM04' });
    expect(await ok(mcp, 'get_invoice', { id: inv.id })).toMatchObject({ status: 'open', amountPaid: 0, amountCredited: 600, amountDue: 2_400, paidAt: null });
    expect(await balance()).toBe(0);

    // Paid 1000 by hand and 2000 by debit, then credited 3000: the returned 2000 is covered by the credit.
    const both = await creditedOrg('Paid Twice');
    const split = await both.invoice(3_000);
    await ok(both.mcp, 'record_invoice_payment', { id: split.id, amount: 1_000 });
    const [debit] = (await ok(both.mcp, 'run_sepa_collection', {})).payments;
    expect(debit.amount).toBe(2_000);
    await ok(both.mcp, 'create_credit_note', { id: split.id, reason: 'Goodwill' });
    expect(await both.balance()).toBe(3_000);
    env.setNow('2027-05-10T09:00:00Z');
    await ok(both.mcp, 'return_sepa_xml_payment', { id: debit.id, reasonCode: 'AM04' });
    expect(await ok(both.mcp, 'get_invoice', { id: split.id })).toMatchObject({ status: 'paid', amountPaid: 1_000, amountCredited: 2_000, amountDue: 0 });
    expect(await both.balance()).toBe(1_000);
  });
});
