//! Crafted attention files, as an attacker would hand them to the page, the widget's `src` or
//! the Python package: headmap's JSON with values of the wrong kind, size or sign put anywhere
//! in it and arrays cut short or lengthened, and safetensors files with their header, metadata
//! and bytes changed or cut short. Whatever is refused, nothing panics; whatever is read gives
//! weights a page can draw (finite, in 0..=1 within rounding) and every view that needs only weights answers:
//! head scores, rollout, thumbnails, the CSV and JSON the page saves.
//!
//! The cases come from a fixed seed, so a failure names a case that fails again.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;

use headmap::heads::{all_scores, ScoreOptions};
use headmap::import::{read, BF16_ROW_SUM_TOLERANCE};
use headmap::rollout::{rollout, Fusion};
use serde_json::{json, Value};

use common::{checked, Cases};

fn fixture(name: &str) -> Vec<u8> {
    common::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/attention").join(name))
}

/// Reads `bytes` as the page does and uses what it gives as the views do; a refusal is an
/// answer, and only a panic (caught by the caller) or a value a page cannot draw is wrong.
fn open_and_use(bytes: &[u8]) -> Result<bool, String> {
    let Ok(imported) = read("crafted", bytes) else { return Ok(false) };
    let run = &imported.run;
    for place in &run.places {
        for r in 0..place.batch() {
            let row = place.row(r).map_err(|e| e.to_string())?;
            for layer in 0..row.layers() {
                let weights = row.layer(layer).map_err(|e| e.to_string())?;
                // the reader takes a weight up to 1 + its rounding (bf16's is the widest)
                if let Some(v) = weights.iter().find(|v| !(0.0..=1.0 + BF16_ROW_SUM_TOLERANCE).contains(*v)) {
                    return Err(format!("{:?} row {r} layer {layer}: a weight of {v}", place.place));
                }
                for head in 0..row.heads() {
                    let picture = row.pooled(layer, head, 24, 24).map_err(|e| e.to_string())?;
                    if picture.iter().any(|v| !v.is_finite()) {
                        return Err(format!("{:?} layer {layer} head {head}: a thumbnail not finite", place.place));
                    }
                }
            }
            if let Ok(scores) = all_scores(row, place.place, &ScoreOptions::default()) {
                if let Some((score, _)) = scores.iter().find(|(_, s)| s.iter().any(|v| v.is_nan())) {
                    return Err(format!("{:?} row {r}: the {} scores hold NaN", place.place, score.name()));
                }
            }
            for fusion in Fusion::ALL {
                if let Ok(layers) = rollout(row, place.place, fusion) {
                    if layers.iter().any(|l| l.iter().any(|v| !v.is_finite())) {
                        return Err(format!("{:?} row {r}: {} rollout not finite", place.place, fusion.name()));
                    }
                }
            }
        }
    }
    headmap::export::csv(run).map_err(|e| e.to_string())?;
    serde_json::to_string(&headmap::export::export(&imported.model_type, run)).map_err(|e| e.to_string())?;
    Ok(true)
}

/// Opens and uses each crafted file, catching panics, and fails with every case that broke; a
/// sweep whose files were all refused would not have used anything, so some must be read.
fn sweep(what: &str, cases: Vec<(String, Vec<u8>)>) {
    let count = cases.len();
    let mut read = 0;
    let mut broke = vec![];
    for (name, bytes) in cases {
        let failed = checked(&name, || open_and_use(&bytes).map(|was_read| read += usize::from(was_read)));
        broke.extend(failed);
    }
    eprintln!("{count} {what}: {read} read and used, the rest refused");
    assert!(broke.is_empty(), "{} of {count} {what} broke:\n{}", broke.len(), broke.join("\n"));
    assert!(read >= count / 20, "only {read} of {count} {what} were read: the sweep used almost nothing");
}

/// Odd values of every kind a field could be given.
fn odd_value(cases: &mut Cases) -> Value {
    let odd = [
        json!(null),
        json!(true),
        json!(-1),
        json!(0),
        json!(1),
        json!(2),
        json!(1e30),
        json!(-1e-30),
        json!(0.5),
        json!(4_294_967_296u64),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(""),
        json!("cross"),
        json!("decoder_self"),
        json!("causal"),
        json!("none"),
        json!("pad"),
        json!("\u{202e}\u{0}<b>"),
        json!("x".repeat(5000)),
        json!([]),
        json!([[]]),
        json!([0.25, 0.75]),
        json!({}),
        json!({ "encoder_self": {} }),
    ];
    odd[cases.next(odd.len())].clone()
}

/// Every place in `doc` where a value sits, as a path of keys and indices, at most `limit`
/// entries of any one array (the weights' arrays are long; their first entries stand for all).
fn paths(doc: &Value, limit: usize) -> Vec<Vec<Value>> {
    let mut out = vec![];
    let mut stack = vec![(vec![], doc)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let mut p = path.clone();
                    p.push(json!(k));
                    stack.push((p, child));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate().take(limit) {
                    let mut p = path.clone();
                    p.push(json!(i));
                    stack.push((p, child));
                }
            }
            _ => {}
        }
        out.push(path);
    }
    out.sort_by_key(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    out
}

