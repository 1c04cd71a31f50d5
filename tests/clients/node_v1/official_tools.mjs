// Lists the official memory server's tools (@modelcontextprotocol/server-memory) with the TypeScript SDK v1
// client and prints them as one JSON line, for tests/clients/test_official_hints.py.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const server = "node_modules/@modelcontextprotocol/server-memory/dist/index.js";
const transport = new StdioClientTransport({
  command: "node",
  args: [server],
  env: { ...process.env, MEMORY_FILE_PATH: process.argv[2] },
  stderr: "ignore",
});
const client = new Client({ name: "hints", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
await client.close();
process.stdout.write(JSON.stringify(tools) + "\n");
