// TypeScript SDK v1 (@modelcontextprotocol/sdk 1.x) as the client tier's driver; see ../driver.mjs.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { drive } from "./driver.mjs";

await drive({ sdk: "ts-sdk-v1", Client, StdioClientTransport, StreamableHTTPClientTransport });