fn at<'a>(doc: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(doc, |v, key| match key {
        Value::String(k) => &mut v[k.as_str()],
        Value::Number(i) => &mut v[i.as_u64().unwrap() as usize],
        _ => unreachable!(),
    })
}

/// `doc` changed at one place: a value replaced, an array cut short, lengthened or emptied, an
/// entry of an object taken out.
fn changed(doc: &Value, paths: &[Vec<Value>], cases: &mut Cases) -> (String, Value) {
    let mut doc = doc.clone();
    let path = &paths[cases.next(paths.len())];
    let shown = path.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(".");
    let target = at(&mut doc, path);
    let how = match (cases.next(5), &mut *target) {
        (0, Value::Array(items)) if !items.is_empty() => {
            let keep = cases.next(items.len());
            items.truncate(keep);
            format!("cut to {keep}")
        }
        (1, Value::Array(items)) if !items.is_empty() => {
            let copy = items[cases.next(items.len())].clone();
            items.push(copy);
            "lengthened".to_string()
        }
        (2, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(cases.next(map.len())).unwrap().clone();
            map.remove(&key);
            format!("without {key}")
        }
        _ => {
            let value = odd_value(cases);
            let said = value.to_string().chars().take(24).collect::<String>();
            *target = value;
            format!("= {said}")
        }
    };
    (format!("{shown} {how}"), doc)
}

/// Odd text a label or the model's type could hold: what a page shows with `textContent` or on
/// a canvas, and writes back into the CSV and JSON it saves.
const ODD_TEXT: [&str; 12] = [
    "",
    " ",
    "<img src=x onerror=alert(1)>",
    "\u{202e}evil\u{202c}",
    "\u{0}\u{7}\u{1b}[31m",
    "a,\"b\"\n\r",
    "\u{fe0f}\u{200d}\u{1f469}\u{200d}\u{1f4bb}",
    "e\u{301}\u{301}\u{301}\u{301}\u{301}\u{301}",
    "\u{10ffff}\u{fffd}",
    "\u{ac00}\u{1100}\u{1161}",
    "##",
    "[PAD]",
];

/// `doc` with one of its labels (a query's or key's token, or the model's type) set to odd
/// text, or to a label 5,000 characters long.
fn relabelled(doc: &Value, labels: &[Vec<Value>], cases: &mut Cases) -> (String, Value) {
    let mut doc = doc.clone();
    let path = &labels[cases.next(labels.len())];
    let text = match cases.next(ODD_TEXT.len() + 1) {
        i if i < ODD_TEXT.len() => ODD_TEXT[i].to_string(),
        _ => "\u{ac00}".repeat(5000),
    };
    let shown = path.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(".");
    *at(&mut doc, path) = json!(text);
    (format!("{shown} = {:?}", text.chars().take(12).collect::<String>()), doc)
}

/// The paths of `doc`'s labels: its model type and every query's and key's token.
fn label_paths(doc: &Value) -> Vec<Vec<Value>> {
    paths(doc, usize::MAX)
        .into_iter()
        .filter(|p| {
            p == &[json!("model_type")]
                || (p.len() >= 2
                    && p[p.len() - 1].is_number()
                    && matches!(p[p.len() - 2].as_str(), Some("queries" | "keys")))
        })
        .collect()
}

#[test]
fn crafted_json_files_are_refused_or_drawn() {
    let doc: Value = serde_json::from_slice(&fixture("tiny-ko-en.json")).unwrap();
    let all = paths(&doc, 3);
    let mut cases = Cases(0x5eed_a77e);
    let mut made = vec![];
    for i in 0..1500 {
        let (mut name, mut crafted) = changed(&doc, &all, &mut cases);
        if i % 3 == 0 {
            // two changes at once: a field and the one it is checked against
            let (second, twice) = changed(&crafted, &paths(&crafted, 3), &mut cases);
            name = format!("{name}; {second}");
            crafted = twice;
        }
        made.push((format!("json case {i}: {name}"), serde_json::to_vec(&crafted).unwrap()));
    }
    // one query's weights still summing to 1, with two of them past 0..=1
    let rows =
        paths(&doc, usize::MAX).into_iter().filter(|p| p.len() == 8 && p[4] == json!("weights")).collect::<Vec<_>>();
    assert!(!rows.is_empty(), "the fixture's rows of weights");
    for (i, shift) in [1.5, 1e30, 0.25].into_iter().cycle().take(60).enumerate() {
        let mut crafted = doc.clone();
        let path = &rows[cases.next(rows.len())];
        let row = at(&mut crafted, path).as_array_mut().unwrap();
        let (a, b) = (cases.next(row.len()), cases.next(row.len()));
        if a == b {
            continue;
        }
        row[a] = json!(row[a].as_f64().unwrap() + shift);
        row[b] = json!(row[b].as_f64().unwrap() - shift);
        made.push((format!("json shifted {i}: {shift} at {path:?}"), serde_json::to_vec(&crafted).unwrap()));
    }
    let labels = label_paths(&doc);
    assert!(labels.len() > 10, "the fixture's labels: {}", labels.len());
    for i in 0..300 {
        let (name, crafted) = relabelled(&doc, &labels, &mut cases);
        made.push((format!("json label {i}: {name}"), serde_json::to_vec(&crafted).unwrap()));
    }
    sweep("JSON files", made);
}

