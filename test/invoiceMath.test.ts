import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { divideRounded } from '../src/values/decimal.js';
import { invoiceTotals, lineNetAmount } from '../src/domain/invoices.js';
import { rateToE4 } from '../src/values/money.js';
import { allocatePayment, overdueCutoff, scheduleDates, splitAmount } from '../src/domain/paymentPlans.js';
import type { Installment } from '../src/schemas/paymentPlans.js';
import { outcomeOf } from '../src/webhooks/delivery.js';
import { bodySignature, deliveryHeaders, standardSignature } from '../src/webhooks/signing.js';

describe('divideRounded (half away from zero)', () => {
  it.each([
    [5n, 2n, 3n],
    [4n, 2n, 2n],
    [7n, 3n, 2n],
    [8n, 3n, 3n],
    [-5n, 2n, -3n],
    [5n, -2n, -3n],
    [-7n, 3n, -2n],
    [1n, 3n, 0n],
    [0n, 7n, 0n],
    [149n, 100n, 1n],
    [150n, 100n, 2n],
    [-150n, 100n, -2n],
  ])('%s / %s = %s', (n, d, q) => {
    expect(divideRounded(n, d)).toBe(q);
  });
});

describe('lineNetAmount', () => {
  it.each([
    ['1', 1999, 1999],
    ['3', 333, 999],
    ['2', -500, -1000],
    ['0.5', 3, 2],
    ['0.5', 1, 1],
    ['0.5', -1, -1],
    ['1.25', 10, 13],
    ['1.24', 10, 12],
    ['0.333333', 300, 100],
    ['12.5', 1999, 24988],
    ['1000000', 999_999, 999_999_000_000],
  ])('%s x %s cents = %s cents', (q, unit, net) => {
    expect(lineNetAmount(q, unit)).toBe(net);
  });

  it('refuses a line beyond the largest amount instead of losing precision', () => {
    expect(() => lineNetAmount('1000000', 1_000_000_000_000)).toThrow(RangeError);
  });
});

describe('rateToE4', () => {
  it.each([
    [19, 190000],
    [7, 70000],
    [8.1, 81000],
    [5.5, 55000],
    [0, 0],
    [100, 1000000],
    [0.0001, 1],
    [19.1234, 191234],
    [19.12345, undefined],
    [1e-7, undefined],
  ])('%s %% is %s', (rate, e4) => {
    expect(rateToE4(rate)).toBe(e4);
  });
});

describe('invoiceTotals', () => {
  it('taxes each rate on the summed net, not line by line', () => {
    // Line by line 3 x round(0.57) = 3 cents; on the summed net round(9 x 19 %) = round(1.71) = 2 cents.
    const lines = [1, 2, 3].map(() => ({ netAmount: 3, taxRateE4: 190000 }));
    expect(invoiceTotals(lines)).toEqual({
      netAmount: 9,
      taxAmount: 2,
      grossAmount: 11,
      taxes: [{ rateE4: 190000, netAmount: 9, taxAmount: 2 }],
    });
  });

  it('keeps one entry per rate in order of appearance, and adds them up', () => {
    const totals = invoiceTotals([
      { netAmount: 10000, taxRateE4: 190000 },
      { netAmount: 2550, taxRateE4: 70000 },
      { netAmount: 1234, taxRateE4: 190000 },
      { netAmount: 999, taxRateE4: 0 },
    ]);
    expect(totals.taxes).toEqual([
      { rateE4: 190000, netAmount: 11234, taxAmount: 2134 },
      { rateE4: 70000, netAmount: 2550, taxAmount: 179 },
      { rateE4: 0, netAmount: 999, taxAmount: 0 },
    ]);
    expect(totals).toMatchObject({ netAmount: 14783, taxAmount: 2313, grossAmount: 17096 });
  });

  it('rounds half-up to the cent (and negative sums away from zero)', () => {
    expect(invoiceTotals([{ netAmount: 50, taxRateE4: 10000 }]).taxAmount).toBe(1);
    expect(invoiceTotals([{ netAmount: 49, taxRateE4: 10000 }]).taxAmount).toBe(0);
    expect(invoiceTotals([{ netAmount: 250, taxRateE4: 190000 }]).taxAmount).toBe(48);
    expect(invoiceTotals([{ netAmount: -250, taxRateE4: 190000 }]).taxAmount).toBe(-48);
    expect(invoiceTotals([{ netAmount: 1, taxRateE4: 500000 }]).taxAmount).toBe(1);
  });

  it('is all zero without lines', () => {
    expect(invoiceTotals([])).toEqual({ netAmount: 0, taxAmount: 0, grossAmount: 0, taxes: [] });
  });
});

describe('splitAmount', () => {
  it.each([
    [10000, 3, [3333, 3333, 3334]],
    [100, 4, [25, 25, 25, 25]],
    [7, 7, [1, 1, 1, 1, 1, 1, 1]],
    [11, 2, [5, 6]],
    [5, 1, [5]],
  ])('%s in %s installments', (total, count, amounts) => {
    expect(splitAmount(total, count)).toEqual(amounts);
    expect(amounts.reduce((a, b) => a + b, 0)).toBe(total);
  });
});

