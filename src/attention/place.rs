//! Where in a model attention is used: the three places of the paper, as the seeds' table
//! lists them. A place is not a mask: each place is trained with one mask, and headmap can run
//! it with another to show what the mask does (a "what-if", always labelled as such).
//!
//! | place          | Q from                           | K·V from             | trained with |
//! |----------------|----------------------------------|----------------------|--------------|
//! | `encoder_self` | the encoder input of the layer   | the same input       | padding      |
//! | `decoder_self` | the decoder input of the layer   | the same input       | causal       |
//! | `cross`        | the decoder after its first norm | the encoder's output | cross        |

use serde::{Deserialize, Serialize};

use super::mask::MaskKind;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", try_from = "String")]
pub enum Place {
    /// Encoder self-attention (BERT's only place).
    EncoderSelf,
    /// Decoder masked self-attention (GPT-2's only place).
    DecoderSelf,
    /// Decoder cross-attention: decoder queries over the encoder's keys.
    Cross,
}

impl Place {
    pub const ALL: [Place; 3] = [Place::EncoderSelf, Place::DecoderSelf, Place::Cross];

    /// The name used in URLs, requests, JSON and messages.
    pub fn name(self) -> &'static str {
        match self {
            Place::EncoderSelf => "encoder_self",
            Place::DecoderSelf => "decoder_self",
            Place::Cross => "cross",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        Place::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| Error::unknown("place", name, &Place::ALL.map(Place::name)))
    }

    /// The mask the paper puts here.
    pub fn paper_mask(self) -> MaskKind {
        match self {
            Place::EncoderSelf => MaskKind::Padding,
            Place::DecoderSelf => MaskKind::Causal,
            Place::Cross => MaskKind::Cross,
        }
    }

    /// The masks this place can run with: a self-attention place takes none, padding or
    /// causal; cross-attention takes its source-padding mask or none.
    pub fn masks(self) -> &'static [MaskKind] {
        match self {
            Place::EncoderSelf | Place::DecoderSelf => &[MaskKind::Padding, MaskKind::Causal, MaskKind::None],
            Place::Cross => &[MaskKind::Cross, MaskKind::None],
        }
    }

    /// Fails unless `mask` can run at this place.
    pub fn check(self, mask: MaskKind) -> Result<()> {
        if self.masks().contains(&mask) {
            return Ok(());
        }
        Err(Error::MaskNotForPlace {
            mask: mask.name().to_string(),
            place: self.name().to_string(),
            expected: self.masks().iter().map(|m| m.name().to_string()).collect(),
        })
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Requests name places by string; a wrong name gets the same message as everywhere else.
impl TryFrom<String> for Place {
    type Error = Error;

    fn try_from(name: String) -> Result<Self> {
        Self::parse(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_say_what_is_allowed() {
        for p in Place::ALL {
            assert_eq!(Place::parse(p.name()).unwrap(), p);
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert_eq!(
            Place::parse("decoder").unwrap_err().to_string(),
            "unknown place `decoder`: use encoder_self, decoder_self, cross"
        );
    }

    #[test]
    fn each_place_takes_its_own_masks() {
        for p in Place::ALL {
            assert!(p.check(p.paper_mask()).is_ok(), "{p}");
            assert!(p.check(MaskKind::None).is_ok(), "{p}: no mask, for comparison");
        }
        assert!(Place::EncoderSelf.check(MaskKind::Causal).is_ok(), "BERT made causal");
        assert_eq!(
            Place::Cross.check(MaskKind::Causal).unwrap_err().to_string(),
            "the causal mask does not apply to cross: use cross or none"
        );
        assert!(Place::DecoderSelf.check(MaskKind::Cross).is_err());
    }
}
