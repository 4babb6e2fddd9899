//! Peak memory of a Llama-style model at 2048 tokens, natively: what a run holds when it keeps
//! each layer's inputs and recomputes a layer's weights on demand, against the
//! L × H × 2048² f32 weights that keeping them all would take. A counting allocator measures
//! every byte the process asks for. Figures, not assertions.
//!
//! Run: `cargo bench --features hf --bench memory` (the tiny shape and a SmolLM-135M shape,
//! random weights: about a minute), or `… --bench memory -- tiny` for the tiny one alone.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use headmap::models::hf::ModelFiles;
use headmap::rng::SplitMix64;
use headmap::run::{Batch, Row, Settings};
use headmap::tokenize::Token;
use headmap::Model;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// A Llama-style shape.
struct Shape {
    name: &'static str,
    hidden: usize,
    layers: usize,
    heads: usize,
    kv_heads: usize,
    intermediate: usize,
    vocab: usize,
}

/// `config.json` and a random bf16 `model.safetensors` of `shape`.
fn model_files(shape: &Shape) -> (Vec<u8>, Vec<u8>) {
    let head_dim = shape.hidden / shape.heads;
    let config = serde_json::json!({
        "model_type": "llama", "hidden_size": shape.hidden, "num_hidden_layers": shape.layers,
        "num_attention_heads": shape.heads, "num_key_value_heads": shape.kv_heads,
        "intermediate_size": shape.intermediate, "vocab_size": shape.vocab,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "eos_token_id": 2, "tie_word_embeddings": true
    });
    let (d, i, q, kv) = (shape.hidden, shape.intermediate, shape.heads * head_dim, shape.kv_heads * head_dim);
    let mut tensors: Vec<(String, Vec<usize>)> =
        vec![("model.embed_tokens.weight".into(), vec![shape.vocab, d]), ("model.norm.weight".into(), vec![d])];
    for l in 0..shape.layers {
        let p = format!("model.layers.{l}");
        for (name, dims) in [
            ("input_layernorm.weight", vec![d]),
            ("post_attention_layernorm.weight", vec![d]),
            ("self_attn.q_proj.weight", vec![q, d]),
            ("self_attn.k_proj.weight", vec![kv, d]),
            ("self_attn.v_proj.weight", vec![kv, d]),
            ("self_attn.o_proj.weight", vec![d, q]),
            ("mlp.gate_proj.weight", vec![i, d]),
            ("mlp.up_proj.weight", vec![i, d]),
            ("mlp.down_proj.weight", vec![d, i]),
        ] {
            tensors.push((format!("{p}.{name}"), dims));
        }
    }
    let mut rng = SplitMix64::new(7);
    let data: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .into_iter()
        .map(|(name, dims)| {
            let n: usize = dims.iter().product();
            let norm = dims.len() == 1;
            let bytes = (0..n)
                .flat_map(|_| {
                    let v = if norm { 1.0 } else { 0.05 * rng.next_signed() };
                    half::bf16::from_f32(v).to_le_bytes()
                })
                .collect();
            (name, dims, bytes)
        })
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView)> = data
        .iter()
        .map(|(name, dims, bytes)| {
            (
                name.clone(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::BF16, dims.clone(), bytes).expect("sized"),
            )
        })
        .collect();
    let weights = safetensors::serialize(views, None).expect("serializes");
    (serde_json::to_vec(&config).expect("json"), weights)
}

fn measure(shape: &Shape) {
    let tokenizer = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hf/llama/tokenizer.json"))
        .expect("the llama fixture's tokenizer");
    let (config, weights) = model_files(shape);
    let model = Model::from_files(&ModelFiles {
        config: &config,
        weights: &weights,
        tokenizer: Some(&tokenizer),
        ..ModelFiles::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    drop(weights);
    let model_bytes = IN_USE.load(Ordering::Relaxed);
    let n = 2048;
    let ids: Vec<u32> = (0..n as u32).map(|i| 3 + (i * 7919) % (shape.vocab as u32 - 3)).collect();
    let row = Row { tokens: ids.iter().map(|id| Token::word(&id.to_string())).collect(), valid: vec![true; n], ids };
    let batch = Batch { sources: vec![row], targets: Vec::new() };
    PEAK.store(IN_USE.load(Ordering::Relaxed), Ordering::Relaxed);
    let start = Instant::now();
    let run = model.run_batch(&batch, &Settings::trained()).unwrap_or_else(|e| panic!("{e}"));
    let forward = start.elapsed();
    let (forward_peak, held) = (PEAK.load(Ordering::Relaxed), IN_USE.load(Ordering::Relaxed));
    // what a view asks for: a head of the first and the last layer, every head's maximum
    let start = Instant::now();
    let row = &run.places[0].rows[0];
    std::hint::black_box(row.head(0, 0).expect("a head"));
    std::hint::black_box(row.head(shape.layers - 1, shape.heads - 1).expect("a head"));
    let one_layer = start.elapsed();
    std::hint::black_box(row.maxima().expect("maxima"));
    let view_peak = PEAK.load(Ordering::Relaxed);
    let all = shape.layers * shape.heads * n * n * 4;
    println!(
        "{}: {} layers × {} heads ({} KV), hidden {}, at {n} tokens; keeps all weights: {}",
        shape.name,
        shape.layers,
        shape.heads,
        shape.kv_heads,
        shape.hidden,
        row.keeps_weights()
    );
    println!("  model in memory            {:9.1} MB", mb(model_bytes));
    println!("  peak during the forward    {:9.1} MB  ({:.1} s)", mb(forward_peak), forward.as_secs_f64());
    let what = if row.keeps_weights() { "every weight, and the layer inputs" } else { "the layer inputs" };
    println!("  held by the run after it   {:9.1} MB  ({what})", mb(held - model_bytes));
    println!(
        "  peak while viewing         {:9.1} MB  (two layers recomputed in {:.2} s, then every head's maximum)",
        mb(view_peak),
        one_layer.as_secs_f64()
    );
    println!("  every weight kept would be {:9.1} MB", mb(all));
}

fn main() {
    let tiny = Shape {
        name: "tiny (the llama fixture's shape)",
        hidden: 32,
        layers: 2,
        heads: 4,
        kv_heads: 2,
        intermediate: 48,
        vocab: 400,
    };
    let smollm = Shape {
        name: "SmolLM-135M's shape",
        hidden: 576,
        layers: 30,
        heads: 9,
        kv_heads: 3,
        intermediate: 1536,
        vocab: 49152,
    };
    let only_tiny = std::env::args().any(|a| a == "tiny");
    measure(&tiny);
    if !only_tiny {
        measure(&smollm);
    }
}