/// The safetensors fixture's header length, header JSON and the bytes after it.
fn parts(bytes: &[u8]) -> (Value, Vec<u8>) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (serde_json::from_slice(&bytes[8..8 + n]).unwrap(), bytes[8 + n..].to_vec())
}

fn assemble(header: &Value, data: &[u8]) -> Vec<u8> {
    let text = serde_json::to_vec(header).unwrap();
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend(text);
    out.extend(data);
    out
}

#[test]
fn crafted_safetensors_files_are_refused_or_drawn() {
    let mut made = vec![];
    let mut cases = Cases(0xfeed_f00d_5afe);
    for file in ["tiny-ko-en.safetensors", "tiny-ko-en.f32.safetensors", "bert-two-rows.safetensors"] {
        let bytes = fixture(file);
        let (header, data) = parts(&bytes);
        // the metadata's document, changed as the JSON files are
        let document: Value = serde_json::from_str(header["__metadata__"]["headmap"].as_str().unwrap()).unwrap();
        let document_paths = paths(&document, 3);
        for i in 0..250 {
            let (name, doc) = changed(&document, &document_paths, &mut cases);
            let mut h = header.clone();
            h["__metadata__"]["headmap"] = json!(doc.to_string());
            made.push((format!("{file} metadata {i}: {name}"), assemble(&h, &data)));
        }
        let labels = label_paths(&document);
        for i in 0..100 {
            let (name, doc) = relabelled(&document, &labels, &mut cases);
            let mut h = header.clone();
            h["__metadata__"]["headmap"] = json!(doc.to_string());
            made.push((format!("{file} label {i}: {name}"), assemble(&h, &data)));
        }
        // the tensors' own entries: dtype, shape and offsets
        let header_paths: Vec<_> =
            paths(&header, 4).into_iter().filter(|p| p.first() != Some(&json!("__metadata__"))).collect();
        for i in 0..150 {
            let (name, h) = changed(&header, &header_paths, &mut cases);
            made.push((format!("{file} header {i}: {name}"), assemble(&h, &data)));
        }
        for (i, dtype) in ["F64", "BF16", "F16", "I32", "U8", "BOOL", "F8_E4M3"].iter().enumerate() {
            let mut h = header.clone();
            for (key, entry) in h.as_object_mut().unwrap() {
                if key != "__metadata__" {
                    entry["dtype"] = json!(dtype);
                }
            }
            made.push((format!("{file} dtype {i}: {dtype}"), assemble(&h, &data)));
        }
        // bytes: cut short anywhere, the header's length changed, values set to odd floats
        for i in 0..60 {
            let cut = cases.next(bytes.len());
            made.push((format!("{file} cut {i}: at {cut}"), bytes[..cut].to_vec()));
        }
        for (i, n) in [0u64, 1, 7, 8, u64::MAX, u64::MAX / 2, bytes.len() as u64].into_iter().enumerate() {
            let mut b = bytes.clone();
            b[..8].copy_from_slice(&n.to_le_bytes());
            made.push((format!("{file} length {i}: {n}"), b));
        }
        let start = bytes.len() - data.len();
        for i in 0..120 {
            let mut b = bytes.clone();
            let odd: [u8; 4] = match i % 6 {
                0 => f32::NAN.to_le_bytes(),
                1 => f32::INFINITY.to_le_bytes(),
                2 => (-0.5f32).to_le_bytes(),
                3 => 3e38f32.to_le_bytes(),
                4 => f32::MIN_POSITIVE.to_le_bytes(),
                _ => [0xff; 4],
            };
            let at = start + cases.next(data.len().saturating_sub(4).max(1));
            b[at..at + 4].copy_from_slice(&odd);
            made.push((format!("{file} value {i}: {:?} at byte {at}", odd), b));
        }
        if header.as_object().unwrap().values().any(|t| t["dtype"] == "F32") {
            // two weights of one query moved apart, its sum kept: -0.5 and 1.5 beside each other
            for i in 0..40 {
                let mut b = bytes.clone();
                let at = start + 4 * cases.next(data.len() / 4 - 1);
                let (x, y) = (
                    f32::from_le_bytes(b[at..at + 4].try_into().unwrap()),
                    f32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()),
                );
                b[at..at + 4].copy_from_slice(&(x + 1.5).to_le_bytes());
                b[at + 4..at + 8].copy_from_slice(&(y - 1.5).to_le_bytes());
                made.push((format!("{file} shifted {i}: at byte {at}"), b));
            }
        }
    }
    sweep("safetensors files", made);
}
