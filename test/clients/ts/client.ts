// The TypeScript client openapi-typescript + openapi-fetch make of the
// gateway's OpenAPI document, run against a running gateway by
// TestGeneratedClients (test/): create a workflow with a document, wait for
// its round, read its messages, download a document and decode a 404
// problem. Prints "ok", or throws.
//
// Compiled with strict: it type-checks only if always-sent arrays and
// problem fields are neither nullable nor optional.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

declare const process: { env: Record<string, string | undefined> };

type WorkflowStatus = components["schemas"]["WorkflowStatus"];
type MessageView = components["schemas"]["MessageView"];
type Problem = components["schemas"]["ErrorModel"];

const noteText = "Quarterly numbers: 42";

async function main(): Promise<void> {
  const client = createClient<paths>({
    baseUrl: process.env.GATEWAY_URL,
    headers: { Authorization: `Bearer ${process.env.GATEWAY_TOKEN}` },
  });

  const created = await client.POST("/api/v1/workflows", {
    body: { prompt: "Summarise the notes", documents: [{ name: "notes.txt", content: btoa(noteText) }] },
  });
  if (created.error || created.response.status !== 201) {
    throw new Error(`create: ${created.response.status} ${JSON.stringify(created.error)}`);
  }
  const id: string = created.data.id;
  const location = created.response.headers.get("Location");
  if (location !== `/api/v1/workflows/${id}`) throw new Error(`create: Location ${location}`);

  let status: WorkflowStatus = created.data.status;
  while (status === "running") {
    await new Promise((r) => setTimeout(r, 50));
    const got = await client.GET("/api/v1/workflows/{id}", { params: { path: { id } } });
    if (got.error) throw new Error(`get: ${got.error.detail}`);
    status = got.data.status;
  }
  if (status !== "completed") throw new Error(`workflow ended ${status}, want completed`);

  const list = await client.GET("/api/v1/workflows/{id}/messages", { params: { path: { id } } });
  if (list.error) throw new Error(`messages: ${list.error.detail}`);
  // No `?? []`: the arrays are typed as always sent.
  const messages: MessageView[] = list.data.messages;
  const learnings: string[] = messages.flatMap((m) => m.learnings);
  const user = messages.find((m) => m.role === "user" && m.documents.length > 0);
  if (!user) throw new Error(`no user message with a document among ${messages.length} (${learnings.length} learnings)`);

  const dl = await client.GET("/api/v1/workflows/{id}/documents/{docId}", {
    params: { path: { id, docId: user.documents[0].id } },
    parseAs: "blob",
  });
  if (dl.error || !dl.data) throw new Error(`download: ${dl.response.status}`);
  const text = await dl.data.text();
  if (text !== noteText) throw new Error(`download: ${JSON.stringify(text)}, want ${JSON.stringify(noteText)}`);

  const missing = await client.GET("/api/v1/workflows/{id}", {
    params: { path: { id: "wf_00000000000000000000000000" } },
  });
  if (!missing.error) throw new Error(`get missing: ${missing.response.status}, no problem`);
  // Always-sent problem fields are plain strings and numbers.
  const problem: Problem = missing.error;
  const fields: [string, string, string, number] = [problem.type, problem.title, problem.detail, problem.status];
  if (problem.status !== 404 || fields.some((f) => f === "")) {
    throw new Error(`get missing: ${JSON.stringify(problem)}`);
  }
  console.log("ok");
}

await main();
