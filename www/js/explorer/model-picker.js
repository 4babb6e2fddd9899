// Choosing the model: the toy (built from a seed), the tiny model trained here, MiniLM, a Hub
// model id, or a folder from this computer. A model that fails to load leaves the one shown in
// place and says why, as an error; a model named by a link says which model and from where.

import { MAX_FILE_BYTES, tooLarge } from "../file-bytes.js";
import { filesToRead, validModelId } from "../model-files.js";
import { FOLDERS, sourceOf } from "../settings.js";

/** The model a page opens on. */
const DEFAULT_MODEL = "trained";

export class ModelPicker {
  constructor(app, { onLoaded }) {
    this.app = app;
    this.onLoaded = onLoaded;
    this.status = null; // [key, values] of the status line, so a language switch rewords it
    const $ = app.$;
    $("model").addEventListener("change", () => {
      const choice = $("model").value;
      $("hub-field").hidden = choice !== "hub";
      $("local-field").hidden = choice !== "local";
      $("file-field").hidden = choice !== "file";
      if (choice === "hub") $("hub-id").focus();
      if (!["hub", "local", "file"].includes(choice)) this.choose(choice);
    });
    $("attention-file").addEventListener("change", () => {
      const file = $("attention-file").files[0];
      $("attention-file").value = "";
      if (file) this.openFile(file);
    });
    $("hub-load").addEventListener("click", () => this.chooseHub($("hub-id").value.trim()));
    $("hub-id").addEventListener("keydown", (e) => e.key === "Enter" && $("hub-load").click());
    for (const input of [$("local-folder"), $("local-files")]) {
      input.addEventListener("change", async () => {
        const byPath = new Map([...input.files].map((file) => [file.webkitRelativePath || file.name, file]));
        const folder = [...byPath.keys()][0]?.split("/").slice(0, -1)[0];
        input.value = "";
        let paths;
        try {
          paths = filesToRead([...byPath].map(([path, file]) => ({ path, size: file.size })));
        } catch (e) {
          this.showError({ error: e });
          return;
        }
        const named = {};
        for (const path of paths) named[path] = new Uint8Array(await byPath.get(path).arrayBuffer());
        this.choose("local", { files: named, name: folder });
      });
    }
  }

  /**
   * Weights computed elsewhere (headmap's JSON or safetensors, docs/attention.schema.json) in
   * place of a model: checked by the core; one that fails leaves what is shown and says why.
   */
  async openFile(file) {
    const app = this.app;
    app.busy(true);
    this.setStatus("loading", { model: file.name });
    try {
      if (file.size > MAX_FILE_BYTES) throw tooLarge(file.name, file.size);
      const opened = await app.client.call("openFile", { name: file.name, file: { bytes: new Uint8Array(await file.arrayBuffer()) } });
      if (!opened) return false;
      app.model = { key: opened.key, info: opened.model, choice: "file", name: file.name, where: "file", opened };
      app.set({ layer: null, head: null, place: null, mask: null, row: 0, off: "", model: "file" }, { step: true });
      app.notices.set("clamp", null);
      this.hideError();
      this.showLoaded();
      await this.onLoaded();
      return true;
    } catch (e) {
      app.probe.errors.push(e.message);
      this.showError({ error: e });
      this.showLoaded();
      return false;
    } finally {
      app.busy(false);
    }
  }

