//! The training timelines shipped beside the two trained models (`www/models/<model>/timeline/`,
//! written by `training/<model>/train.py --timeline`): timeline.json has the page's shape; every
//! checkpoint is an f16 stand-in for the folder's model.safetensors that headmap opens; the head
//! scores recorded at a checkpoint's step are what `headmap heads` says of that file (within
//! 1e-4); the last checkpoint is the model rounded to f16, bit for bit; the folder stays within
//! 6 MB.

#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cli_common::{grid, json_of};
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;

/// The most a model's timeline folder may weigh: what the page downloads to show it.
const MAX_BYTES: u64 = 6_000_000;

/// How a timeline's heads are scored, model by model.
#[derive(Clone, Copy)]
enum Probe {
    /// `induction` on headmap's induction probe, `previous_token` on the probe's text.
    Induction,
    /// `mass` from probe.queries to probe.keys in the encoder's self-attention.
    Mass,
}

struct Shipped {
    name: &'static str,
    probe: Probe,
    /// config.json's names for the scored place's layers and heads.
    layers: &'static str,
    heads: &'static str,
}

const SHIPPED: [Shipped; 2] = [
    Shipped { name: "headmap-tiny-induction", probe: Probe::Induction, layers: "n_layer", heads: "n_head" },
    Shipped {
        name: "headmap-tiny-ko-en",
        probe: Probe::Mass,
        layers: "encoder_layers",
        heads: "encoder_attention_heads",
    },
];

fn folder(model: &Shipped) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("www/models").join(model.name)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The object's keys, sorted.
fn keys(value: &Value, what: &str) -> Vec<String> {
    let object = value.as_object().unwrap_or_else(|| panic!("{what} is an object"));
    let mut keys: Vec<String> = object.keys().cloned().collect();
    keys.sort();
    keys
}

fn has_keys(value: &Value, want: &[&str], what: &str) {
    let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(keys(value, what), want, "{what}'s keys");
}

fn text(value: &Value, what: &str) -> String {
    value.as_str().filter(|s| !s.is_empty()).unwrap_or_else(|| panic!("{what} is a text")).to_string()
}

fn number(value: &Value, what: &str) -> f64 {
    value.as_f64().filter(|x| x.is_finite()).unwrap_or_else(|| panic!("{what} is a number: {value}"))
}

fn step_of(value: &Value, what: &str) -> u64 {
    value["step"].as_u64().unwrap_or_else(|| panic!("{what} has a whole step: {value}"))
}

fn increasing(steps: &[u64], what: &str) {
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{what} steps increase: {steps:?}");
}

