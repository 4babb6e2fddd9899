"""A training timeline, shared by the train.py scripts beside this file: what a model's heads
and loss were while it trained, and a few of its weights on the way, for headmap's page.

Recording (Recorder, during training) is kept off the training's path: the heads are measured
on a shadow copy of the model, made with copy.deepcopy before the first step, into which the
weights are copied rounded to float16 (so every number recorded is the number headmap gives
on the f16 checkpoint file). The shadow runs in eval mode under torch.no_grad, and nothing here
draws from torch's or the script's random generators, so the training model steps exactly as
it would without --timeline.

The record (record.json, and every recorded step's f16 weights as step-N.safetensors) goes to
a scratch folder; write() then picks the points and checkpoints the page gets and writes

    <model folder>/timeline/timeline.json       the format below (headmap.timeline, version 1)
    <model folder>/timeline/step-N.safetensors  f16 weights, the tensor names of model.safetensors

timeline.json: the probe the heads were scored on; the score names (en, ko); `curve`, per
point the mean training loss of the steps since the previous point (at step 0, the first
batch's loss on the initial weights) and an accuracy; `heads`, at the same steps, every score
as [layers][heads]; `checkpoints`; and `phaseChange`, a step and the rule that found it.
"""

import copy
import json
import pathlib
import shutil
import tempfile

import torch
from safetensors import safe_open
from safetensors.torch import save_file

FORMAT = "headmap.timeline"
VERSION = 1


def f16_names(model):
    """The tensor names, in order, that save_pretrained writes for this model: tied weights
    appear once, so a checkpoint can stand in for the folder's model.safetensors."""
    with tempfile.TemporaryDirectory() as tmp:
        copy.deepcopy(model).to(torch.float16).save_pretrained(tmp, safe_serialization=True)
        with safe_open(pathlib.Path(tmp) / "model.safetensors", "pt") as f:
            return list(f.keys()), f.metadata()


class Recorder:
    """Measures a shadow of `model` every `every` steps (and at the last step) and keeps the
    f16 weights of each measured step in `folder`.

    `measure(shadow)` returns (accuracy, {score name: [[value per head] per layer]}); it is
    called under torch.no_grad with the shadow in eval mode. `info` (the probe, the score
    names, the accuracy's description) is stored with the record for write()."""

    def __init__(self, model, folder, every, steps, measure, info):
        self.shadow = copy.deepcopy(model)  # before any step: deepcopy draws no random numbers
        self.shadow.eval()
        self.shadow.requires_grad_(False)
        self.names, self.metadata = f16_names(model)
        self.folder = pathlib.Path(folder)
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.every, self.steps, self.measure = every, steps, measure
        self.record = {"info": info, "steps": steps, "losses": [], "points": []}

    def due(self, step):
        return step % self.every == 0 or step == self.steps

    def loss(self, value):
        """The training loss of one step, in order."""
        self.record["losses"].append(value)

    @torch.no_grad()
    def take(self, step, model):
        """Measures the weights `model` holds after `step` updates, rounded to f16."""
        ours = self.shadow.state_dict()
        for name, value in model.state_dict().items():
            ours[name].copy_(value)
        # rounded after the copy, through the saved names: a tied weight (GPT-2's lm_head) is
        # the same tensor, and one the file leaves out (Marian's sinusoidal positions) is made
        # by every loader and stays as the model makes it
        for name in self.names:
            ours[name].copy_(ours[name].to(torch.float16))
        accuracy, scores = self.measure(self.shadow)
        self.shadow.eval()  # in case measure set a mode
        save_file({n: ours[n].to(torch.float16).contiguous() for n in self.names},
                  str(self.folder / f"step-{step}.safetensors"), metadata=self.metadata)
        self.record["points"].append({"step": step, "accuracy": accuracy, "scores": scores})

    def save(self):
        (self.folder / "record.json").write_text(json.dumps(self.record) + "\n")
        return self.folder


def load(folder):
    return json.loads((pathlib.Path(folder) / "record.json").read_text())


def mean_losses(record, steps):
    """The loss at each of `steps` (increasing): at step 0 the first step's loss (on the initial
    weights), after that the mean of the steps' losses since the previous one."""
    losses, out, before = record["losses"], {}, 0
    for s in steps:
        out[s] = losses[0] if s == 0 else sum(losses[before:s]) / (s - before)
        before = s
    return out


