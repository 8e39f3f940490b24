/**
 * SEPA direct debit files: the pain.008.001.02 collection a statement is handed to the bank as, and
 * the pain.002 status report the bank answers with. Built and read with fast-xml-parser (every text
 * escaped by the builder); pure functions, no store.
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import type { SepaType, SequenceType } from '../schemas/sepa.js';

export const PAIN_008_NAMESPACE = 'urn:iso:std:iso:20022:tech:xsd:pain.008.001.02';

export interface Pain008Transaction {
  endToEndId: string;
  /** Cents. */
  amount: number;
  sequenceType: SequenceType;
  sepaType: SepaType;
  mandateReference: string;
  signatureDate: string;
  debtorName: string;
  debtorIban: string;
  debtorBic: string | null;
  remittanceInformation: string;
}

/** What a statement's file is made of (the statement's own snapshot of the creditor). */
export interface Pain008Source {
  messageId: string;
  createdAt: string;
  collectionDate: string;
  creditor: { identifier: string; name: string; iban: string; bic: string | null };
  transactions: Pain008Transaction[];
}

const GROUPS: ReadonlyArray<readonly [SequenceType, SepaType]> = [
  ['FRST', 'core'],
  ['RCUR', 'core'],
  ['FRST', 'b2b'],
  ['RCUR', 'b2b'],
];

/** The PmtInfId of a statement's payments of one sequence type and scheme: `SEPA-2027-000001-FRST-CORE`. */
export function paymentGroupId(messageId: string, sequenceType: SequenceType, sepaType: SepaType): string {
  return `${messageId}-${sequenceType}-${sepaType.toUpperCase()}`;
}

/** Cents as the decimal amount of the file: 1234 → "12.34" (integer arithmetic). */
function decimalAmount(cents: number): string {
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** A name as the SEPA rulebook allows it: at most 70 characters. */
const name70 = (text: string) => text.trim().slice(0, 70);

/** A bank: its BIC, or NOTPROVIDED (IBAN-only, allowed in SEPA since 2016). */
const agent = (bic: string | null) => ({ FinInstnId: bic ? { BIC: bic } : { Othr: { Id: 'NOTPROVIDED' } } });

const sum = (transactions: readonly Pain008Transaction[]) => transactions.reduce((s, t) => s + t.amount, 0);

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true });

/** The pain.008.001.02 document: one PmtInf per sequence type and scheme, totals per group and in all. */
export function renderPain008(source: Pain008Source): string {
  const { creditor } = source;
  const paymentInformation = GROUPS.flatMap(([sequenceType, sepaType]) => {
    const transactions = source.transactions.filter((t) => t.sequenceType === sequenceType && t.sepaType === sepaType);
    if (transactions.length === 0) return [];
    return [
      {
        PmtInfId: paymentGroupId(source.messageId, sequenceType, sepaType),
        PmtMtd: 'DD',
        BtchBookg: true,
        NbOfTxs: transactions.length,
        CtrlSum: decimalAmount(sum(transactions)),
        PmtTpInf: { SvcLvl: { Cd: 'SEPA' }, LclInstrm: { Cd: sepaType === 'core' ? 'CORE' : 'B2B' }, SeqTp: sequenceType },
        ReqdColltnDt: source.collectionDate,
        Cdtr: { Nm: name70(creditor.name) },
        CdtrAcct: { Id: { IBAN: creditor.iban } },
        CdtrAgt: agent(creditor.bic),
        ChrgBr: 'SLEV',
        CdtrSchmeId: { Id: { PrvtId: { Othr: { Id: creditor.identifier, SchmeNm: { Prtry: 'SEPA' } } } } },
        DrctDbtTxInf: transactions.map((t) => ({
          PmtId: { EndToEndId: t.endToEndId },
          InstdAmt: { '@_Ccy': 'EUR', '#text': decimalAmount(t.amount) },
          DrctDbtTx: { MndtRltdInf: { MndtId: t.mandateReference, DtOfSgntr: t.signatureDate } },
          DbtrAgt: agent(t.debtorBic),
          Dbtr: { Nm: name70(t.debtorName) },
          DbtrAcct: { Id: { IBAN: t.debtorIban } },
          RmtInf: { Ustrd: t.remittanceInformation.slice(0, 140) },
        })),
      },
    ];
  });
  return builder.build({
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    Document: {
      '@_xmlns': PAIN_008_NAMESPACE,
      CstmrDrctDbtInitn: {
        GrpHdr: {
          MsgId: source.messageId,
          CreDtTm: source.createdAt.replace(/\.\d+Z$/, 'Z'),
          NbOfTxs: source.transactions.length,
          CtrlSum: decimalAmount(sum(source.transactions)),
          InitgPty: { Nm: name70(creditor.name) },
        },
        PmtInf: paymentInformation,
      },
    },
  }) as string;
}

