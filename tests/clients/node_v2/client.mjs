// TypeScript SDK v2 (@modelcontextprotocol/client 2.x) as the client tier's driver; see ../driver.mjs.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { drive } from "./driver.mjs";

await drive({ sdk: "ts-sdk-v2", Client, StdioClientTransport, StreamableHTTPClientTransport });
