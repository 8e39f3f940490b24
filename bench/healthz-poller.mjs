// GET <url>/healthz every <ms> on one keep-alive connection, from a process of its own, so that the
// latencies are the server's alone and the polling costs the measured process nothing. Started by
// bench/billing.mjs over IPC: it answers `{ latencies }` to the message 'stop', then exits.
import http from 'node:http';

const [url, ms] = [process.argv[2], Number(process.argv[3])];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const latencies = [];
let stopped = false;
process.on('message', (m) => {
  if (m === 'stop') stopped = true;
});

const once = () =>
  new Promise((resolve, reject) => {
    const t = performance.now();
    http
      .get(`${url}/healthz`, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`healthz ${res.statusCode}`));
          latencies.push(performance.now() - t);
          resolve();
        });
      })
      .on('error', reject);
  });

process.send('polling');
while (!stopped) {
  const t = performance.now();
  await once();
  const left = ms - (performance.now() - t);
  if (left > 0) await new Promise((r) => setTimeout(r, left));
}
agent.destroy();
process.send({ latencies }, () => process.exit(0));
