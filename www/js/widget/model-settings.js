// A widget's settings fitted to its model once it is known: a training step moved to a
// checkpoint the model kept, heads off that the model lacks left on — each said as an
// attribute problem, as the explorer says a link's. Loaded only when `step` or `ablate` is set.

import { FOLDERS, offKept, offSplit, specOf, turnsHeadsOff } from "../settings.js";
import { nearestCheckpoint, timelineAt } from "../timeline-file.js";

/**
 * `settings` on the model described by `info`: heads off that the model lacks are left on and
 * named through `problem`, as the explorer leaves them on, so one stray head does not stop the
 * figure.
 */
export function withModelHeads(settings, info, problem) {
  const { lacks } = settings.off && turnsHeadsOff(info) ? offSplit(settings.off, info) : { lacks: [] };
  if (!lacks.length) return settings;
  const items = specOf(lacks, info);
  const sizes = info.places.map((p) => `${p.place} ${p.layers} × ${p.heads}`).join(", ");
  problem({ attribute: "ablate", value: items, expected: `heads of this model (${sizes}, from 0)`, key: "offLeftOn", values: { items, sizes } });
  return { ...settings, off: offKept(settings.off, info) };
}

/**
 * `settings` whose `step` is a checkpoint its model kept: the nearest one (none: the model as
 * trained, at the timeline's last step), said through `problem` when it is another, as the
 * explorer moves a link's step.
 */
export async function withCheckpoint(settings, assets, problem) {
  const folder = FOLDERS[settings.model.from];
  if (settings.step === null || !folder?.timeline) return settings;
  const timeline = await timelineAt(new URL(`models/${folder.name}/timeline/timeline.json`, assets));
  if (!timeline) return settings; // the checkpoint's own load says what is missing
  const { at, load } = nearestCheckpoint(timeline, settings.step);
  if (at === settings.step) return settings;
  problem({ attribute: "step", value: String(settings.step), expected: "a step of the model's checkpoints", key: "stepMoved", values: { asked: settings.step, step: at.toLocaleString("en-US") } }); // 4,090 in both languages, as the title writes it
  return { ...settings, step: load };
}
