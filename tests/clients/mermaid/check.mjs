// Parses the Mermaid diagram on standard input with Mermaid's own parser; prints {"ok", "type"} or {"ok", "error"}.
// Mermaid expects a DOM (DOMPurify): jsdom gives it one, so no browser is needed.
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");

let text = "";
for await (const chunk of process.stdin) text += chunk;
try {
  const result = await mermaid.parse(text);
  console.log(JSON.stringify({ ok: true, type: result.diagramType }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error.message || error).slice(0, 500) }));
}
