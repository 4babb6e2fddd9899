//! How a stack's layers are recorded as they run: each block run as the settings say, and
//! what the row keeps of it ([`RowAttention::kept`]) recorded.

use std::sync::Arc;

use ndarray::Array2;

use super::record::{LayerInputs, RowAttention};
use super::request::Settings;
use crate::attention::mask::Mask;
use crate::attention::multi_head::{Kept, MultiHeadAttention};
use crate::attention::place::Place;
#[cfg(feature = "hf")]
use crate::error::Error;
use crate::error::Result;

/// Runs `block` with queries from `x_q` over `x_kv`, as `settings` say for layer `layer` at
/// `place` (scaled or not, some heads edited), and records the layer in `record`, if any: the
/// block's output (Tq, D). A row that does not keep weights gets none, only each head's
/// thumbnail if it pools them: each head's weights live only while that head is computed.
pub(crate) fn attend(
    block: &Arc<MultiHeadAttention>,
    x_q: &Arc<Array2<f32>>,
    x_kv: &Arc<Array2<f32>>,
    mask: &Arc<Mask>,
    settings: &Settings,
    (place, layer): (Place, usize),
    record: Option<&mut RowAttention>,
) -> Result<Array2<f32>> {
    // the toy build turns no head off (Model::settings refuses it there), and leaves the edits' code out
    #[cfg(feature = "hf")]
    let edits = settings.edits.at(place, layer);
    #[cfg(not(feature = "hf"))]
    let edits = {
        let _ = (place, layer);
        []
    };
    let keep = record.as_ref().map_or(Kept::Maxima, |row| row.kept());
    let a = block.forward_edited(x_q.view(), x_kv.view(), Some(mask), settings.scale_scores, keep, &edits);
    #[cfg(feature = "hf")]
    let a = a.map_err(|e| in_block(e, (place, layer)));
    let mut a = a?;
    let output = std::mem::take(&mut a.output);
    if let Some(row) = record {
        row.push_layer(block, a, mask, LayerInputs { x_q: Arc::clone(x_q), x_kv: Arc::clone(x_kv) });
    }
    Ok(output)
}

/// Records `block`'s weights for queries `x_q` over `x_kv` in `row`, without the block's
/// output: no V, ·V or W_O. The last layer of a stack whose output nothing reads.
pub(crate) fn attend_weights(
    block: &Arc<MultiHeadAttention>,
    x_q: &Arc<Array2<f32>>,
    x_kv: &Arc<Array2<f32>>,
    mask: &Arc<Mask>,
    settings: &Settings,
    at: (Place, usize),
    row: &mut RowAttention,
) -> Result<()> {
    let out = block.forward_weights(x_q.view(), x_kv.view(), Some(mask), settings.scale_scores, row.kept());
    // a toy model's weights are its seed's: none overflows
    #[cfg(feature = "hf")]
    let out = out.map_err(|e| in_block(e, at));
    #[cfg(not(feature = "hf"))]
    let _ = at;
    let out = out?;
    row.push_layer(block, out, mask, LayerInputs { x_q: Arc::clone(x_q), x_kv: Arc::clone(x_kv) });
    Ok(())
}

/// `e`, met in the attention block at `at` (its place and layer): a non-finite value there says
/// where ([`Error::NonFiniteAt`]); any other error is left as it is.
#[cfg(feature = "hf")]
pub(crate) fn in_block(e: Error, (place, layer): (Place, usize)) -> Error {
    match e {
        Error::NonFinite { what, index } => Error::NonFiniteAt { what, index, place: place.name().into(), layer },
        other => other,
    }
}
