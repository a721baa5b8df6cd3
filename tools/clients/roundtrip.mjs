// A day-one client of the ledger, written from schema/openapi.yaml with Node's own fetch (18+):
// appends an order (a JSON array, with an Idempotency-Key), sends the same request again (the
// original positions come back), reads the order's stream back by its percent-encoded id, follows
// the live tail to the appended fact, and audits. A token with the append, read and audit scopes
// is read from LEDGER_TOKEN.
//
//     LEDGER_TOKEN=... node tools/clients/roundtrip.mjs http://127.0.0.1:8080 ORDER_ID
const [base, order] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${process.env.LEDGER_TOKEN}` };

async function call(method, path, body, headers = {}) {
  const response = await fetch(base + path, { method, body, headers: { ...auth, ...headers } });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return [response.status, await response.text()];
}

const fact = {
  stream: `order:${order}`, type: "OrderCreated", occurredAt: "2026-03-31T08:15:00Z",
  idempotencyKey: `order:${order}:created`, expectedVersion: "no-stream",
  payload: { orderId: order, userId: "u_roundtrip", channel: "appstore", productId: "coins_100", amount: 600, currency: "CNY" },
};
const headers = { "Content-Type": "application/json", "Idempotency-Key": `roundtrip-${order}` };
let [status, text] = await call("POST", "/v1/events", JSON.stringify([fact]), headers);
const position = JSON.parse(text).events[0].position;
console.log(`appended ${status} position ${position}`);
[status, text] = await call("POST", "/v1/events", JSON.stringify([fact]), headers);
const again = JSON.parse(text).events[0];
console.log(`retried ${status} position ${again.position} alreadyStored ${again.alreadyStored}`);
[status, text] = await call("GET", "/v1/streams/" + encodeURIComponent(fact.stream));
const events = text.split("\n").filter((line) => line).map((line) => JSON.parse(line));
console.log(`read ${events.length} events of ${events[0].stream}`);
const tail = await fetch(`${base}/v1/events`, { headers: { ...auth, Accept: "text/event-stream", "Last-Event-ID": String(position - 1) } });
const decoder = new TextDecoder();
let buffered = "";
outer: for await (const chunk of tail.body) {
  buffered += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, end);
    buffered = buffered.slice(end + 1);
    if (line.startsWith("data: ")) {
      const followed = JSON.parse(line.slice(6));
      console.log(`followed position ${followed.position} ${followed.type}`);
      break outer;
    }
  }
}
[status, text] = await call("GET", "/v1/audit");
const report = JSON.parse(text);
console.log(`audited ${report.summary.findings} findings as of position ${report.scope.position}`);
