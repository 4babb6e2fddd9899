//! The attention of one run at one place in a model (encoder self-attention, decoder masked
//! self-attention or cross-attention), for every batch row and layer. Shared by the toy
//! model and the Hugging Face models.

use ndarray::{Array2, Array3};

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::{HeadTrace, MultiHeadAttention};
use crate::cost::Cost;
use crate::error::{Error, Result};

/// One layer's attention weights with the inputs that made them, for traces.
pub(crate) struct LayerAttention {
    pub weights: Array3<f32>, // (H, Tq, Tk)
    pub x_q: Array2<f32>,     // (Tq, D)
    pub x_kv: Array2<f32>,    // (Tk, D)
}

/// Per batch row and layer, the weights of one place attention is used.
#[derive(Debug, Clone)]
pub struct AttentionRun {
    /// Which place: `Padding` or `None` encoder self-attention, `Causal` decoder
    /// self-attention, `Cross` cross-attention.
    pub kind: MaskKind,
    pub scale: bool,
    /// Per batch row, the query side's tokens (padded to Tq).
    pub queries: Vec<Vec<String>>,
    /// Per batch row, the key side's tokens (padded to Tk).
    pub keys: Vec<Vec<String>>,
    pub query_valid: Vec<Vec<bool>>,
    pub key_valid: Vec<Vec<bool>>,
    /// `[row][layer]`, each (H, Tq, Tk).
    pub weights: Vec<Vec<Array3<f32>>>,
    /// Per batch row, the queries that could see no key.
    pub fully_masked_rows: Vec<Vec<usize>>,
    inputs: Vec<Vec<(Array2<f32>, Array2<f32>)>>, // [row][layer] (x_q (Tq, D), x_kv (Tk, D))
    masks: Vec<Option<Mask>>,                     // [row] (Tq, Tk)
}

/// The tokens on both sides of one batch row.
pub(crate) struct RowTokens<'a> {
    pub queries: &'a [String],
    pub keys: &'a [String],
    pub query_valid: &'a [bool],
    pub key_valid: &'a [bool],
}

impl AttentionRun {
    pub(crate) fn new(kind: MaskKind, scale: bool) -> Self {
        AttentionRun {
            kind,
            scale,
            queries: Vec::new(),
            keys: Vec::new(),
            query_valid: Vec::new(),
            key_valid: Vec::new(),
            weights: Vec::new(),
            fully_masked_rows: Vec::new(),
            inputs: Vec::new(),
            masks: Vec::new(),
        }
    }

    pub(crate) fn push_row(&mut self, tokens: RowTokens, layers: Vec<LayerAttention>, mask: Option<Mask>) {
        self.queries.push(tokens.queries.to_vec());
        self.keys.push(tokens.keys.to_vec());
        self.query_valid.push(tokens.query_valid.to_vec());
        self.key_valid.push(tokens.key_valid.to_vec());
        self.fully_masked_rows.push(mask.as_ref().map_or_else(Vec::new, Mask::fully_masked_rows));
        let (weights, inputs) = layers.into_iter().map(|l| (l.weights, (l.x_q, l.x_kv))).unzip();
        self.weights.push(weights);
        self.inputs.push(inputs);
        self.masks.push(mask);
    }

    /// The attention cost of one batch row over all layers (d_k = the block's width / H).
    pub fn cost(&self) -> Cost {
        let (h, tq, tk) = self.shape();
        let d_k = self.inputs.first().and_then(|layers| layers.first()).map_or(0, |(x, _)| x.ncols() / h.max(1));
        Cost::of_attention(h, tq, tk, d_k, d_k).times(self.layers())
    }

    pub fn layers(&self) -> usize {
        self.weights.first().map_or(0, Vec::len)
    }

    pub fn batch(&self) -> usize {
        self.weights.len()
    }

    /// Per batch row, the mask the run applied, `None` for no mask; each (Tq, Tk).
    pub fn masks(&self) -> &[Option<Mask>] {
        &self.masks
    }

    /// (H, Tq, Tk).
    pub fn shape(&self) -> (usize, usize, usize) {
        self.weights.first().and_then(|row| row.first()).map_or((0, 0, 0), |w| w.dim())
    }

    /// Every step of head `head` in `layer` of batch row `row`, recomputed through `block`,
    /// the attention block that produced that layer.
    pub fn trace(&self, block: &MultiHeadAttention, row: usize, layer: usize, head: usize) -> Result<HeadTrace> {
        let (x_q, x_kv) = self.layer_inputs(row, layer)?;
        block.trace(x_q.view(), x_kv.view(), self.masks[row].as_ref(), self.scale, head)
    }

    /// Fails unless batch row `row` has layer `layer`.
    pub fn check(&self, row: usize, layer: usize) -> Result<()> {
        self.layer_inputs(row, layer).map(|_| ())
    }

    fn layer_inputs(&self, row: usize, layer: usize) -> Result<&(Array2<f32>, Array2<f32>)> {
        let inputs = self.inputs.get(row).ok_or_else(|| {
            Error::setting("row", format!("row {row} does not exist: the batch has {}", self.batch()))
        })?;
        inputs.get(layer).ok_or_else(|| {
            Error::setting("layer", format!("layer {layer} does not exist: there are {}", self.layers()))
        })
    }
}

/// The self-attention mask of `kind` over one row: `Padding` hides PAD keys, `Causal` also
/// the future, `None` nothing. (`Cross` is not a self-attention mask.)
pub fn self_attention_mask(kind: MaskKind, valid: &[bool]) -> Result<Option<Mask>> {
    let t = valid.len();
    match kind {
        MaskKind::None => Ok(None),
        MaskKind::Padding => Ok(Some(Mask::key_padding(t, valid))),
        MaskKind::Causal => Ok(Some(Mask::causal(t).and(&Mask::key_padding(t, valid))?)),
        MaskKind::Cross => Err(Error::setting("mask", "cross is not a self-attention mask")),
    }
}

/// One row of a padded batch of token ids, as a real model takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub ids: Vec<u32>,
    pub labels: Vec<String>,
    /// false at PAD positions.
    pub valid: Vec<bool>,
}

impl Row {
    /// Pads every row to the longest with `pad_id`, labelled `pad_label`.
    pub fn pad_batch(rows: Vec<(Vec<u32>, Vec<String>)>, pad_id: u32, pad_label: &str) -> Vec<Row> {
        let longest = rows.iter().map(|(ids, _)| ids.len()).max().unwrap_or(0);
        rows.into_iter()
            .map(|(mut ids, mut labels)| {
                let n = ids.len();
                ids.resize(longest, pad_id);
                labels.resize(longest, pad_label.to_string());
                Row { ids, labels, valid: (0..longest).map(|i| i < n).collect() }
            })
            .collect()
    }
}