/// timeline.json's shape, exactly as the page reads it; the scores' names and the (L, H) of
/// the scored place.
fn check_shape(model: &Shipped, doc: &Value) -> Vec<String> {
    let m = model.name;
    has_keys(
        doc,
        &[
            "format",
            "version",
            "model",
            "writtenBy",
            "steps",
            "probe",
            "scores",
            "curve",
            "accuracy",
            "heads",
            "checkpoints",
            "phaseChange",
        ],
        m,
    );
    assert_eq!(doc["format"], "headmap.timeline", "{m} format");
    assert_eq!(doc["version"], 1, "{m} version");
    assert_eq!(doc["model"], m, "{m} model");
    let written = text(&doc["writtenBy"], "writtenBy");
    let script = if m.ends_with("induction") { "tiny_induction" } else { "tiny_ko_en" };
    assert_eq!(written, format!("python3 training/{script}/train.py --timeline"), "{m} writtenBy");
    assert!(doc["steps"].as_u64().is_some_and(|s| s > 0), "{m} steps");

    let probe = &doc["probe"];
    has_keys(probe, &["text", "place", "queries", "keys"], "probe");
    text(&probe["text"], "probe.text");
    match model.probe {
        Probe::Induction => {
            assert_eq!(probe["place"], "decoder_self", "{m} probe.place");
            assert!(probe["queries"].is_null() && probe["keys"].is_null(), "{m}: the probe scores every row");
        }
        Probe::Mass => {
            assert_eq!(probe["place"], "encoder", "{m} probe.place");
            for side in ["queries", "keys"] {
                let positions = probe[side].as_array().unwrap_or_else(|| panic!("{m} probe.{side} is a list"));
                assert!(!positions.is_empty() && positions.iter().all(Value::is_u64), "{m} probe.{side}");
            }
        }
    }

    let names: Vec<String> = doc["scores"]
        .as_array()
        .expect("scores is a list")
        .iter()
        .map(|s| {
            has_keys(s, &["name", "en", "ko"], "a score");
            text(&s["en"], "score.en");
            text(&s["ko"], "score.ko");
            text(&s["name"], "score.name")
        })
        .collect();
    let want: &[&str] = match model.probe {
        Probe::Induction => &["induction", "previous_token"],
        Probe::Mass => &["mass"],
    };
    assert_eq!(names, want, "{m} scores");
    has_keys(&doc["accuracy"], &["en", "ko"], "accuracy");
    text(&doc["accuracy"]["en"], "accuracy.en");
    text(&doc["accuracy"]["ko"], "accuracy.ko");

    let config = json_file(&folder(model).join("config.json"));
    let (layers, heads) =
        (config[model.layers].as_u64().unwrap() as usize, config[model.heads].as_u64().unwrap() as usize);
    for point in doc["curve"].as_array().expect("curve is a list") {
        has_keys(point, &["step", "loss", "accuracy"], "a curve point");
        step_of(point, "a curve point");
        number(&point["loss"], "loss");
        let accuracy = number(&point["accuracy"], "accuracy");
        assert!((0.0..=1.0).contains(&accuracy), "{m} accuracy {accuracy}");
    }
    for entry in doc["heads"].as_array().expect("heads is a list") {
        has_keys(entry, &["step", "scores"], "a heads entry");
        let step = step_of(entry, "a heads entry");
        has_keys(&entry["scores"], want, "a heads entry's scores");
        for name in want {
            let g = grid(&entry["scores"][*name]);
            assert_eq!(
                (g.len(), g.iter().all(|row| row.len() == heads)),
                (layers, true),
                "{m} step {step} {name}: (L, H)"
            );
        }
    }
    for c in doc["checkpoints"].as_array().expect("checkpoints is a list") {
        has_keys(c, &["step", "file"], "a checkpoint");
        assert_eq!(text(&c["file"], "file"), format!("step-{}.safetensors", step_of(c, "a checkpoint")), "{m}");
    }
    has_keys(&doc["phaseChange"], &["step", "en", "ko"], "phaseChange");
    step_of(&doc["phaseChange"], "phaseChange");
    text(&doc["phaseChange"]["en"], "phaseChange.en");
    text(&doc["phaseChange"]["ko"], "phaseChange.ko");
    names
}

fn steps(list: &Value) -> Vec<u64> {
    list.as_array().unwrap().iter().map(|v| step_of(v, "an entry")).collect()
}

/// The heads entry of `step`.
fn recorded(doc: &Value, step: u64) -> &Value {
    doc["heads"].as_array().unwrap().iter().find(|h| h["step"] == step).unwrap_or_else(|| panic!("heads at {step}"))
}

/// The best head's value of a score at one heads entry.
fn best(entry: &Value, name: &str) -> f64 {
    grid(&entry["scores"][name]).into_iter().flatten().fold(f64::NEG_INFINITY, f64::max)
}

