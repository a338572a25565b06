// One answer and one stream from the router with the official OpenAI Node SDK, as a user's
// Node program asks them. Usage: node chat.mjs BASE_URL MODEL. It prints one JSON line
// ({answer, streamed, chunks}) for test/node/node_sdk_test.go to check, and exits 1 on any error.
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", timeout: 60_000, maxRetries: 2 });
const messages = [{ role: "user", content: "Say hello." }];

const answer = await client.chat.completions.create({ model, messages });
let streamed = "";
let chunks = 0;
const stream = await client.chat.completions.create({ model, messages, stream: true });
for await (const chunk of stream) {
  const text = chunk.choices[0]?.delta?.content ?? "";
  if (text !== "") {
    streamed += text;
    chunks++;
  }
}
console.log(JSON.stringify({ answer: answer.choices[0].message.content, streamed, chunks }));
