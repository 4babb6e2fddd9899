//! The trainer against PyTorch on the same weights and batch (fixtures from
//! scripts/dev/make_train_fixtures.py): the loss, every weight's gradient within 1e-4 of the
//! largest in its tensor, and one Adam step within 1e-6 of `torch.optim.Adam`'s.
#![cfg(all(feature = "hf", not(target_arch = "wasm32")))]

use std::collections::HashMap;
use std::path::Path;

use headmap::train::{sequence_grad, Adam, Layout, TinyConfig};
use serde::Deserialize;

#[derive(Deserialize)]
struct Size {
    layers: usize,
    d_model: usize,
    heads: usize,
    vocab: usize,
    length: usize,
    seed: u64,
}

#[derive(Deserialize)]
struct Fixture {
    size: Size,
    tied: bool,
    learning_rate: f32,
    ids: Vec<Vec<u32>>,
    loss: f64,
    grad: HashMap<String, Vec<f32>>,
    after_adam: HashMap<String, Vec<f32>>,
}

fn fixture(name: &str) -> Fixture {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/train").join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// A tensor of the fixture laid out in the trainer's flat order.
fn flat(layout: &Layout, tensors: &HashMap<String, Vec<f32>>) -> Vec<f32> {
    let mut out = vec![f32::NAN; layout.len];
    for (name, slot, _) in layout.named() {
        let values = &tensors[&name];
        assert_eq!(values.len(), slot.len(), "{name}");
        out[slot.offset..slot.offset + slot.len()].copy_from_slice(values);
    }
    out
}

#[test]
fn one_step_equals_pytorch() {
    for name in ["step-untied.json", "step-tied.json"] {
        let f = fixture(name);
        let s = &f.size;
        let config = TinyConfig {
            vocab_size: s.vocab,
            n_positions: s.length,
            n_embd: s.d_model,
            n_head: s.heads,
            n_layer: s.layers,
            tie_word_embeddings: f.tied,
        };
        let layout = Layout::new(config).unwrap();
        assert_eq!(layout.named().len(), f.grad.len(), "{name}: every tensor and no other");
        let weights = layout.init(s.seed);
        let predictions = f.ids.iter().map(|ids| ids.len() - 1).sum();
        let (mut grad, mut loss) = (vec![0.0f32; layout.len], 0.0);
        for ids in &f.ids {
            let g = sequence_grad(&layout, &weights, ids, predictions);
            grad.iter_mut().zip(&g.grad).for_each(|(t, v)| *t += v);
            loss += g.loss;
        }
        let loss = loss / predictions as f64;
        assert!((loss - f.loss).abs() < 1e-5, "{name}: loss {loss} against {}", f.loss);
        let theirs = flat(&layout, &f.grad);
        for (tensor, slot, _) in layout.named() {
            let range = slot.offset..slot.offset + slot.len();
            let largest = theirs[range.clone()].iter().fold(0.0f32, |m, v| m.max(v.abs()));
            for i in range {
                let err = (grad[i] - theirs[i]).abs();
                assert!(
                    err <= 1e-4 * largest + 1e-8,
                    "{name} {tensor}[{}]: {} against {}",
                    i - slot.offset,
                    grad[i],
                    theirs[i]
                );
            }
        }
        // one Adam step from the same gradient
        let mut stepped = weights.clone();
        Adam::new(layout.len, f.learning_rate).step(&mut stepped, &theirs);
        let after = flat(&layout, &f.after_adam);
        let worst = stepped.iter().zip(&after).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(worst <= 1e-6, "{name}: Adam's step differs by {worst}");
    }
}
