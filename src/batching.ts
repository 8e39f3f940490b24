import DataLoader from 'dataloader';
import { Turn } from './turn.js';

/**
 * Natural batching of concurrent calls, one batch at a time: with no batch in flight, a call goes out
 * at once (after the event loop's poll phase, with the calls that arrived in it); calls that arrive
 * while a batch is in flight wait for it and go out together as the next (up to `maxBatchSize` each).
 * Under load, batches grow with the time a batch takes; alone, a call waits for nothing. One batch at
 * a time gave the largest batches and the least CPU per call: two or four in flight were no faster
 * (docs/performance.md, "PostgreSQL"). Nothing is cached: every call reaches `fn`, which answers one
 * value or Error per key, in order (an Error rejects only its own call).
 */
export function naturalBatches<K, V>(fn: (keys: readonly K[]) => Promise<ReadonlyArray<V | Error>>, maxBatchSize: number): DataLoader<K, V> {
  const inFlight = new Turn();
  const finished = () => inFlight.give();
  return new DataLoader<K, V>(
    (keys) => {
      const batch = fn(keys);
      batch.then(finished, finished);
      return batch;
    },
    {
      cache: false,
      maxBatchSize,
      batchScheduleFn: (dispatch) => {
        const go = () => setImmediate(dispatch);
        const wait = inFlight.take();
        if (wait) void wait.then(go);
        else go();
      },
    },
  );
}
