// Runs worker.js once per thread count and keeps what each measured in globalThis.results.
globalThis.measure = async (threadCounts, reps) => {
  const results = [];
  for (const threads of threadCounts) {
    const worker = new Worker(`worker.js?threads=${threads}&reps=${reps}`, { type: "module" });
    results.push(
      await new Promise((ok, fail) => {
        worker.onmessage = ({ data }) => (data.error ? fail(new Error(data.error)) : ok(data));
        worker.onerror = (e) => fail(new Error(e.message));
      }),
    );
    worker.terminate();
  }
  return results;
};
globalThis.ready = true;