def write(record, folder, model_dir, *, model, written_by, points, checkpoints, phase_change):
    """Writes model_dir/timeline/: the chosen `points` (steps, increasing) of the record as the
    curve and the heads, the `checkpoints` (a subset of the points) as f16 files copied from
    the record's `folder`, and `phase_change` (a dict: step, en, ko)."""
    info = record["info"]
    by_step = {p["step"]: p for p in record["points"]}
    assert set(checkpoints) <= set(points) <= set(by_step), "checkpoints and points must be recorded steps"
    out = pathlib.Path(model_dir) / "timeline"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    loss = mean_losses(record, points)
    doc = {
        "format": FORMAT, "version": VERSION, "model": model, "writtenBy": written_by,
        "steps": record["steps"],
        "probe": info["probe"],
        "scores": info["scores"],
        "curve": [{"step": s, "loss": round(loss[s], 4), "accuracy": round(by_step[s]["accuracy"], 4)} for s in points],
        "accuracy": info["accuracy"],
        # to 1e-6: tests/timelines.rs holds them to headmap's own within 1e-4
        "heads": [{"step": s, "scores": {k: [[round(x, 6) for x in row] for row in v]
                                         for k, v in by_step[s]["scores"].items()}} for s in points],
        "checkpoints": [{"step": s, "file": f"step-{s}.safetensors"} for s in checkpoints],
        "phaseChange": phase_change,
    }
    for s in checkpoints:
        shutil.copyfile(pathlib.Path(folder) / f"step-{s}.safetensors", out / f"step-{s}.safetensors")
    (out / "timeline.json").write_text(dumps(doc))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"wrote {out}: {len(points)} points, checkpoints at {checkpoints}, {size} bytes")
    return out


def dumps(doc):
    """JSON with one line per key, and one per entry of a list of objects (curve, heads): a
    few hundred short lines a diff can read, not one number per line."""
    def value(v):
        if isinstance(v, list) and v and isinstance(v[0], dict):
            return "[\n" + ",\n".join("  " + json.dumps(x, ensure_ascii=False) for x in v) + "\n ]"
        return json.dumps(v, ensure_ascii=False)
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {value(v)}" for k, v in doc.items()) + "\n}\n"


def best(scores, name):
    """The highest score `name` of any head."""
    return max(max(row) for row in scores[name])


def first_step(points, test):
    """The step of the first point for which test(point) holds, or None."""
    return next((p["step"] for p in points if test(p)), None)


def evenly(lo, hi, n, grid=50):
    """n steps spread evenly strictly between lo and hi, each rounded to a multiple of `grid`."""
    return [grid * round((lo + (hi - lo) * k / (n + 1)) / grid) for k in range(1, n + 1)]


def thinned(points, lo, hi, last, grid=50):
    """The steps of the curve: every recorded point from lo to hi, where things change, and
    elsewhere every `grid`-th step; step 0 and the last step always."""
    return [p["step"] for p in points
            if lo <= p["step"] <= hi or p["step"] % grid == 0 or p["step"] == last]


def card_section(model_dir, script, scored, accuracy, note=""):
    """The model card's "Training timeline" section (markdown lines), from the folder's
    timeline/timeline.json; none when there is no timeline. `scored` says what the heads'
    scores are and `accuracy` what the curve's accuracy is, each a phrase; `note`, a sentence
    or more on them."""
    path = pathlib.Path(model_dir) / "timeline" / "timeline.json"
    if not path.exists():
        return []
    doc = json.loads(path.read_text())
    folder = path.parent
    size = sum(f.stat().st_size for f in folder.iterdir())
    steps = [p["step"] for p in doc["curve"]]
    dense = [s for s in steps if s % 50 and s != doc["steps"]]
    where = f" (every 10 from step {min(dense):,} to {max(dense):,})" if dense else ""
    kept = [c["step"] for c in doc["checkpoints"]]
    phase = doc["phaseChange"]
    rule = phase["en"][0].lower() + phase["en"][1:]
    return [
        "## Training timeline\n",
        f"`timeline/` holds the model as it trained, for headmap's page to play back ({size / 1e6:.1f} MB): "
        f"`timeline.json`, and {len(kept)} checkpoints `step-N.safetensors`, the weights after N steps in float16 "
        "with `model.safetensors`'s tensor names, so that each opens in its place beside this folder's "
        "`config.json` and `tokenizer.json`. Steps kept: " + ", ".join(f"{s:,}" for s in kept) + ".\n",
        f"`timeline.json` gives, every 50 steps{where}, the loss (the mean training loss of the steps since the "
        f"point before; at step 0 the first batch's) and {accuracy}; at the same steps, per head, {scored}, "
        "computed on the weights rounded to float16, so that at a checkpoint they are what `headmap heads` "
        "gives for its file (`tests/timelines.rs` holds them to it within 1e-4). "
        f"{note}The phase change, {rule}, is step {phase['step']:,}.\n",
        f"```sh\npython3 training/{script}/train.py --timeline   # trains as above, recording as it goes\n```\n",
        "The recording reads a copy of the model and draws no random numbers, so it leaves the training as "
        "it was. `--rewrite-timeline` writes `timeline/` again from the run's record (every 10th step's "
        "weights and scores, in `--timeline-record`) without training.\n",
    ]
