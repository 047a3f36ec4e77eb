// The official A2A client (@a2a-js/sdk) against the built gateway, for
// test/gateway_a2a_test.go. Environment: TWOSTEP_A2A_SDK (a node_modules
// folder holding @a2a-js/sdk), A2A_BASE (the gateway the client starts
// tasks on), A2A_BASE2 (where it reads them back: another instance on
// Redis), ALICE and BOB (tokens), PUSH_URL and PUSH_TOKEN, A2A_TRANSPORT
// (the card's binding to prefer: JSONRPC or HTTP+JSON). Each check
// prints one JSON line {check, ...}; a failed check throws (exit 1).
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = await import(pathToFileURL(join(process.env.TWOSTEP_A2A_SDK, "@a2a-js/sdk/dist/client/index.js")).href);
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } = sdk;
const env = process.env;
const base2 = env.A2A_BASE2 || env.A2A_BASE;

// The SDK's enums as numbers (proto-JSON TASK_STATE_* on the wire).
const ROLE_USER = 1;
const COMPLETED = 3, CANCELED = 5, INPUT_REQUIRED = 6, WORKING = 2;

function fail(msg) { throw new Error(msg); }
function report(check, fields) { console.log(JSON.stringify({ check, ...fields })); }

// clientFor resolves the card at base with ClientFactory.createFromUrl;
// every call of the transport carries token.
async function clientFor(base, token) {
  const fetchImpl = (url, init = {}) =>
    fetch(url, { ...init, headers: { ...(init.headers || {}), Authorization: `Bearer ${token}` } });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [env.A2A_TRANSPORT || "JSONRPC"],
  }));
  const client = await factory.createFromUrl(base);
  if (client.transport.protocolName !== (env.A2A_TRANSPORT || "JSONRPC")) fail(`transport ${client.transport.protocolName}`);
  return client;
}

const text = (t) => ({ content: { $case: "text", value: t }, filename: "", mediaType: "" });
const message = (parts, extra = {}) => ({ messageId: randomUUID(), role: ROLE_USER, parts, ...extra });
const textOf = (parts) => parts.filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");

const alice = await clientFor(env.A2A_BASE, env.ALICE);
const alice2 = await clientFor(base2, env.ALICE);
const bob = await clientFor(base2, env.BOB);

// The card.
{
  const card = alice.agentCard;
  const skills = card.skills.map((s) => s.id);
  if (!skills.includes("document.generate") || !card.capabilities.streaming || !card.capabilities.pushNotifications) {
    fail(`card: ${JSON.stringify(card)}`);
  }
  if (!card.securitySchemes.bearer) fail(`card security: ${JSON.stringify(card.securitySchemes)}`);
  report("card", { skills: skills.length });
}

// A message sent to completion (blocking), then read back on the other
// instance.
const done = await alice.sendMessage({ message: message([text("sendtag write a note")]) });
{
  if (done.status.state !== COMPLETED) fail(`send: ${JSON.stringify(done)}`);
  const answer = done.artifacts.find((a) => a.name === "answer");
  const file = done.artifacts.find((a) => a.parts[0].content.$case === "url");
  if (!answer || textOf(answer.parts) !== "final answer for sendtag") fail(`send artifacts: ${JSON.stringify(done.artifacts)}`);
  if (!file || !file.parts[0].content.value.includes(`/api/v1/workflows/${done.contextId}/documents/`)) {
    fail(`send document: ${JSON.stringify(done.artifacts)}`);
  }
  const got = await alice2.getTask({ id: done.id });
  if (got.id !== done.id || got.status.state !== COMPLETED || got.artifacts.length !== done.artifacts.length) {
    fail(`get: ${JSON.stringify(got)}`);
  }
  report("send", { task: done.id });
  report("get", { task: got.id });
}

// A second user cannot get the first user's task.
try {
  await bob.getTask({ id: done.id });
  fail("bob got alice's task");
} catch (e) {
  if (e.name !== "TaskNotFoundError") throw e;
  report("isolation", { error: e.name });
}

