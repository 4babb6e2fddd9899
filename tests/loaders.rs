//! Damaged model files give errors, never a panic and never an unbounded allocation: every
//! fixture file (config, safetensors, shard index and shards, tokenizer, .spm, vocab) truncated
//! or with bits flipped, fed to the loaders, and a model that still loads run on a text.
//!
//! The allocator here refuses any single allocation over 512 MB, so a loader that believed a
//! size it read would abort the test instead of passing.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use headmap::models::hf::ModelFiles;
use headmap::models::weights::{shard_names, INDEX};
use headmap::{Model, Request};
use proptest::prelude::*;

/// The system allocator, refusing any allocation larger than [`LIMIT`].
struct Bounded;

const LIMIT: usize = 512 << 20;

unsafe impl GlobalAlloc for Bounded {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT {
            return std::ptr::null_mut(); // the allocation error aborts the test
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Bounded = Bounded;

/// One fixture folder's files by name.
struct Folder {
    name: String,
    files: Vec<(String, Vec<u8>)>,
}

fn folders() -> &'static [Folder] {
    static FOLDERS: OnceLock<Vec<Folder>> = OnceLock::new();
    FOLDERS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
        dirs.sort();
        dirs.into_iter()
            .filter(|d| d.join("config.json").exists())
            .map(|dir| {
                let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .filter(|f| !f.starts_with("reference") && !f.starts_with("generation_config"))
                    .map(|f| (f.clone(), std::fs::read(dir.join(&f)).unwrap()))
                    .collect();
                files.sort();
                Folder { name: dir.file_name().unwrap().to_string_lossy().into(), files }
            })
            .collect()
    })
}

/// Loads `folder` with file `changed` replaced by `bytes`, as the command line reads a folder.
fn load(folder: &Folder, changed: usize, bytes: &[u8]) -> Result<Model, headmap::Error> {
    let get = |name: &str| {
        folder
            .files
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| if i == changed { bytes } else { &folder.files[i].1[..] })
    };
    let index = get(INDEX);
    // the shards named by the undamaged index, so a damaged one is still given its files
    let names = folder.files.iter().find(|(n, _)| n == INDEX).map_or(Vec::new(), |(_, i)| shard_names(i).unwrap());
    let shards: Vec<(&str, &[u8])> = names.iter().filter_map(|n| Some((n.as_str(), get(n)?))).collect();
    Model::from_files(&ModelFiles {
        config: get("config.json").unwrap_or(&[]),
        weights: get("model.safetensors").unwrap_or(&[]),
        tokenizer: get("tokenizer.json"),
        source_spm: get("source.spm"),
        vocab: get("vocab.json"),
        index,
        shards,
    })
}

/// A damaged model that still loads must still run, or refuse the text, without panicking.
fn exercise(model: Model) {
    let request =
        Request { texts: vec!["동물이 길을 건너지 않았다.".into(), "a b".into()], ..Request::default() };
    if let Ok(run) = model.run(&request) {
        for place in &run.places {
            let _ = place.rows[0].head(0, 0);
        }
    }
}

