//! Heads a run turns off or gives another run's output ([`HeadEdits`]), named by place, layer
//! and head ([`HeadAt`]). A stack asks for the edits of the layer it is at; the block applies
//! them to the heads' outputs before W_O ([`HeadEdit`]), so every layer after sees the change.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use crate::attention::multi_head::HeadEdit;
use crate::attention::place::Place;
#[cfg(feature = "hf")]
use crate::error::{Error, Result};

/// One head of a model: its place, layer and head, each layer and head counted from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct HeadAt {
    pub place: Place,
    pub layer: usize,
    pub head: usize,
}

impl HeadAt {
    /// As the command line and links write it: `decoder_self:1.3`.
    pub fn name(&self) -> String {
        format!("{}:{}.{}", self.place.name(), self.layer, self.head)
    }

    #[cfg(feature = "hf")]
    /// `L.H`, comma-separated, each optionally after a place (`cross:0.2`); a head without a
    /// place is at `default`. Spaces around the parts are allowed; an empty list is none.
    pub fn parse_list(spec: &str, default: Place) -> Result<Vec<HeadAt>> {
        spec.split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                let bad = || Error::BadHeadSpec { spec: part.to_string() };
                let (place, rest) = match part.split_once(':') {
                    Some((place, rest)) => (Place::parse(place.trim())?, rest.trim()),
                    None => (default, part),
                };
                let (layer, head) = rest.split_once('.').ok_or_else(bad)?;
                let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
                Ok(HeadAt { place, layer: number(layer)?, head: number(head)? })
            })
            .collect()
    }
}

/// How heads are turned off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ablation {
    /// The head writes zeros.
    #[default]
    Zero,
    /// The head writes its mean output over the batch's real tokens, at every position.
    Mean,
}

/// What a run does to some heads' outputs; cheap to clone (the settings of every batch row
/// share one list).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeadEdits(Arc<Vec<(HeadAt, HeadEdit)>>);

impl HeadEdits {
    pub fn new(edits: Vec<(HeadAt, HeadEdit)>) -> Self {
        HeadEdits(Arc::new(edits))
    }

    /// Zero-ablation of `heads`.
    pub fn zero(heads: &[HeadAt]) -> Self {
        HeadEdits::new(heads.iter().map(|&at| (at, HeadEdit::Zero)).collect())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How the heads are turned off: by their mean output if any is given a constant.
    pub fn ablation(&self) -> Ablation {
        match self.0.iter().any(|(_, e)| matches!(e, HeadEdit::Constant(_))) {
            true => Ablation::Mean,
            false => Ablation::Zero,
        }
    }

    /// The heads edited, in the order given.
    pub fn heads(&self) -> impl Iterator<Item = HeadAt> + '_ {
        self.0.iter().map(|(at, _)| *at)
    }

    /// The edits of one layer at one place: each head with what it writes instead.
    pub fn at(&self, place: Place, layer: usize) -> Vec<(usize, &HeadEdit)> {
        self.0.iter().filter(|(at, _)| at.place == place && at.layer == layer).map(|(at, e)| (at.head, e)).collect()
    }
}

#[cfg(all(test, feature = "hf"))]
mod tests {
    use super::*;

    #[test]
    fn head_lists_read_as_the_command_line_writes_them() {
        let heads = HeadAt::parse_list("1.0, cross:0.3,encoder_self:2.1", Place::DecoderSelf).unwrap();
        let at = |place, layer, head| HeadAt { place, layer, head };
        assert_eq!(heads, [at(Place::DecoderSelf, 1, 0), at(Place::Cross, 0, 3), at(Place::EncoderSelf, 2, 1)]);
        assert_eq!(heads[1].name(), "cross:0.3");
        assert_eq!(HeadAt::parse_list(" ", Place::EncoderSelf).unwrap(), []);
        for bad in ["1", "1.x", "a.b", "-1.0", "1.0.2"] {
            assert_eq!(
                HeadAt::parse_list(bad, Place::EncoderSelf),
                Err(Error::BadHeadSpec { spec: bad.to_string() }),
                "{bad}"
            );
        }
        assert!(matches!(HeadAt::parse_list("middle:1.0", Place::EncoderSelf), Err(Error::UnknownName { .. })));
    }

    #[test]
    fn a_layer_gets_its_own_edits() {
        let edits = HeadEdits::zero(&HeadAt::parse_list("1.0,1.3,0.3", Place::DecoderSelf).unwrap());
        let heads = |layer| edits.at(Place::DecoderSelf, layer).into_iter().map(|(h, _)| h).collect::<Vec<_>>();
        assert_eq!(heads(1), [0, 3]);
        assert_eq!(heads(0), [3]);
        assert!(edits.at(Place::EncoderSelf, 1).is_empty());
    }
}