/// What the steps must be: curve and heads at the same increasing steps, checkpoints among
/// them from 0 to the last step, the phase change where its rule puts it.
fn check_steps(model: &Shipped, doc: &Value) {
    let m = model.name;
    let (curve, heads, kept) = (steps(&doc["curve"]), steps(&doc["heads"]), steps(&doc["checkpoints"]));
    increasing(&curve, "curve");
    increasing(&kept, "checkpoint");
    assert_eq!(curve, heads, "{m}: heads at every curve point");
    let last = doc["steps"].as_u64().unwrap();
    assert_eq!((kept.first(), kept.last()), (Some(&0), Some(&last)), "{m}: checkpoints from step 0 to the last");
    assert_eq!((curve.first(), curve.last()), (Some(&0), Some(&last)), "{m}: the curve from step 0 to the last");
    assert!(kept.iter().all(|s| heads.contains(s)), "{m}: every checkpoint is scored");
    let entries = doc["heads"].as_array().unwrap();
    let accuracy: BTreeMap<u64, f64> = doc["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (step_of(p, "a curve point"), p["accuracy"].as_f64().unwrap()))
        .collect();
    let phase = match model.probe {
        Probe::Induction => {
            entries.iter().find(|h| accuracy[&step_of(h, "heads")] >= 0.6 && best(h, "induction") >= 0.5)
        }
        Probe::Mass => {
            let end = best(entries.last().unwrap(), "mass");
            entries.iter().find(|h| best(h, "mass") >= end / 2.0)
        }
    };
    assert_eq!(
        Some(&doc["phaseChange"]["step"]),
        phase.map(|h| &h["step"]),
        "{m}: the phase change is its rule's step"
    );
}

/// The tensors of a safetensors file by name: dtype, shape and bytes.
fn tensors(bytes: &[u8], what: &str) -> BTreeMap<String, (Dtype, Vec<usize>, Vec<u8>)> {
    let file = SafeTensors::deserialize(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    file.tensors().into_iter().map(|(name, t)| (name, (t.dtype(), t.shape().to_vec(), t.data().to_vec()))).collect()
}

/// The model's tensors rounded to f16 (round to nearest, ties to even, as PyTorch rounds), as
/// f16 bytes; an f16 model as it is.
fn rounded(model: &BTreeMap<String, (Dtype, Vec<usize>, Vec<u8>)>) -> BTreeMap<String, Vec<u8>> {
    let f16 = |x: f32| half::f16::from_f32(x).to_bits().to_le_bytes();
    model
        .iter()
        .map(|(name, (dtype, _, data))| {
            let bytes = match dtype {
                Dtype::F16 => data.clone(),
                Dtype::F32 => {
                    data.chunks_exact(4).flat_map(|b| f16(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))).collect()
                }
                other => panic!("model.safetensors `{name}` is {other:?}"),
            };
            (name.clone(), bytes)
        })
        .collect()
}

/// A model folder of the folder's config and tokenizer with `checkpoint` as its weights.
fn stand_in(model: &Shipped, checkpoint: &Path, step: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headmap-timeline-{}-{step}-{}", model.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(folder(model).join(name), dir.join(name)).unwrap();
    }
    std::fs::copy(checkpoint, dir.join("model.safetensors")).unwrap();
    dir
}

