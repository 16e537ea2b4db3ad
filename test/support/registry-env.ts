/**
 * The suite's processes run without NODE_EXTRA_CA_CERTS (vitest.config.ts): where a machine sets it
 * (the system's CA bundle), every node start reads and parses those certificates, ≈40–100 ms of a
 * `node -e 0` here, and the suite starts thousands of processes. What talks to the npm registry
 * (npm in the package and clone tests) gets the machine's setting back, which vitest.config.ts
 * keeps in CATALOG_TEST_NODE_CA_CERTS.
 */
export function registryEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const certs = process.env.CATALOG_TEST_NODE_CA_CERTS;
  return { ...env, NODE_EXTRA_CA_CERTS: certs ? certs : undefined };
}
