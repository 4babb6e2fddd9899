//! Generation in the browser, one token per call so a page draws each as it comes and can
//! stop between two:
//!
//! ```js
//! const writer = model.writer({ prompt: "고양이 공원 노래", maxNewTokens: 20 });
//! while (!writer.done) {
//!   const token = writer.step();              // { id, token, p, index, keys }
//!   const { decoder, cross } = writer.take(token.index); // [L, H, keys]: what wrote it
//! }
//! writer.result();                            // the document `headmap generate` writes
//! writer.run();                               // the whole text's run, for every view
//! ```

use js_sys::Float32Array;
use wasm_bindgen::prelude::*;

use super::run::Run;
use super::{js_error, Model};
use crate::error::Error;
use crate::models::generate::{GenerateRequest, Sampling};
use crate::run::Ablation;

#[wasm_bindgen(typescript_custom_section)]
const GENERATE_TYPES: &str = r#"
/** what `Model.writer` is asked; without `temperature` it writes greedily */
export interface GenerateRequest {
  prompt: string; maxNewTokens?: number; temperature?: number; topK?: number; topP?: number; seed?: number;
  ablate?: string; ablation?: "zero" | "mean";
}
/** a token just written: its probability, its index among those written, and how many keys
 * the position that wrote it read */
export interface WrittenToken { id: number; token: string; p: number; index: number; keys: number }
export interface Generation {
  format: "headmap.generation"; version: 1; model_type: string; prompt: string[];
  generated: Candidate[]; text: string;
  ended: "end_token" | "max_new_tokens" | "positions" | "stopped"; ablated?: string[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "GenerateRequest")]
    pub type GenerateRequestJs;
    #[wasm_bindgen(typescript_type = "WrittenToken | undefined")]
    pub type WrittenTokenJs;
    #[wasm_bindgen(typescript_type = "Generation")]
    pub type GenerationJs;
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GenerateIn {
    prompt: String,
    max_new_tokens: Option<usize>,
    temperature: Option<f32>,
    top_k: Option<usize>,
    top_p: Option<f32>,
    seed: Option<u64>,
    ablate: Option<String>,
    #[serde(default)]
    ablation: Ablation,
}

/// The most tokens one writing asks for: a page's limit, far past what the models here read.
const MAX_NEW_TOKENS: usize = 4096;

#[wasm_bindgen]
impl Model {
    /// Starts writing from `{ prompt, maxNewTokens? (20), temperature?, topK?, topP?, seed?,
    /// ablate?, ablation? }`: a decoder-only model continues the prompt, an encoder–decoder
    /// writes its target. Fails with `no_output_head`, `cannot_generate`, `bad_temperature`,
    /// `bad_top_p`, `empty_text` or `too_long`.
    pub fn writer(&self, request: GenerateRequestJs) -> Result<Writer, JsValue> {
        let r: GenerateIn = super::from_js("request", request.into())?;
        let max_new_tokens = r.max_new_tokens.unwrap_or(20);
        if max_new_tokens > MAX_NEW_TOKENS {
            let e = Error::OutOfRange {
                setting: "maxNewTokens".into(),
                value: max_new_tokens,
                min: 0,
                max: MAX_NEW_TOKENS,
            };
            return Err(js_error(e));
        }
        if r.temperature.is_none() && (r.top_k.is_some() || r.top_p.is_some()) {
            // greedy decoding takes the most likely token: top-k and top-p shape sampling only
            return Err(js_error(Error::BadTemperature { value: 0.0 }));
        }
        let sampling = r.temperature.map(|temperature| Sampling {
            temperature,
            top_k: r.top_k,
            top_p: r.top_p,
            seed: r.seed.unwrap_or(0),
        });
        let request =
            GenerateRequest { prompt: r.prompt, max_new_tokens, sampling, ablate: r.ablate, ablation: r.ablation };
        let writer = crate::models::generate::Writer::new(&self.model, &request).map_err(js_error)?;
        Ok(Writer { writer, request, model: std::rc::Rc::clone(&self.model) })
    }
}

