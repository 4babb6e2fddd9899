// Runs a bench's worker (worker.js unless named) once per thread count and answers what each measured.
globalThis.measure = async (threadCounts, reps, script = "worker.js") => {
  const results = [];
  for (const threads of threadCounts) {
    const worker = new Worker(`${script}${script.includes("?") ? "&" : "?"}threads=${threads}&reps=${reps}`, { type: "module" });
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
