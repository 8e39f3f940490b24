import { describe, expect, it } from 'vitest';
import { naturalBatches } from '../src/batching.js';

/** A batch function whose batches finish when the test says so; it records each batch's keys. */
function controlled() {
  const batches: number[][] = [];
  const finish: Array<() => void> = [];
  let inFlight = 0;
  let most = 0;
  const fn = (keys: readonly number[]) => {
    batches.push([...keys]);
    inFlight++;
    most = Math.max(most, inFlight);
    return new Promise<Array<string | Error>>((resolve) =>
      finish.push(() => {
        inFlight--;
        resolve(keys.map((k) => (k < 0 ? new Error(`refused ${k}`) : `v${k}`)));
      }),
    );
  };
  return { fn, batches, finish, most: () => most };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('naturalBatches', () => {
  it('sends a call alone at once; calls arriving while a batch is in flight go out together after it', async () => {
    const c = controlled();
    const load = naturalBatches(c.fn, 100);
    const first = load.load(1);
    await tick();
    expect(c.batches).toEqual([[1]]);
    const rest = [2, 3, 4].map((k) => load.load(k));
    await tick();
    expect(c.batches).toHaveLength(1);
    c.finish.shift()!();
    expect(await first).toBe('v1');
    await tick();
    await tick();
    expect(c.batches).toEqual([[1], [2, 3, 4]]);
    c.finish.shift()!();
    expect(await Promise.all(rest)).toEqual(['v2', 'v3', 'v4']);
  });

  it('keeps one batch in flight and at most maxBatchSize keys in a batch; an Error rejects only its own call', async () => {
    const c = controlled();
    const load = naturalBatches(c.fn, 3);
    const calls: Array<Promise<string>> = [];
    for (let k = 1; k <= 10; k++) {
      calls.push(load.load(k === 5 ? -5 : k).catch((err: Error) => err.message));
      await tick();
    }
    expect(c.batches).toEqual([[1]]);
    while (c.finish.length) {
      c.finish.shift()!();
      await tick();
      await tick();
    }
    const answers = await Promise.all(calls);
    expect(c.most()).toBe(1);
    expect(c.batches.every((b) => b.length <= 3)).toBe(true);
    expect(c.batches.flat().sort((x, y) => x - y)).toEqual([-5, 1, 2, 3, 4, 6, 7, 8, 9, 10]);
    expect(answers).toEqual([
      'v1', 'v2', 'v3', 'v4', 'refused -5', 'v6', 'v7', 'v8', 'v9', 'v10',
    ]);
  });
});
