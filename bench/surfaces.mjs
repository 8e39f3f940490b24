// The same read operation through POST /mcp (stateless tools/call, full tool set) and through its
// REST route, under the same concurrent load on 127.0.0.1. Target: MCP/REST >= 0.3.
import { load, report, startServer, tempDb } from './lib.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);

export async function benchSurfaces() {
  const server = await startServer(tempDb('surfaces'));
  try {
    const auth = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
    const post = (path, body) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) }).then((r) => r.json());
    await post('/catalogue/units', { name: 'call' });
    const m = await post('/catalogue/measurements', { unit: 'call', code: 'api_calls', aggregationType: 'sum', type: 'metered' });

    const rest = { url: `${server.url}/catalogue/measurements/${m.id}`, headers: auth, duration: DURATION };
    const mcp = {
      url: `${server.url}/mcp`,
      method: 'POST',
      headers: { ...auth, accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_measurement', arguments: { id: m.id } } }),
      duration: DURATION,
    };
    await load({ ...rest, duration: 2 });
    await load({ ...mcp, duration: 2 });
    const restFigures = await load(rest);
    const mcpFigures = await load(mcp);
    const figures = {
      rest: restFigures,
      mcp: mcpFigures,
      ratio: Number((mcpFigures.requestsPerSecond / restFigures.requestsPerSecond).toFixed(3)),
      target: '>= 0.3',
    };
    report('surfaces: get_measurement via /mcp vs REST, 50 connections', figures);
    return figures;
  } finally {
    server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSurfaces();
