// The client tier's driver for the TypeScript SDKs: connect over stdio or streamable HTTP, list and check
// every tool's schemas with Ajv, make the scenario's calls, and print what the agent received as one JSON
// line. It asserts nothing: tests/clients/scenario.py decides. Shared by the v1 and v2 entry points.
import { readFileSync } from "node:fs";
import Ajv from "ajv";

const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });

function compile(schema) {
  try {
    return { validate: ajv.compile(schema), error: null };
  } catch (err) {
    return { validate: null, error: String(err.message ?? err) };
  }
}

export async function drive({ sdk, Client, StdioClientTransport, StreamableHTTPClientTransport }) {
  const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const transport =
    config.transport === "stdio"
      ? new StdioClientTransport({ command: config.command, args: config.args, env: config.env, stderr: "ignore" })
      : new StreamableHTTPClientTransport(new URL(config.url), {
          requestInit: { headers: { Authorization: `Bearer ${config.token}` } },
        });
  const client = new Client({ name: `client-tier-${sdk}`, version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);

  const report = { client: sdk, capabilities: client.getServerCapabilities(), tools: [], schema_errors: [], calls: [] };
  const { tools } = await client.listTools();
  const outputs = {};
  for (const tool of tools) {
    report.tools.push(tool.name);
    const input = compile(tool.inputSchema);
    if (input.error) report.schema_errors.push([tool.name, `inputSchema: ${input.error}`]);
    if (!tool.outputSchema) report.schema_errors.push([tool.name, "no outputSchema"]);
    else {
      const output = compile(tool.outputSchema);
      if (output.error) report.schema_errors.push([tool.name, `outputSchema: ${output.error}`]);
      outputs[tool.name] = output.validate;
    }
  }
  for (const call of config.calls) {
    try {
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      const text = (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
      const validate = outputs[call.name];
      const outputValid = validate ? (validate(result.structuredContent) ? true : ajv.errorsText(validate.errors)) : "no schema";
      report.calls.push({ isError: result.isError === true, structured: result.structuredContent ?? null, text, outputValid });
    } catch (err) {
      report.calls.push({ error: { code: err.code ?? null, message: String(err.message ?? err) } });
    }
  }
  const resources = await client.listResources();
  const templates = await client.listResourceTemplates();
  const read = await client.readResource({ uri: "write-gate://schema" });
  const completion = await client.complete({
    ref: { type: "ref/resource", uri: "write-gate://schema/{name}" },
    argument: { name: "name", value: "Pe" },
  });
  report.resources = {
    list: resources.resources.map((r) => r.uri),
    templates: templates.resourceTemplates.map((t) => t.uriTemplate),
    readOk: JSON.parse(read.contents[0].text).node_labels.length > 0,
    completion: completion.completion.values,
  };
  await client.close();
  process.stdout.write(JSON.stringify(report) + "\n");
}