// A streamed send: the task, working status updates, the answer artifact,
// the final status.
{
  const events = [];
  for await (const ev of alice.sendMessageStream({ message: message([text("streamtag write a note")]) })) {
    events.push(ev.payload);
  }
  const [first, last] = [events[0], events[events.length - 1]];
  const statuses = events.filter((e) => e.$case === "statusUpdate");
  const answer = events.find((e) => e.$case === "artifactUpdate" && e.value.artifact.name === "answer");
  if (first.$case !== "task" || last.$case !== "statusUpdate" || last.value.status.state !== COMPLETED) {
    fail(`stream ends: ${JSON.stringify(events)}`);
  }
  if (!answer || textOf(answer.value.artifact.parts) !== "final answer for streamtag") fail(`stream artifact: ${JSON.stringify(events)}`);
  if (!statuses.some((e) => e.value.status.state === WORKING)) fail(`stream: no working update in ${JSON.stringify(events)}`);
  report("stream", { events: events.length, statusUpdates: statuses.length });
}

// Cancel of a slow round (the test's model holds "slowtag"'s calls).
{
  const slow = await alice.sendMessage({ message: message([text("slowtag take your time")]), configuration: { returnImmediately: true } });
  if (slow.status.state !== WORKING) fail(`slow: ${JSON.stringify(slow)}`);
  // Resubscribed on the other instance: the stream starts with the task
  // and ends with its cancel, made through the first.
  const sub = alice2.resubscribeTask({ id: slow.id })[Symbol.asyncIterator]();
  const head = await sub.next();
  if (head.done || head.value.payload.$case !== "task" || head.value.payload.value.id !== slow.id) {
    fail(`resubscribe: ${JSON.stringify(head)}`);
  }
  const canceled = await alice.cancelTask({ id: slow.id });
  if (canceled.status.state !== CANCELED) fail(`cancel: ${JSON.stringify(canceled)}`);
  let tail;
  for (let r = await sub.next(); !r.done; r = await sub.next()) tail = r.value.payload;
  if (tail?.$case !== "statusUpdate" || tail.value.status.state !== CANCELED) fail(`resubscribed stream ended with ${JSON.stringify(tail)}`);
  report("resubscribe", { task: slow.id });
  try {
    await alice2.cancelTask({ id: slow.id });
    fail("a canceled task was canceled again");
  } catch (e) {
    if (e.name !== "TaskNotCancelableError") throw e;
  }
  report("cancel", { task: slow.id });
}

// An approval answered through the input-required state (the gateway
// asks for approval of document.extract, which reads the upload).
{
  const raw = { content: { $case: "raw", value: Buffer.from("the meeting notes") }, filename: "notes.txt", mediaType: "text/plain" };
  const paused = await alice.sendMessage({ message: message([text("approvetag read the notes"), raw]) });
  if (paused.status.state !== INPUT_REQUIRED) fail(`approval: ${JSON.stringify(paused)}`);
  const data = paused.status.message.parts.find((p) => p.content.$case === "data").content.value;
  if (data.action !== "document.extract" || !data.approvalId.startsWith("apr_")) fail(`approval data: ${JSON.stringify(data)}`);
  const answer = message([{ content: { $case: "data", value: { decision: "approve" } } }], { taskId: paused.id, contextId: paused.contextId });
  const approved = await alice2.sendMessage({ message: answer });
  if (approved.id !== paused.id || approved.status.state !== COMPLETED) fail(`approved: ${JSON.stringify(approved)}`);
  report("approval", { task: approved.id, approval: data.approvalId });
}

// A push notification: the config goes with the message that starts the
// context; the test's receiver checks what arrives.
{
  const pushed = await alice.sendMessage({
    message: message([text("pushtag write a note")]),
    configuration: { taskPushNotificationConfig: { url: env.PUSH_URL, token: env.PUSH_TOKEN } },
  });
  if (pushed.status.state !== COMPLETED) fail(`push task: ${JSON.stringify(pushed)}`);
  const configs = await alice2.listTaskPushNotificationConfig({ taskId: pushed.id });
  if (configs.configs.length !== 1 || configs.configs[0].url !== env.PUSH_URL || configs.configs[0].token) {
    fail(`push configs: ${JSON.stringify(configs)}`);
  }
  report("push", { task: pushed.id });
}
