import { agentTools } from '@tms/agent-tools';

let i = 0,
  o = 0,
  r = 0;
for (const t of agentTools('memory').tools) {
  const d = t.definition;
  i += JSON.stringify(d.inputSchema).length;
  o += JSON.stringify(d.outputSchema).length;
  r += JSON.stringify({ ...d, inputSchema: 0, outputSchema: 0 }).length;
}
console.log({ i, o, r }, JSON.stringify({ tools: agentTools('memory').tools.map((t) => t.definition) }).length);
