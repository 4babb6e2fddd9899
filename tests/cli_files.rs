//! `headmap attention --format safetensors`, and the committed attention files the widget's
//! pixel test draws (tests/fixtures/attention/): the command line still writes them as they
//! are, and every form reads back to the same weights.
//!
//! Made again with:
//! ```sh
//! T="동물이 길을 건너지 않았다. 그것은 너무 피곤했다." M=www/models/headmap-tiny-ko-en
//! headmap attention --model $M --text "$T" --place encoder_self --format json > tests/fixtures/attention/tiny-ko-en.json
//! headmap attention --model $M --text "$T" --place encoder_self --format safetensors --out tests/fixtures/attention/tiny-ko-en.safetensors
//! headmap attention --model $M --text "$T" --place encoder_self --format safetensors --precision f32 --out tests/fixtures/attention/tiny-ko-en.f32.safetensors
//! headmap attention --model tests/fixtures/hf/bert --text "a b c" --text "d e" --format safetensors --out tests/fixtures/attention/bert-two-rows.safetensors
//! ```

#![cfg(all(feature = "cli", not(target_arch = "wasm32")))]

mod cli_common;

use std::path::{Path, PathBuf};

use cli_common::{fixture, headmap};
use headmap::import::read;
use headmap::Run;

const TEXT: &str = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn out(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("headmap-cli-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The largest |Δ| between two runs' weights, after checking they have the same places and shapes.
fn largest_difference(a: &Run, b: &Run) -> f32 {
    assert_eq!(a.places.len(), b.places.len());
    let mut worst = 0.0f32;
    for (p, q) in a.places.iter().zip(&b.places) {
        assert_eq!((p.place, p.mask, p.batch()), (q.place, q.mask, q.batch()));
        for (r, s) in p.rows.iter().zip(&q.rows) {
            assert_eq!(
                r.keys.iter().map(|t| &t.label).collect::<Vec<_>>(),
                s.keys.iter().map(|t| &t.label).collect::<Vec<_>>()
            );
            let (x, y) = (r.weights().unwrap(), s.weights().unwrap());
            assert_eq!(x.shape(), y.shape());
            worst = x.iter().zip(y.iter()).map(|(u, v)| (u - v).abs()).fold(worst, f32::max);
        }
    }
    worst
}

fn written(args: &[&str], format: &[&str], name: &str) -> Run {
    let path = out(name);
    let all: Vec<&str> = args.iter().chain(format).copied().chain(["--out", path.to_str().unwrap()]).collect();
    let (ok, _, err) = headmap(&all);
    assert!(ok, "{all:?}: {err}");
    read(name, &std::fs::read(&path).unwrap()).unwrap().run
}

#[test]
fn the_committed_files_are_what_the_command_line_writes() {
    let model = root().join("www/models/headmap-tiny-ko-en");
    let args = ["attention", "--model", model.to_str().unwrap(), "--text", TEXT, "--place", "encoder_self"];
    let now = written(&args, &["--format", "json"], "now.json");
    let committed = |name: &str| {
        read(name, &std::fs::read(root().join("tests/fixtures/attention").join(name)).unwrap()).unwrap().run
    };
    assert!(largest_difference(&now, &committed("tiny-ko-en.json")) <= 1e-6);
    assert!(largest_difference(&now, &committed("tiny-ko-en.f32.safetensors")) <= 1e-6);
    let f16 = largest_difference(&now, &committed("tiny-ko-en.safetensors"));
    assert!(f16 <= 5e-4, "f16 rounds a weight by at most 2⁻¹¹ of it: {f16}");
    let bert = fixture("bert");
    let two = written(
        &["attention", "--model", &bert, "--text", "a b c", "--text", "d e"],
        &["--format", "json"],
        "two.json",
    );
    assert!(largest_difference(&two, &committed("bert-two-rows.safetensors")) <= 5e-4, "the explorer's two-row file");
}

#[test]
fn safetensors_holds_every_place_and_row_of_an_encoder_decoder() {
    let bart = fixture("bart");
    let args = ["attention", "--model", &bart, "--text", "a b c", "--text", "d e", "--target", "f g", "--target", "h"];
    let json = written(&args, &["--format", "json"], "bart.json");
    assert_eq!(json.places.len(), 3, "encoder, decoder and cross");
    assert_eq!(json.batch(), 2);
    let f32s = written(&args, &["--format", "safetensors", "--precision", "f32"], "bart.f32.safetensors");
    assert_eq!(largest_difference(&json, &f32s), 0.0);
    let f16s = written(&args, &["--format", "safetensors"], "bart.safetensors");
    assert!(largest_difference(&json, &f16s) <= 5e-4);
    let size = |name: &str| std::fs::metadata(out(name)).unwrap().len();
    assert!(size("bart.safetensors") < size("bart.f32.safetensors"));
    // PAD of the shorter row stays PAD, and its weights stay where the mask lets them
    let cross = &f16s.places.iter().find(|p| p.place == headmap::Place::Cross).unwrap().rows[1];
    assert_eq!(
        cross.key_valid.iter().filter(|v| !**v).count(),
        json.places[2].rows[1].key_valid.iter().filter(|v| !**v).count()
    );
}

#[test]
fn safetensors_needs_a_file_to_write_to() {
    let (ok, _, err) = headmap(&["attention", "--model", &fixture("bert"), "--text", "a", "--format", "safetensors"]);
    assert!(!ok);
    assert_eq!(err.trim(), "headmap: png and safetensors output need --out FILE");
}