/// (folder, file) pairs, every file of every fixture.
fn any_file() -> impl Strategy<Value = (usize, usize)> {
    (0..folders().len()).prop_flat_map(|f| (Just(f), 0..folders()[f].files.len()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn truncated_files_are_errors((f, file) in any_file(), keep in 0.0f64..1.0) {
        let folder = &folders()[f];
        let bytes = &folder.files[file].1;
        let cut = &bytes[..(bytes.len() as f64 * keep) as usize];
        match load(folder, file, cut) {
            Ok(model) => exercise(model),
            Err(e) => prop_assert!(!e.to_string().is_empty(), "{}: {}", folder.name, folder.files[file].0),
        }
    }

    #[test]
    fn bit_flipped_files_load_or_are_errors((f, file) in any_file(), flips in prop::collection::vec((0.0f64..1.0, 0u8..8), 1..8), in_head in any::<bool>()) {
        let folder = &folders()[f];
        let mut bytes = folder.files[file].1.clone();
        // half the flips land in the first 4 KB, where headers and JSON keys are
        let span = if in_head { bytes.len().min(4096) } else { bytes.len() };
        for (at, bit) in flips {
            let i = ((span as f64 * at) as usize).min(bytes.len().saturating_sub(1));
            if let Some(b) = bytes.get_mut(i) {
                *b ^= 1 << bit;
            }
        }
        if let Ok(model) = load(folder, file, &bytes) {
            exercise(model);
        }
    }
}

/// Edits `value` once at a place `pick` chooses: a key or item removed, replaced by a value
/// from `pool` (the same file's own values), an item doubled, or a scalar replaced.
fn edit_json(value: &mut serde_json::Value, pick: &mut impl FnMut(usize) -> usize, pool: &[serde_json::Value]) {
    use serde_json::Value;
    let other = |pick: &mut dyn FnMut(usize) -> usize| pool[pick(pool.len())].clone();
    match value {
        Value::Object(map) if !map.is_empty() => {
            let key = map.keys().nth(pick(map.len())).unwrap().clone();
            match pick(6) {
                0 => drop(map.remove(&key)),
                1 => drop(map.insert(key, other(pick))),
                _ => edit_json(map.get_mut(&key).unwrap(), pick, pool),
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = pick(items.len());
            match pick(6) {
                0 => drop(items.remove(i)),
                1 => items[i] = other(pick),
                2 => items.push(items[i].clone()),
                _ => edit_json(&mut items[i], pick, pool),
            }
        }
        _ => *value = other(pick),
    }
}

/// Every scalar in `value`, and the values a hostile file would try.
fn scalars(value: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match value {
        serde_json::Value::Object(map) => map.values().for_each(|v| scalars(v, out)),
        serde_json::Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
        scalar => out.push(scalar.clone()),
    }
}

/// (folder, file) pairs of every JSON file of every fixture.
fn any_json_file() -> impl Strategy<Value = (usize, usize)> {
    any_file().prop_filter("a JSON file", |&(f, file)| folders()[f].files[file].0.ends_with(".json"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Files that are still JSON but say something else: a key gone, a value moved to another
    /// key, an entry doubled. The tokenizers crate checks less when it reads a file than when
    /// it builds a tokenizer, so these reach deeper than flipped bits.
    #[test]
    fn edited_json_files_load_or_are_errors((f, file) in any_json_file(), picks in prop::collection::vec(any::<u32>(), 8..64), edits in 1usize..4) {
        let folder = &folders()[f];
        let mut value: serde_json::Value = serde_json::from_slice(&folder.files[file].1).unwrap();
        let mut pool = Vec::new();
        scalars(&value, &mut pool);
        pool.extend(serde_json::json!([null, -1, 4294967295u64, 1e300, "", [], {}]).as_array().unwrap().iter().cloned());
        let mut next = picks.into_iter().cycle();
        let mut pick = |n: usize| next.next().unwrap() as usize % n.max(1);
        for _ in 0..edits {
            edit_json(&mut value, &mut pick, &pool);
        }
        if let Ok(model) = load(folder, file, &serde_json::to_vec(&value).unwrap()) {
            exercise(model);
        }
    }
}

/// A safetensors header that claims 100 GB of tensor data is refused from the header alone.
#[test]
fn a_header_claiming_100_gb_is_refused_before_allocating() {
    let header = br#"{"embeddings.word_embeddings.weight":{"dtype":"F32","shape":[25000000000],"data_offsets":[0,100000000000]}}"#;
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header);
    file.extend_from_slice(&[0u8; 64]);
    let bert = folders().iter().find(|f| f.name == "bert").unwrap();
    let at = bert.files.iter().position(|(n, _)| n == "model.safetensors").unwrap();
    let e = load(bert, at, &file).err().expect("refused").to_string();
    assert!(e.starts_with("model.safetensors: not a valid safetensors file"), "{e}");
    // and a header length of 100 GB
    let mut huge = (100u64 << 30).to_le_bytes().to_vec();
    huge.extend_from_slice(header);
    assert!(load(bert, at, &huge).is_err());
}
