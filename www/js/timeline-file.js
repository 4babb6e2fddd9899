// A trained model's training timeline, models/<name>/timeline/timeline.json: its checkpoints,
// curves and heads' scores, fetched once per URL and checked for what its readers use (the
// explorer's timeline panel, a widget's `step`). Loaded on first use.

const timelines = new Map(); // URL → Promise of the timeline, or null where it cannot be read

/** The timeline at `url` (a URL or string), checked; null where it cannot be read. A failed fetch is tried again next time. */
export function timelineAt(url) {
  const key = String(url);
  if (!timelines.has(key)) {
    const loading = fetch(key)
      .then((r) => (r.ok ? r.json() : null))
      .then((doc) => (doc?.format === "headmap.timeline" && doc.version === 1 && Array.isArray(doc.checkpoints) && doc.checkpoints.length && Array.isArray(doc.curve) && Array.isArray(doc.heads) ? doc : null))
      .catch(() => null);
    timelines.set(key, loading);
    loading.then((doc) => doc || timelines.delete(key));
  }
  return timelines.get(key);
}

/**
 * The checkpoint of `timeline` nearest `step`: `at`, its step, and `load`, the step whose
 * checkpoint to load in place of the weights — null at the timeline's last step, which is the
 * model as trained.
 */
export function nearestCheckpoint(timeline, step) {
  const at = timeline.checkpoints.reduce((best, c) => (Math.abs(c.step - step) < Math.abs(best - step) ? c.step : best), timeline.checkpoints[0].step);
  return { at, load: at === timeline.steps ? null : at };
}
