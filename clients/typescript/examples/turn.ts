// One whole bot turn with the TypeScript client (clients/typescript/README.md shows this file):
//   CLARA_URL=http://127.0.0.1:8000 CLARA_API_KEY=clara_... npm run build && npm run turn
import { randomUUID } from "node:crypto";

import { createClaraClient, ok } from "../src/index.js";

const clara = createClaraClient({
  baseUrl: process.env.CLARA_URL ?? "http://127.0.0.1:8000",
  apiKey: process.env.CLARA_API_KEY ?? "",
});

async function askLlm(
  systemPrompt: string,
  messages: { role: string; content: string }[],
  maxTokens: number,
): Promise<string> {
  return "You're at home, and it's a lovely sunny morning."; // your LLM here
}

// 1. Resume or start the conversation. The bot chooses the session id, so a retry resumes the
//    same session instead of starting another.
const session = ok(
  await clara.POST("/api/v1/sessions", {
    body: { session_id: randomUUID(), user_id: randomUUID(), display_name: "Nana" },
  }),
);
const path = { session_id: session.session_id };

// 2. Before answering: exactly what the LLM sees (stores nothing).
const message = "Where am I?";
const context = ok(
  await clara.POST("/api/v1/sessions/{session_id}/context", { params: { path }, body: { message } }),
);
const reply = await askLlm(context.system_prompt, context.messages, context.max_tokens);

// 3. After answering: store the exchange. Send the same idempotency key on every retry and it is
//    stored once (201 stored, 200 a retry of a stored exchange, 202 kept for later).
const stored = ok(
  await clara.POST("/api/v1/sessions/{session_id}/exchanges", {
    params: { path },
    body: { user_message: message, assistant_message: reply, idempotency_key: randomUUID() },
  }),
);

// 4. The conversation is over (no body needed).
const closed = ok(await clara.POST("/api/v1/sessions/{session_id}/close", { params: { path } }));

console.log(
  JSON.stringify({
    session_id: closed.session_id,
    status: closed.status,
    message_count: closed.message_count,
    stored: "user_message" in stored ? stored.user_message.sequence_number : "pending",
    context_messages: context.messages.length,
  }),
);