/** A rejection a status report states: of the whole message, of one payment group, or of one transaction. */
export type Pain002Rejection =
  | { scope: 'message'; reasonCode: string | undefined }
  | { scope: 'group'; paymentGroupId: string; reasonCode: string | undefined }
  | { scope: 'transaction'; endToEndId: string; reasonCode: string | undefined };

export interface Pain002Report {
  originalMessageId: string;
  rejections: Pain002Rejection[];
}

const ARRAYS = new Set(['OrgnlPmtInfAndSts', 'TxInfAndSts', 'StsRsnInf']);
const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  processEntities: false,
  isArray: (tagName) => ARRAYS.has(tagName),
});

type Node = Record<string, unknown>;
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
const reasonOf = (node: Node): string | undefined => {
  const first = (node.StsRsnInf as Node[] | undefined)?.[0];
  return text(((first?.Rsn as Node | undefined) ?? {}).Cd);
};

/**
 * The rejections (status RJCT) of a pain.002 customer payment status report, any version 001.03 and
 * later (namespace prefixes ignored). A document with a DOCTYPE is refused (no entity expansion);
 * `problem` is called with why a document is not a status report.
 */
export function parsePain002(xml: string, problem: (message: string) => Error): Pain002Report {
  if (/<!DOCTYPE/i.test(xml)) throw problem('must not contain a DOCTYPE declaration');
  let parsed: Node;
  try {
    parsed = parser.parse(xml, true) as Node;
  } catch (err) {
    throw problem(`is not well-formed XML: ${(err as { err?: { msg?: string } }).err?.msg ?? (err as Error).message}`);
  }
  const report = (parsed.Document as Node | undefined)?.CstmrPmtStsRpt as Node | undefined;
  const group = report?.OrgnlGrpInfAndSts as Node | undefined;
  const originalMessageId = text(group?.OrgnlMsgId);
  if (!report || !group || !originalMessageId) {
    throw problem('must be a pain.002 status report: Document/CstmrPmtStsRpt with OrgnlGrpInfAndSts/OrgnlMsgId');
  }
  const rejections: Pain002Rejection[] = [];
  if (text(group.GrpSts) === 'RJCT') rejections.push({ scope: 'message', reasonCode: reasonOf(group) });
  for (const info of (report.OrgnlPmtInfAndSts as Node[] | undefined) ?? []) {
    const paymentGroup = text(info.OrgnlPmtInfId);
    if (paymentGroup && text(info.PmtInfSts) === 'RJCT') rejections.push({ scope: 'group', paymentGroupId: paymentGroup, reasonCode: reasonOf(info) });
    for (const tx of (info.TxInfAndSts as Node[] | undefined) ?? []) {
      const endToEndId = text(tx.OrgnlEndToEndId);
      if (endToEndId && text(tx.TxSts) === 'RJCT') rejections.push({ scope: 'transaction', endToEndId, reasonCode: reasonOf(tx) });
    }
  }
  return { originalMessageId, rejections };
}