  /** The first model: the one the link names, else the default. */
  async start(choice) {
    if (choice === "file") {
      // a link cannot carry a file: the default model, and the file chooser to open it again
      await this.choose(DEFAULT_MODEL);
      this.app.$("model").value = "file";
      this.app.$("file-field").hidden = false;
      this.showError({ key: "fileAgain" });
      return;
    }
    // a model id the link names that the Hub box would refuse is refused the same way
    const refused = this.app.state.refusedModel;
    const fromLink = new URLSearchParams(location.search).has("model") && !refused;
    if (choice.startsWith("hub:")) {
      this.app.$("hub-id").value = choice.slice(4);
      this.app.$("hub-field").hidden = false;
    }
    const ok = await this.choose(choice, { fromLink });
    if (ok && refused) {
      this.showError({ key: "badModelId" });
      if (refused.startsWith("hub:")) {
        // the refused id stays in view in its field, to be corrected as a typed one would
        this.app.$("model").value = "hub";
        this.app.$("hub-field").hidden = false;
        this.app.$("hub-id").value = refused.slice(4);
      }
    }
    if (ok) return;
    // Nothing is shown yet: show the default model, but keep the error in view, the link's
    // model in the link (a reload retries it) and, for a Hub id, the field to retry it now.
    // The fallback is another model: the head it suggests is shown, none is off and no
    // query–key head is picked, since the link's "layer.head" names heads of the model that
    // failed, not of this one.
    const failed = this.error;
    const fallback = choice === DEFAULT_MODEL ? "toy" : DEFAULT_MODEL;
    this.app.set({ layer: null, head: null, off: "", qk: "" });
    await this.choose(fallback, { keepError: true });
    this.app.set({ model: choice });
    if (choice.startsWith("hub:")) {
      this.app.$("model").value = "hub";
      this.app.$("hub-field").hidden = false;
    }
    if (failed) this.showError(failed);
  }

  chooseHub(id) {
    if (!validModelId(id)) {
      this.showError({ key: "badModelId" });
      return;
    }
    this.choose(`hub:${id}`);
  }

  /** Where a choice's files come from, and what the reader calls it. */
  source(choice, files = null, name = null) {
    const s = this.app.state;
    if (choice === "toy") return { source: sourceOf("toy", location.href, s), name: this.app.T("model.toy"), where: null };
    if (Object.hasOwn(FOLDERS, choice)) {
      // a step of its training timeline: its checkpoint in place of its weights
      const step = FOLDERS[choice].timeline ? s.step : null;
      const name = step === null ? FOLDERS[choice].name : this.app.T("timeline.named", { model: FOLDERS[choice].name, step: step.toLocaleString(this.app.lang) });
      return { source: sourceOf(choice, location.href, null, step), name, where: "site" };
    }
    if (choice === "local") return { source: { from: "files", files }, name: name ?? this.app.T("localName"), where: "local" };
    if (choice.startsWith("kept:")) return { source: { from: "kept", id: choice.slice(5) }, name: name ?? this.app.T("keptName"), where: "page" };
    const id = choice.slice(4);
    return { source: { from: "hub", id, ...(s.hub && { hub: s.hub }) }, name: id, where: s.hub ? `${location.host}${s.hub}` : "huggingface.co" };
  }

