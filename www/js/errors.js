// Every error the page's own JavaScript makes, in one place: an `Error` with a `code` (one of
// JS_CODES) and `details`, as the core's errors come from wasm, so error-text.js words both
// kinds alike in the reader's language. The English message is the one a person reads in
// English; the Korean words for each code are in strings/errors.js.

/** The codes JavaScript gives errors, beside the core's (src/error.rs). */
export const JS_CODES = [
  "model_not_loaded",
  "run_freed",
  "bad_source",
  "bad_operation",
  "bad_model_id",
  "foreign_host",
  "files_missing",
  "bad_index",
  "fetch_failed",
  "fetch_status",
  "no_safetensors",
  "model_too_large",
  "worker_failed",
  "thread_stopped",
  "computation_stopped",
  "training_lost",
  "trusted_types",
  "empty_text",
  "nothing_drawn",
  "cannot_save",
  "files_gone",
  "chunk_failed",
  "untrained_heads",
  "empty_corpus",
  "too_many_sentences",
  "bad_qk_file",
  "qk_file_too_large",
  "file_too_large",
  "cancelled",
  "not_text",
  "needs_model",
  "file_heads_off",
  "src_failed",
  "src_status",
  "bad_data",
  "kept_gone",
  "not_training",
  "bad_write_setting", // the same for Generate's
  "bad_train_setting", // the page checks its training settings against its own limits, worded as the core's
  "file", // a file's problem the page finds before the core (too large), worded as the core's
];

export class CodedError extends Error {
  constructor(message, code, details = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** An error of `code` with `details` (the values its wording fills in). */
export function coded(message, code, details = {}) {
  return new CodedError(message, code, details);
}

/** A part of the widget (a view, the page's words) that could not be fetched. */
export function chunkFailed(e) {
  return coded(`part of the widget could not be loaded: ${e?.message ?? e}`, "chunk_failed");
}

/** An error as it crossed from the worker (`{ message, code, details }`), an Error again. */
export function revive({ message, code, details }) {
  return new CodedError(message, code, details);
}
