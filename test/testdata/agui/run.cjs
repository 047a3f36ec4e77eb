// Drives the gateway's POST /api/v1/agui with the official @ag-ui/client
// (HttpAgent, its event verification on) for test/agui_client_test.go:
// a run that pauses on an approval, a resumed run that finishes it (its
// answer streamed), and a resume naming an unknown interrupt. It prints
// one JSON object: each run's events (with the client's receive time),
// and any error a run raised.
const path = require("path");
const { HttpAgent } = require(path.join(process.env.TWOSTEP_AGUI_CLIENT, "@ag-ui/client"));

const url = process.env.GATEWAY_URL + "/api/v1/agui";
const headers = { Authorization: "Bearer " + process.env.GATEWAY_TOKEN };

async function run(agent, params) {
  const events = [];
  let error = null;
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => { events.push({ ...event, receivedAt: Date.now() }); },
    });
  } catch (e) {
    error = String(e && e.message ? e.message : e);
  }
  return { events, error, pending: agent.pendingInterrupts.map((i) => i.id) };
}

(async () => {
  const agent = new HttpAgent({ url, headers, threadId: process.env.THREAD_ID });
  agent.addMessage({ id: "u1", role: "user", content: process.env.PROMPT });
  const paused = await run(agent, {});
  const interrupt = paused.events.find((e) => e.type === "RUN_FINISHED")?.outcome?.interrupts?.[0];
  const resumed = interrupt
    ? await run(agent, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "approve" } }] })
    : null;
  const messages = agent.messages.map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls }));
  const bad = await run(new HttpAgent({ url, headers, threadId: process.env.THREAD_ID }), {
    resume: [{ interruptId: "apr_not_pending", status: "resolved", payload: { decision: "approve" } }],
  });
  process.stdout.write(JSON.stringify({ paused, resumed, bad, messages }));
})().catch((e) => { console.error(e); process.exit(1); });