  /**
   * Loads `choice` ("toy", "trained", "minilm", "hub:<id>", or "local" with `files`); resolves
   * to whether it loaded. The toy's settings are part of its source, so changing them loads
   * another toy model.
   */
  async choose(choice, { files = null, name = null, fromLink = false, keepError = false, keepHead = false } = {}) {
    const app = this.app;
    const $ = app.$;
    // a training step belongs to its model's timeline: another model starts as trained, and a
    // step a link asks for becomes its nearest checkpoint
    if (app.model && app.model.choice !== choice && app.state.step !== null) app.set({ step: null });
    if (app.state.step !== null) app.set({ step: await app.timeline.resolve(choice, app.state.step) });
    const { source, name: label, where } = this.source(choice, files, name);
    const progress = $("model-progress");
    const loadStart = performance.now();
    if (choice !== "toy") {
      progress.hidden = false;
      progress.removeAttribute("value");
      this.setStatus("loading", { model: label });
    }
    app.busy(true);
    try {
      const { key, info } = await app.client.load(source, ({ file, loaded, total }) => {
        app.probe.progressEvents = (app.probe.progressEvents ?? 0) + 1;
        if (total) progress.value = loaded / total;
        const mib = (n) => (n / 1048576).toFixed(1);
        this.setStatus(total ? "loadingFileOf" : "loadingFile", { model: label, file, loaded: mib(loaded), total: mib(total) });
      });
      // another model: the head shown is again the one it suggests (the trained model's
      // showcase head comes back), not the one picked on the last model, and no head is off:
      // layer.head names another head there (a checkpoint of the same model keeps both)
      const another = app.model && app.model.key !== key && !keepHead;
      // the languages a model reads, where known: the examples it is offered follow them
      app.model = { key, info, choice, name: label, where, fromLink, languages: FOLDERS[choice]?.languages ?? null };
      app.set({ model: choice, ...(another && { layer: null, head: null, off: "" }) }, { step: app.state.model !== choice });
      if (another) app.notices.set("clamp", null);
      app.probe.timings.modelLoadMs = performance.now() - loadStart;
      app.probe.model = info;
      if (info.wasmBytes) app.probe.timings.wasmBytes = info.wasmBytes;
      if (!keepError) this.hideError();
      this.showLoaded();
      if (choice.startsWith("kept:")) this.keptOption(choice, label);
      $("model").value = choice.startsWith("hub:") ? "hub" : choice;
      await this.onLoaded();
      return true;
    } catch (e) {
      app.probe.errors.push(e.message);
      this.showError({ error: e });
      // the picker shows the model still shown, except that a failed Hub id stays in its field
      // so it can be corrected and tried again
      const retry = choice.startsWith("hub:");
      $("model").value = retry ? "hub" : app.model ? (app.model.choice.startsWith("hub:") ? "hub" : app.model.choice) : "toy";
      $("hub-field").hidden = $("model").value !== "hub";
      $("local-field").hidden = $("model").value !== "local";
      $("file-field").hidden = $("model").value !== "file";
      this.showLoaded();
      return false;
    } finally {
      progress.hidden = true;
      app.busy(false);
    }
  }

  /** A model trained on the page is one more choice in the picker, named as it was kept. */
  keptOption(choice, label) {
    const select = this.app.$("model");
    let option = [...select.options].find((o) => o.value === choice);
    if (!option) {
      option = document.createElement("option");
      option.value = choice;
      select.insertBefore(option, select.querySelector('option[value="hub"]'));
    }
    option.textContent = label;
  }

  /** The status line: which model is shown, and from where. */
  showLoaded() {
    const m = this.app.model;
    if (!m || m.choice === "toy") return this.setStatus(null);
    if (m.choice === "file") return this.setStatus("openedFile", { file: m.name, architecture: m.info.architecture });
    const where = { local: "localWhere", site: "siteWhere", page: "pageWhere" }[m.where];
    const whereText = where ? this.app.T(where) : m.where;
    const values = { model: m.name, where: whereText, architecture: m.info.architecture, max: m.info.maxTokens };
    this.setStatus("loadedFrom", values, m.fromLink ? "fromLink" : null);
  }

  setStatus(key, values = {}, extra = null) {
    this.status = key ? [key, values, extra] : null;
    const text = key ? `${this.app.T(key, values)}${extra ? ` ${this.app.T(extra)}` : ""}` : "";
    this.app.$("model-status").textContent = text;
  }

  /** A failed load ({ error } or a string { key }): red, announced, and saying which model stays. */
  showError(failure) {
    const box = this.app.$("model-error");
    const message = failure.error ? this.app.errorText(failure.error) : this.app.T(failure.key);
    const kept = this.app.model ? this.app.T("keptModel", { model: this.app.model.name }) : "";
    box.textContent = [message, kept].filter(Boolean).join(" ");
    box.hidden = false;
    this.error = failure;
  }

  hideError() {
    this.app.$("model-error").hidden = true;
    this.error = null;
  }

  applyLanguage() {
    const m = this.app.model;
    // the names the page gives (the toy, a step of a timeline) and where a model came from are
    // said again in the new language; a loading line is replayed as it was
    if (m && (m.choice === "toy" || Object.hasOwn(FOLDERS, m.choice))) m.name = this.source(m.choice).name;
    if (["loadedFrom", "openedFile"].includes(this.status?.[0])) this.showLoaded();
    else if (this.status) this.setStatus(...this.status);
    if (this.error) this.showError(this.error);
  }
}
