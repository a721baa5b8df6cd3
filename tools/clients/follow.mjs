// Follows the ledger's live tail (GET /v1/events, Server-Sent Events) with Node's own fetch (18+).
// Follows the ledger's live tail from after `last`, calling onFact(position, factJSON) for each fact.
async function follow(base, token, last, onFact) {
  const response = await fetch(`${base}/v1/events`, {
    headers: { Accept: "text/event-stream", Authorization: `Bearer ${token}`, "Last-Event-ID": String(last) },
  });
  const decoder = new TextDecoder();
  let buffered = "", position = null;
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      if (line.startsWith("id: ")) position = Number(line.slice(4));
      else if (line.startsWith("data: ")) { if (onFact(position, JSON.parse(line.slice(6))) === false) return; }
    }
  }
}

// node tools/clients/follow.mjs http://127.0.0.1:8080 [after] [count], with LEDGER_TOKEN set.
const [base = "http://127.0.0.1:8080", after = "0", count = "0"] = process.argv.slice(2);
let seen = 0;
await follow(base, process.env.LEDGER_TOKEN, Number(after), (position, fact) => {
  console.log(position, JSON.stringify(fact));
  return Number(count) === 0 || ++seen < Number(count);
});
