#!/usr/bin/env node
/**
 * Stand-in for `catalog serve --workers N` while the serve command does not expose the flag:
 * runs the lead's src/server/cluster.ts (node:cluster, N workers over one PostgreSQL) with the
 * same startServer every `catalog serve` uses. The bench marks figures taken this way
 * "(cluster driver)".
 *   node bench/peers/cluster-driver.js --port P --database-url URL --workers N
 */
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const { isClusterWorker, startCluster } = await import('../../dist/server/cluster.js');
const opts = { port: Number(args.port), host: '127.0.0.1', databaseUrl: args['database-url'] };
if (isClusterWorker()) {
  const { startServer } = await import('../../dist/server/listen.js');
  try {
    const server = await startServer(opts);
    process.send({ type: 'listening', url: server.url });
    process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
  } catch (err) {
    process.send({ type: 'failed', error: err.message });
    process.exit(1);
  }
} else {
  const handle = await startCluster(opts, Number(args.workers ?? 1));
  process.stdout.write(`listening ${handle.url} with ${handle.workers} worker(s)\n`);
  const stop = () => void handle.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