/// Text being written.
#[wasm_bindgen]
pub struct Writer {
    writer: crate::models::generate::Writer,
    request: GenerateRequest,
    model: std::rc::Rc<crate::models::Model>,
}

#[wasm_bindgen]
impl Writer {
    /// Writes the next token; undefined once the text has ended.
    pub fn step(&mut self) -> Result<WrittenTokenJs, JsValue> {
        let index = self.writer.written().len();
        let Some(written) = self.writer.step(&self.model).map_err(js_error)? else {
            return Ok(JsValue::UNDEFINED.into());
        };
        let keys = written.rows.decoder.first().map_or(0, |r| r.ncols());
        let t = &written.token;
        #[derive(serde::Serialize)]
        struct Out<'a> {
            id: u32,
            token: &'a str,
            p: f32,
            index: usize,
            keys: usize,
        }
        super::typed(&Out { id: t.id, token: &t.token, p: t.p, index, keys })
    }

    /// Whether the text has ended.
    #[wasm_bindgen(getter)]
    pub fn done(&self) -> bool {
        self.writer.is_done()
    }

    /// Hands token `index`'s attention over — what the position that wrote it read, every layer
    /// and head: `{ decoder, cross }`, Float32Array [L, H, keys] each, the decoder's
    /// self-attention over every token before it and an encoder–decoder's cross-attention over
    /// the source (empty in a decoder-only model). The writer keeps no copy, so a page holds the
    /// only one; a second call gives empty arrays.
    pub fn take(&mut self, index: usize) -> Result<JsValue, JsValue> {
        let rows = self.writer.take_rows(index).map_err(js_error)?;
        let flat = |rows: &[ndarray::Array2<f32>]| {
            let all: Vec<f32> = rows.iter().flat_map(|r| r.iter().copied()).collect();
            Float32Array::from(&all[..])
        };
        let out = js_sys::Object::new();
        js_sys::Reflect::set(&out, &"decoder".into(), &flat(&rows.decoder))?;
        js_sys::Reflect::set(&out, &"cross".into(), &flat(&rows.cross))?;
        Ok(out.into())
    }

    /// What layer `layer`'s KV cache keeps for head `head`: `{ keys, values }`, each
    /// Float32Array [T, d_k], and `dK`.
    pub fn kept(&self, layer: usize, head: usize) -> Result<JsValue, JsValue> {
        let (k, v) = self.writer.kept(&self.model, layer, head).map_err(js_error)?;
        let out = js_sys::Object::new();
        let set = |name: &str, value: &JsValue| js_sys::Reflect::set(&out, &name.into(), value);
        set("keys", &Float32Array::from(k.as_slice().unwrap_or_default()).into())?;
        set("values", &Float32Array::from(v.as_slice().unwrap_or_default()).into())?;
        set("dK", &JsValue::from(k.ncols() as u32))?;
        Ok(out.into())
    }

    /// The tokens the decoder has read, as shown: what `take(…).decoder` has a key for.
    pub fn read(&self) -> Result<JsValue, JsValue> {
        super::to_js(&self.writer.read(&self.model))
    }

    /// The prompt's tokens, as shown: what `take(…).cross` has a key for.
    pub fn prompt(&self) -> Result<JsValue, JsValue> {
        super::to_js(self.writer.prompt())
    }

    /// Bytes every layer's KV cache holds now.
    #[wasm_bindgen(js_name = cacheBytes)]
    pub fn cache_bytes(&self) -> usize {
        self.writer.cache_bytes()
    }

    /// The document `headmap generate` writes, of what is written so far.
    pub fn result(&self) -> Result<GenerationJs, JsValue> {
        super::typed(&self.writer.generation(&self.model).map_err(js_error)?)
    }

    /// The run of the prompt and every token written so far, like any run of the model.
    pub fn run(&self) -> Result<Run, JsValue> {
        let generation = self.writer.generation(&self.model).map_err(js_error)?;
        let run = self.model.generated_run(&self.request, &generation).map_err(js_error)?;
        Ok(Run {
            run,
            model: Some(std::rc::Rc::clone(&self.model)),
            model_type: self.model.info().architecture.clone(),
        })
    }
}
