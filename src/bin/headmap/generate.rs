//! `headmap generate`: text the model writes, token by token over its KV cache, greedy or
//! sampled, with heads off; as JSON, or the whole run as the attention file the explorer and
//! the widget open.

use headmap::models::generate::{Ended, GenerateRequest, Sampling};
use headmap::run::Ablation;

use super::{json, load, write};

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum GenerationFormat {
    Json,
    /// The run of the prompt and what was written, every weight, as `headmap attention
    /// --format safetensors` writes it.
    Safetensors,
}

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// A model folder with an output head: a decoder-only model or an encoder–decoder.
    #[arg(long)]
    pub model: std::path::PathBuf,
    /// The text to continue (an encoder–decoder's source).
    #[arg(long)]
    pub text: String,
    #[arg(long, default_value_t = 20)]
    pub max_new_tokens: usize,
    /// Sample instead of taking the most likely token; above 0.
    #[arg(long)]
    pub temperature: Option<f32>,
    /// With --temperature: draw from the k most likely tokens only.
    #[arg(long)]
    pub top_k: Option<usize>,
    /// With --temperature: draw from the smallest set of most likely tokens reaching p, in (0, 1].
    #[arg(long)]
    pub top_p: Option<f32>,
    /// With --temperature: the same seed draws the same text.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Heads turned off while it writes, `L.H` from 0, as for `headmap predict`.
    #[arg(long)]
    pub ablate: Option<String>,
    /// Turn --ablate's heads off by their mean output over the prompt's tokens, not zeros.
    #[arg(long)]
    pub mean_ablation: bool,
    #[arg(long, value_enum, default_value = "json")]
    pub format: GenerationFormat,
    /// Where to write; default standard output (safetensors needs a file).
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
}

pub fn generate(args: &GenerateArgs) -> Result<(), String> {
    if args.out.is_none() && matches!(args.format, GenerationFormat::Safetensors) {
        return Err("safetensors output needs --out FILE".into());
    }
    if args.temperature.is_none() && (args.top_k.is_some() || args.top_p.is_some()) {
        return Err("--top-k and --top-p shape sampling: give a --temperature too (greedy decoding takes the most likely token)".into());
    }
    let model = load(&args.model)?;
    let sampling = args.temperature.map(|temperature| Sampling {
        temperature,
        top_k: args.top_k,
        top_p: args.top_p,
        seed: args.seed,
    });
    let request = GenerateRequest {
        prompt: args.text.clone(),
        max_new_tokens: args.max_new_tokens,
        sampling,
        ablate: args.ablate.clone(),
        ablation: if args.mean_ablation { Ablation::Mean } else { Ablation::Zero },
    };
    let generation = model.generate_text(&request, |_| true).map_err(|e| e.to_string())?;
    // fewer tokens than asked, the decoder's positions all used: said, not left to guess
    let (written, max) = (generation.generated.len(), model.info().max_tokens);
    if generation.ended == Ended::Positions {
        eprintln!(
            "headmap: wrote {written} of the {} tokens asked: the model reads at most {max}",
            args.max_new_tokens
        );
    }
    let bytes = match args.format {
        GenerationFormat::Json => json(&generation)?.into_bytes(),
        GenerationFormat::Safetensors => {
            let run = model.generated_run(&request, &generation).map_err(|e| e.to_string())?;
            let precision = headmap::export::Precision::F32;
            headmap::export::safetensors(&model.info().architecture, &run, precision).map_err(|e| e.to_string())?
        }
    };
    write(args.out.as_deref(), &bytes)
}