describe('scheduleDates', () => {
  it.each([
    ['2026-01-31', '1M', 4, ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30']],
    ['2028-01-31', '1M', 2, ['2028-01-31', '2028-02-29']],
    ['2026-12-01', '2W', 3, ['2026-12-01', '2026-12-15', '2026-12-29']],
    ['2026-12-30', '3D', 2, ['2026-12-30', '2027-01-02']],
    ['2028-02-29', '1Y', 2, ['2028-02-29', '2029-02-28']],
    ['2026-11-30', '3M', 3, ['2026-11-30', '2027-02-28', '2027-05-30']],
  ])('%s every %s, %s times', (first, interval, count, dates) => {
    expect(scheduleDates(first, interval, count)).toEqual(dates);
  });
});

describe('overdueCutoff', () => {
  it.each([
    ['2026-03-09T00:00:00Z', 7, '2026-03-01'],
    ['2026-03-08T23:59:59Z', 7, '2026-02-28'],
    ['2026-03-02T00:00:00Z', 0, '2026-03-01'],
    ['2026-03-01T23:59:59Z', 0, '2026-02-28'],
  ])('at %s with %s grace days, installments due on or before the cutoff are overdue', (now, grace, cutoff) => {
    expect(overdueCutoff(new Date(now), grace)).toBe(cutoff);
  });
});

describe('allocatePayment', () => {
  const open = (position: number, amount: number, amountPaid = 0): Installment => ({
    id: `i${position}`,
    position,
    dueAt: `2026-0${position}-01`,
    amount,
    amountPaid,
    status: 'open',
    paidAt: null,
  });
  const at = '2026-05-01T10:00:00.000Z';

  it('covers the oldest open installment first and reports each fully covered one', () => {
    const { installments, steps } = allocatePayment([open(1, 100), open(2, 100), open(3, 100)], 250, at);
    expect(installments.map((i) => [i.status, i.amountPaid, i.paidAt])).toEqual([
      ['paid', 100, at],
      ['paid', 100, at],
      ['open', 50, null],
    ]);
    expect(steps.map((s) => s.installment.id)).toEqual(['i1', 'i2']);
    expect(steps[0]!.installments.map((i) => i.status)).toEqual(['paid', 'open', 'open']);
    expect(steps[1]!.installments.map((i) => i.amountPaid)).toEqual([100, 100, 0]);
  });

  it('adds to a partly paid installment and skips paid ones', () => {
    const paid: Installment = { ...open(1, 100, 100), status: 'paid', paidAt: at };
    const { installments, steps } = allocatePayment([paid, open(2, 100, 60), open(3, 100)], 40, at);
    expect(installments.map((i) => i.amountPaid)).toEqual([100, 100, 0]);
    expect(steps.map((s) => s.installment.id)).toEqual(['i2']);
  });

  it('a payment smaller than the next installment covers none fully', () => {
    const { installments, steps } = allocatePayment([open(1, 100)], 99, at);
    expect(installments[0]).toMatchObject({ status: 'open', amountPaid: 99, paidAt: null });
    expect(steps).toEqual([]);
  });
});

describe('outcomeOf (3 retries on the configured delays)', () => {
  const at = new Date('2026-11-01T00:00:00Z');
  const delays = [10, 300, 1800];

  it('is delivered on success', () => {
    expect(outcomeOf(true, 2, at, delays)).toEqual({
      status: 'delivered',
      roundAttempts: 2,
      nextAttemptAt: null,
      deliveredAt: '2026-11-01T00:00:00.000Z',
    });
  });

  it.each([
    [1, '2026-11-01T00:00:10.000Z'],
    [2, '2026-11-01T00:05:00.000Z'],
    [3, '2026-11-01T00:30:00.000Z'],
  ])('after failed attempt %s the next one waits its delay', (attempt, next) => {
    expect(outcomeOf(false, attempt, at, delays)).toMatchObject({ status: 'pending', nextAttemptAt: next });
  });

  it('fails for good after the 3rd retry (4 attempts)', () => {
    expect(outcomeOf(false, 4, at, delays)).toMatchObject({ status: 'failed', nextAttemptAt: null });
  });

  it('repeats the last delay when fewer than 3 are configured', () => {
    expect(outcomeOf(false, 3, at, [5]).nextAttemptAt).toBe('2026-11-01T00:00:05.000Z');
  });
});

describe('signing', () => {
  const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  const body = '{"event":{"id":"01J0000000000000000000000A"},"data":{"x":"ü"}}';

  it('X-Webhook-Signature is the hex HMAC-SHA256 of the body keyed with the secret string', () => {
    expect(bodySignature(secret, body)).toBe(createHmac('sha256', secret).update(body).digest('hex'));
    expect(bodySignature(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('webhook-signature verifies with the standardwebhooks library', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = deliveryHeaders({
      id: 'msg_1',
      eventType: 'payment_plan.created',
      eventVersion: 'v1',
      organisationId: 'org',
      secret,
      body,
      timestamp,
    });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toBe(standardSignature(secret, 'msg_1', timestamp, body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });
});
