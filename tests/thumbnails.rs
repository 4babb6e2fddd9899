//! A text too long for its run to keep its weights: each head pooled to a thumbnail as its
//! layer runs (`Settings::thumbs`) equals the head pooled afterwards from its layer computed
//! again, bit for bit, for every kind of block, in a run through every layer and in one that
//! stops at the last layer's weights.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

mod common;

use std::path::Path;

use common::load;
use headmap::attention::multi_head::Kept;
use headmap::run::{thumbnail_pixels, Batch, Row, RowAttention, Settings, Store};
use headmap::Model;

fn fixture(name: &str) -> Model {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name))
}

fn row(model: &Model, text: &str) -> Row {
    let encoded = model.tokenize(text).unwrap();
    Row { valid: vec![true; encoded.ids.len()], ids: encoded.ids, tokens: encoded.tokens }
}

#[test]
fn thumbnails_pooled_as_the_layers_run_are_those_pooled_from_each_layer_again() {
    let text = "The animal didn't cross the street because it was too tired.";
    // an encoder (two texts of one length: stacked), decoders with a causal reach, rotary
    // and grouped heads, relative positions, and cross-attention of another length
    for (name, target) in [
        ("bert", None),
        ("gpt2", None),
        ("llama", None),
        ("t5", Some("Das Tier war müde.")),
        ("bart", Some("It was tired.")),
    ] {
        let model = fixture(name);
        let targets = target.map(|t| vec![row(&model, t); 2]).unwrap_or_default();
        let batch = Batch { sources: vec![row(&model, text); 2], targets };
        // through every layer, and stopping at the last layer's weights
        for hidden in [true, false] {
            let on_demand = Settings { store: Store::OnDemand, hidden, ..Settings::trained() };
            let again = model.run_batch(&batch, &on_demand).unwrap();
            let size = 3;
            let ahead = model.run_batch(&batch, &Settings { thumbs: Some(size), ..on_demand.clone() }).unwrap();
            for (a, b) in again.places.iter().zip(&ahead.places) {
                for (ra, rb) in a.rows.iter().zip(&b.rows) {
                    let what = format!("{name} {} (hidden {hidden})", a.place.name());
                    let (rows, columns) = thumbnail_pixels(size, ra.size()).unwrap();
                    assert_eq!(rb.kept(), Kept::Pooled(rows, columns), "{what}");
                    assert_eq!((ra.pooled_layers(), rb.pooled_layers()), (0, rb.layers()), "{what}");
                    for (layer, head) in (0..ra.layers()).flat_map(|l| (0..ra.heads()).map(move |h| (l, h))) {
                        let bits = |r: &RowAttention| {
                            r.pooled(layer, head, rows, columns)
                                .unwrap()
                                .iter()
                                .map(|v| v.to_bits())
                                .collect::<Vec<_>>()
                        };
                        assert_eq!(bits(rb), bits(ra), "{what}: layer {layer} head {head}");
                    }
                }
            }
        }
        // a row that keeps its weights pools nothing ahead, nor one whose cells take a pixel
        let kept = model.run_batch(&batch, &Settings { thumbs: Some(5), ..Settings::trained() }).unwrap();
        assert!(kept.places.iter().all(|p| p.rows.iter().all(|r| r.kept() == Kept::Weights && r.pooled_layers() == 0)));
        let wide = Settings { store: Store::OnDemand, thumbs: Some(500), ..Settings::trained() };
        let wide = model.run_batch(&batch, &wide).unwrap();
        assert!(wide.places.iter().all(|p| p.rows.iter().all(|r| r.kept() == Kept::Maxima)));
    }
}

#[test]
fn a_thumbnail_is_sized_as_the_page_sizes_it() {
    // cell = size / max(tq, tk); each side rounded, at least a pixel; none at a pixel a cell
    assert_eq!(thumbnail_pixels(72, (2017, 2017)), Some((72, 72)));
    assert_eq!(thumbnail_pixels(72, (300, 100)), Some((72, 24)));
    assert_eq!(thumbnail_pixels(5, (1000, 1)), Some((5, 1)));
    assert_eq!(thumbnail_pixels(72, (72, 10)), None);
    assert_eq!(thumbnail_pixels(0, (10, 10)), Some((1, 1)));
}