/// headmap's own scores of the model in `dir`, as the timeline names them.
fn headmap_scores(model: &Shipped, dir: &Path, probe: &Value) -> BTreeMap<String, Vec<Vec<f64>>> {
    let dir = dir.to_str().unwrap();
    let text = probe["text"].as_str().unwrap();
    match model.probe {
        Probe::Induction => {
            let found = json_of(&["heads", "--model", dir, "--probe", "induction", "--format", "json"]);
            let heads = json_of(&["heads", "--model", dir, "--text", text, "--score", "previous_token"]);
            let row = &heads["places"][0]["rows"][0];
            assert_eq!(
                row["tokens"], found["probe"]["tokens"],
                "{}: probe.text reads as the induction probe",
                model.name
            );
            BTreeMap::from([
                ("induction".to_string(), grid(&found["probe"]["induction"])),
                ("previous_token".to_string(), grid(&row["scores"]["previous_token"])),
            ])
        }
        Probe::Mass => {
            let list = |side: &str| {
                probe[side].as_array().unwrap().iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",")
            };
            let (queries, keys) = (list("queries"), list("keys"));
            let args = ["heads", "--model", dir, "--text", text, "--place", "encoder_self", "--score", "first_token"];
            let heads = json_of(&[&args[..], &["--queries", &queries, "--keys", &keys]].concat());
            let row = &heads["places"][0]["rows"][0];
            let at = |side: &str| -> Vec<&Value> {
                probe[side].as_array().unwrap().iter().map(|p| &row["tokens"][p.as_u64().unwrap() as usize]).collect()
            };
            assert!(at("queries").iter().all(|t| *t == "그것"), "{}: the queries are 그것", model.name);
            assert!(at("keys").iter().all(|t| *t == "동물"), "{}: the keys are 동물", model.name);
            BTreeMap::from([("mass".to_string(), grid(&row["mass"]["values"]))])
        }
    }
}

fn assert_close(got: &[Vec<f64>], want: &[Vec<f64>], tolerance: f64, label: &str) {
    for (l, (g, w)) in got.iter().zip(want).enumerate() {
        for (h, (a, b)) in g.iter().zip(w).enumerate() {
            assert!((a - b).abs() <= tolerance, "{label} layer {l} head {h}: timeline {b}, headmap {a}");
        }
    }
}

fn check_timeline(model: &Shipped) {
    let m = model.name;
    let dir = folder(model).join("timeline");
    let doc = json_file(&dir.join("timeline.json"));
    let names = check_shape(model, &doc);
    check_steps(model, &doc);

    let listed: Vec<String> = doc["checkpoints"].as_array().unwrap().iter().map(|c| text(&c["file"], "file")).collect();
    let mut size = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        assert!(name == "timeline.json" || listed.contains(&name), "{m}: {name} is no file of the timeline");
        size += entry.metadata().unwrap().len();
    }
    assert!(size <= MAX_BYTES, "{m}: the timeline folder is {size} bytes, more than {MAX_BYTES}");

    let model_tensors = tensors(&read(&folder(model).join("model.safetensors")), "model.safetensors");
    let last = doc["steps"].as_u64().unwrap();
    for c in doc["checkpoints"].as_array().unwrap() {
        let step = step_of(c, "a checkpoint");
        let path = dir.join(text(&c["file"], "file"));
        let label = format!("{m} step {step}");
        let weights = tensors(&read(&path), &label);
        assert_eq!(
            weights.keys().collect::<Vec<_>>(),
            model_tensors.keys().collect::<Vec<_>>(),
            "{label}: tensor names"
        );
        for (name, (dtype, shape, _)) in &weights {
            assert_eq!(*dtype, Dtype::F16, "{label} `{name}` is f16");
            assert_eq!(shape, &model_tensors[name].1, "{label} `{name}` shape");
        }
        if step == last {
            let f16: BTreeMap<String, Vec<u8>> = weights.iter().map(|(n, (_, _, d))| (n.clone(), d.clone())).collect();
            assert!(f16 == rounded(&model_tensors), "{label}: the last checkpoint is model.safetensors rounded to f16");
        }
        let stand_in = stand_in(model, &path, step);
        let ours = headmap_scores(model, &stand_in, &doc["probe"]);
        let entry = recorded(&doc, step);
        for name in &names {
            assert_close(&ours[name], &grid(&entry["scores"][name]), 1e-4, &format!("{label} {name}"));
        }
        let _ = std::fs::remove_dir_all(stand_in);
    }
}

#[test]
fn the_induction_model_s_timeline_is_headmap_s_own_reading_of_its_checkpoints() {
    check_timeline(&SHIPPED[0]);
}

#[test]
fn the_translator_s_timeline_is_headmap_s_own_reading_of_its_checkpoints() {
    check_timeline(&SHIPPED[1]);
}
